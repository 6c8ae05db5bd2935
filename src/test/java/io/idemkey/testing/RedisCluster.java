package io.idemkey.testing;

import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Protocol;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;

/**
 * A Redis Cluster on loopback: {@code masters} masters with one replica each, every node a real
 * {@code redis-server --cluster-enabled yes} process on free ports (its bus port too), joined by
 * {@code redis-cli --cluster create}. A few seconds to start; share one per test class.
 */
public final class RedisCluster implements AutoCloseable {

    private final List<RedisServer> nodes = new ArrayList<>();
    private final Duration nodeTimeout;
    /** The nodes' program ({@link RedisServer#startProgram}), or null: the tests' default. */
    private final String program;

    private RedisCluster(Duration nodeTimeout, String program) {
        this.nodeTimeout = nodeTimeout;
        this.program = program;
    }

    /**
     * A cluster node on free ports; started again on others if one was taken meanwhile (a port is
     * free when asked for, and this machine's other processes may take it before the node binds it).
     */
    private RedisServer startNode() {
        for (int attempt = 1; ; attempt++) {
            try {
                String[] arguments = {"--cluster-enabled", "yes", "--cluster-port", Integer.toString(FreePort.next()),
                        "--cluster-node-timeout", Long.toString(nodeTimeout.toMillis())};
                return program == null ? RedisServer.start(arguments) : RedisServer.startProgram(program, arguments);
            } catch (IllegalStateException exited) {
                if (attempt == 3) {
                    throw exited;
                }
            }
        }
    }

    /**
     * Adds an empty master to the cluster (as a scale-out begins: it serves no slot yet, so a client
     * that asked for the slots does not know it) and waits until every node knows it.
     */
    public RedisServer addMaster() {
        RedisServer node = startNode();
        nodes.add(node);
        String busPort;
        try (Jedis jedis = node.client()) {
            busPort = jedis.configGet("cluster-port").get("cluster-port");
        }
        try (Jedis jedis = nodes.get(0).client()) {
            jedis.sendCommand(Protocol.Command.CLUSTER, "MEET", "127.0.0.1", Integer.toString(node.port()), busPort);
        }
        await().atMost(Duration.ofSeconds(30)).until(this::isUp);
        return node;
    }

    public static RedisCluster start(int masters) {
        return start(masters, Duration.ofSeconds(2));
    }

    /**
     * A cluster whose nodes count a node that does not answer for {@code nodeTimeout} as failing
     * (its replica takes over soon after): 2 s by default; a long one keeps a frozen master in place.
     */
    public static RedisCluster start(int masters, Duration nodeTimeout) {
        return start(masters, nodeTimeout, null);
    }

    /** A cluster of nodes that run {@code program} ({@link RedisServer#VALKEY}, {@link RedisServer#redis8()}: {@code SET ... IFEQ}), as {@link #start(int)}. */
    public static RedisCluster start(int masters, String program) {
        return start(masters, Duration.ofSeconds(2), program);
    }

    private static RedisCluster start(int masters, Duration nodeTimeout, String program) {
        RedisCluster cluster = new RedisCluster(nodeTimeout, program);
        try {
            for (int i = 0; i < masters * 2; i++) {
                cluster.nodes.add(cluster.startNode());
            }
            List<String> create = new ArrayList<>(List.of("redis-cli", "--cluster", "create"));
            cluster.nodes.forEach(node -> create.add("127.0.0.1:" + node.port()));
            create.addAll(List.of("--cluster-replicas", "1", "--cluster-yes"));
            run(create);
            await().atMost(Duration.ofSeconds(30)).until(() -> cluster.isUp() && cluster.replicasLinked(masters)
                    && cluster.everyNodeSeesTheReplicas(masters));
            return cluster;
        } catch (RuntimeException | Error e) {
            cluster.close();
            throw e;
        }
    }

    /** Every node says the cluster is ok and sees all of its nodes. */
    public boolean isUp() {
        for (RedisServer node : nodes) {
            try (Jedis jedis = node.client()) {
                String info = jedis.clusterInfo();
                if (!info.contains("cluster_state:ok") || !info.contains("cluster_known_nodes:" + nodes.size())) {
                    return false;
                }
            }
        }
        return true;
    }

    /** {@code masters} replicas have their replication link up: they acknowledge what their master writes. */
    private boolean replicasLinked(int masters) {
        int linked = 0;
        for (RedisServer node : nodes) {
            try (Jedis jedis = node.client()) {
                if (jedis.info("replication").contains("master_link_status:up")) {
                    linked++;
                }
            }
        }
        return linked == masters;
    }

    /**
     * Every node lists each replica under its master. A replica's link can be up before gossip has
     * told every node whom it replicates (with a full sync that starts at once, it often is), and
     * {@link #replicasOf} asks one node: a test would find a master without replicas.
     */
    private boolean everyNodeSeesTheReplicas(int masters) {
        for (RedisServer node : nodes) {
            try (Jedis jedis = node.client()) {
                long replicas = jedis.clusterNodes().lines().map(line -> line.split(" "))
                        .filter(fields -> fields.length > 3 && fields[2].contains("slave") && !fields[3].equals("-"))
                        .count();
                if (replicas != masters) {
                    return false;
                }
            }
        }
        return true;
    }

    /** The seed nodes, as {@code idempotency.redis.nodes} lists them. */
    public String nodesProperty() {
        return String.join(",", nodes.stream().map(node -> "127.0.0.1:" + node.port()).toList());
    }

    public List<HostAndPort> seeds() {
        return nodes.stream().map(node -> new HostAndPort("127.0.0.1", node.port())).toList();
    }

    public List<RedisServer> nodes() {
        return List.copyOf(nodes);
    }

    /** The nodes that are masters right now. */
    public List<RedisServer> masters() {
        List<RedisServer> masters = new ArrayList<>();
        for (RedisServer node : nodes) {
            if (node.answers()) {
                try (Jedis jedis = node.client()) {
                    if (jedis.info("replication").contains("role:master")) {
                        masters.add(node);
                    }
                }
            }
        }
        return masters;
    }

    /** The master that serves {@code slot} now, as the first running node sees the cluster. */
    public RedisServer masterOf(int slot) {
        for (String line : clusterNodes()) {
            String[] fields = line.split(" ");
            if (!fields[2].contains("master") || fields[2].contains("fail")) {
                continue;
            }
            for (int i = 8; i < fields.length; i++) {
                if (fields[i].startsWith("[")) {
                    continue; // a slot being migrated or imported
                }
                String[] range = fields[i].split("-");
                int from = Integer.parseInt(range[0]);
                int to = range.length > 1 ? Integer.parseInt(range[1]) : from;
                if (slot >= from && slot <= to) {
                    int port = Integer.parseInt(fields[1].substring(fields[1].indexOf(':') + 1, fields[1].indexOf('@')));
                    return nodes.stream().filter(node -> node.port() == port).findFirst().orElseThrow();
                }
            }
        }
        throw new IllegalStateException("no master serves slot " + slot);
    }

    private List<String> clusterNodes() {
        RedisServer running = nodes.stream().filter(RedisServer::answers).findFirst().orElseThrow();
        try (Jedis jedis = running.client()) {
            return List.of(jedis.clusterNodes().split("\n"));
        }
    }

    /**
     * Moves {@code slot} from its master to {@code target} as {@code redis-cli --cluster reshard}
     * does: IMPORTING on the target, MIGRATING on the source, MIGRATE key by key (pausing
     * {@code pause} between keys, so that clients meet the slot half moved: ASK), then the slot
     * assigned to the target on every master (MOVED from then on).
     */
    public void migrate(int slot, RedisServer target, Duration pause) {
        Migration migration = beginMigration(slot, target);
        while (migration.moveKeys(1) > 0) {
            sleep(pause);
        }
        migration.finish();
    }

    /** Starts moving {@code slot} to {@code target}: IMPORTING and MIGRATING set, no key moved yet. */
    public Migration beginMigration(int slot, RedisServer target) {
        RedisServer source = masterOf(slot);
        try (Jedis from = source.client(); Jedis to = target.client()) {
            to.clusterSetSlotImporting(slot, id(source));
            from.clusterSetSlotMigrating(slot, id(target));
        }
        return new Migration(slot, source, target);
    }

    /** A slot on its way from one master to another. */
    public final class Migration {
        private final int slot;
        private final RedisServer source;
        private final RedisServer target;

        private Migration(int slot, RedisServer source, RedisServer target) {
            this.slot = slot;
            this.source = source;
            this.target = target;
        }

        /** Moves up to {@code count} of the slot's keys (clients asking for them now get ASK); returns how many moved. */
        public int moveKeys(int count) {
            try (Jedis from = source.client()) {
                List<String> keys = from.clusterGetKeysInSlot(slot, count);
                for (String key : keys) {
                    from.migrate("127.0.0.1", target.port(), key, 0, 5_000);
                }
                return keys.size();
            }
        }

        /** Moves the rest and assigns the slot to the target on every master (MOVED from then on). */
        public void finish() {
            while (moveKeys(100) > 0) {
                // until the slot is empty on the source
            }
            String targetId = id(target);
            try (Jedis from = source.client(); Jedis to = target.client()) {
                to.clusterSetSlotNode(slot, targetId);
                from.clusterSetSlotNode(slot, targetId);
            }
            for (RedisServer master : masters()) {
                try (Jedis jedis = master.client()) {
                    jedis.clusterSetSlotNode(slot, targetId);
                }
            }
        }
    }

    /**
     * Restarts {@code node} on its port at once (its data gone, its cluster identity kept), faster
     * than the cluster fails it over, and waits until every node says the cluster is ok and the
     * node's replicas have synced with it again: the clients' pooled connections to it are now broken.
     */
    public void restartWithoutFailover(RedisServer node) {
        List<RedisServer> replicas = replicasOf(node);
        node.restart();
        await("every node says the cluster is ok, and the restarted master's replicas synced with it")
                .atMost(Duration.ofSeconds(30)).until(() -> nodes.stream().filter(RedisServer::answers)
                        .allMatch(RedisCluster::clusterOk) && replicas.stream().allMatch(replica -> syncedWith(replica, node)));
    }

    /**
     * {@code replica} has synced with {@code master} as it runs now: its link is up and it follows the
     * master's current replication id (a restarted master has a new one), so a completion's WAIT can
     * count it. Or it is a master itself: the cluster failed the restarted one over after all (a
     * restart slower than the node timeout), and there is no sync to wait for.
     */
    private static boolean syncedWith(RedisServer replica, RedisServer master) {
        String id = replicationId(master);
        try (Jedis jedis = replica.client()) {
            String info = jedis.info("replication");
            return info.contains("role:master")
                    || info.contains("master_link_status:up") && id.equals(replicationId(info));
        }
    }

    private static String replicationId(RedisServer node) {
        try (Jedis jedis = node.client()) {
            return replicationId(jedis.info("replication"));
        }
    }

    private static String replicationId(String replicationInfo) {
        return replicationInfo.lines().filter(line -> line.startsWith("master_replid:")).findFirst().orElse("").strip();
    }

    /**
     * Kills {@code master} (no shutdown, no save) and waits until one of its replicas has taken
     * over and every running node says the cluster is ok; returns the promoted replica.
     */
    public RedisServer killAndAwaitFailover(RedisServer master) {
        List<RedisServer> replicas = replicasOf(master);
        master.stop();
        return awaitFailover(replicas);
    }

    /**
     * Makes {@code master} vanish without a TCP reset ({@link RedisServer#vanish}) and waits until
     * one of its replicas has taken over and every node that answers says the cluster is ok;
     * returns the promoted replica. The vanished master stays frozen until the test resumes it.
     */
    public RedisServer vanishAndAwaitFailover(RedisServer master) {
        List<RedisServer> replicas = replicasOf(master);
        master.vanish();
        return awaitFailover(replicas);
    }

    /**
     * Waits until one of {@code replicas} (a master's, taken before it failed) has taken over and
     * every node that answers says the cluster is ok; returns the promoted replica.
     */
    public RedisServer awaitFailover(List<RedisServer> replicas) {
        await().atMost(Duration.ofSeconds(60)).until(() -> replicas.stream().anyMatch(r -> role(r).equals("master"))
                && nodes.stream().filter(RedisServer::answers).allMatch(RedisCluster::clusterOk));
        return replicas.stream().filter(r -> role(r).equals("master")).findFirst().orElseThrow();
    }

    /** Waits until every running replica has processed all its master has written so far. */
    public void awaitReplicasCaughtUp() {
        for (RedisServer master : masters()) {
            master.awaitReplicated(replicasOf(master));
        }
    }

    /** The running replicas of {@code master}, as the cluster sees them. */
    public List<RedisServer> replicasOf(RedisServer master) {
        String id = id(master);
        List<RedisServer> replicas = new ArrayList<>();
        for (String line : clusterNodes()) {
            String[] fields = line.split(" ");
            if (fields[3].equals(id) && !fields[2].contains("fail")) {
                int port = Integer.parseInt(fields[1].substring(fields[1].indexOf(':') + 1, fields[1].indexOf('@')));
                nodes.stream().filter(node -> node.port() == port && node.answers()).forEach(replicas::add);
            }
        }
        return replicas;
    }

    private static String role(RedisServer node) {
        if (!node.answers()) {
            return "dead";
        }
        try (Jedis jedis = node.client()) {
            return jedis.info("replication").contains("role:master") ? "master" : "replica";
        }
    }

    private static boolean clusterOk(RedisServer node) {
        try (Jedis jedis = node.client()) {
            return jedis.clusterInfo().contains("cluster_state:ok");
        }
    }

    private static String id(RedisServer node) {
        try (Jedis jedis = node.client()) {
            return jedis.clusterMyId();
        }
    }

    private static void sleep(Duration pause) {
        try {
            Thread.sleep(pause.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        nodes.forEach(RedisServer::stop);
    }

    private static void run(List<String> command) {
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(process.getInputStream().readAllBytes());
            if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed:\n" + output);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run redis-cli (is it installed?)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
