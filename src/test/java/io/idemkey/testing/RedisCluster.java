package io.idemkey.testing;

import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;

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

    private RedisCluster() {
    }

    public static RedisCluster start(int masters) {
        RedisCluster cluster = new RedisCluster();
        try {
            for (int i = 0; i < masters * 2; i++) {
                cluster.nodes.add(RedisServer.start("--cluster-enabled", "yes",
                        "--cluster-port", Integer.toString(FreePort.next()),
                        "--cluster-node-timeout", "2000"));
            }
            List<String> create = new ArrayList<>(List.of("redis-cli", "--cluster", "create"));
            cluster.nodes.forEach(node -> create.add("127.0.0.1:" + node.port()));
            create.addAll(List.of("--cluster-replicas", "1", "--cluster-yes"));
            run(create);
            await().atMost(Duration.ofSeconds(30)).until(cluster::isUp);
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
            if (node.isRunning()) {
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
        RedisServer running = nodes.stream().filter(RedisServer::isRunning).findFirst().orElseThrow();
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
        RedisServer source = masterOf(slot);
        String sourceId = id(source);
        String targetId = id(target);
        try (Jedis from = source.client(); Jedis to = target.client()) {
            to.clusterSetSlotImporting(slot, sourceId);
            from.clusterSetSlotMigrating(slot, targetId);
            for (List<String> keys = from.clusterGetKeysInSlot(slot, 1); !keys.isEmpty();
                 keys = from.clusterGetKeysInSlot(slot, 1)) {
                from.migrate("127.0.0.1", target.port(), keys.get(0), 0, 5_000);
                sleep(pause);
            }
            to.clusterSetSlotNode(slot, targetId);
            from.clusterSetSlotNode(slot, targetId);
        }
        for (RedisServer master : masters()) {
            try (Jedis jedis = master.client()) {
                jedis.clusterSetSlotNode(slot, targetId);
            }
        }
    }

    /**
     * Kills {@code master} (no shutdown, no save) and waits until one of its replicas has taken
     * over and every running node says the cluster is ok; returns the promoted replica.
     */
    public RedisServer killAndAwaitFailover(RedisServer master) {
        String id = id(master);
        List<RedisServer> replicas = new ArrayList<>();
        for (String line : clusterNodes()) {
            String[] fields = line.split(" ");
            if (fields[3].equals(id)) {
                int port = Integer.parseInt(fields[1].substring(fields[1].indexOf(':') + 1, fields[1].indexOf('@')));
                nodes.stream().filter(node -> node.port() == port).forEach(replicas::add);
            }
        }
        master.stop();
        await().atMost(Duration.ofSeconds(60)).until(() -> replicas.stream().anyMatch(r -> role(r).equals("master"))
                && nodes.stream().filter(RedisServer::isRunning).allMatch(RedisCluster::clusterOk));
        return replicas.stream().filter(r -> role(r).equals("master")).findFirst().orElseThrow();
    }

    /** Waits until every running replica has processed all its master has written so far. */
    public void awaitReplicasCaughtUp() {
        for (RedisServer master : masters()) {
            long offset = master.replicationOffset();
            String id = id(master);
            for (String line : clusterNodes()) {
                String[] fields = line.split(" ");
                if (fields[3].equals(id) && !fields[2].contains("fail")) {
                    int port = Integer.parseInt(fields[1].substring(fields[1].indexOf(':') + 1, fields[1].indexOf('@')));
                    RedisServer replica = nodes.stream().filter(node -> node.port() == port).findFirst().orElseThrow();
                    await().atMost(Duration.ofSeconds(10)).until(() -> replica.replicationOffset() >= offset);
                }
            }
        }
    }

    private static String role(RedisServer node) {
        if (!node.isRunning()) {
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
