package io.idemkey.chaos;

import io.idemkey.it.ServerProcess;
import io.idemkey.testing.MariaDbServer;
import io.idemkey.testing.PostgresServer;
import io.idemkey.testing.RedisCluster;
import io.idemkey.testing.RedisSentinels;
import io.idemkey.testing.RedisRecords;
import io.idemkey.testing.RedisServer;
import io.idemkey.testing.TestDatabase;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;

import static org.awaitility.Awaitility.await;

/** The store the chaos run's servers share, and what the run does to it. */
interface ChaosStore extends AutoCloseable {

    /**
     * {@code redis} (the default), {@code jdbc}, or Redis scaled out: {@code redis-cluster} and
     * {@code redis-sentinel} (also {@code -Dchaos.redis=cluster|sentinel} with {@code redis}).
     */
    static ChaosStore start(String name) {
        String redis = System.getProperty("chaos.redis", "standalone");
        String store = name.equals("redis") && !redis.equals("standalone") ? "redis-" + redis : name;
        return switch (store) {
            case "redis" -> new OnRedis(RedisServer.start("--appendonly", "yes", "--appendfsync", "always"));
            case "redis-cluster" -> new OnCluster(RedisCluster.start(3));
            case "redis-sentinel" -> new OnSentinels(RedisSentinels.start());
            case "jdbc" -> new OnDatabase(PostgresServer.start());
            case "mariadb" -> new OnDatabase(MariaDbServer.start());
            default -> throw new IllegalArgumentException("chaos.store must be redis, redis-cluster, redis-sentinel, jdbc"
                    + " (PostgreSQL) or mariadb, not " + store);
        };
    }

    /**
     * A Redis of any kind, shared by a Payara Micro whose store calls are coalesced
     * ({@code idempotency.redis.coalesce=true}: every call that is ready at once in one pipeline) and
     * an Open Liberty sending each call on its own: both call paths under the same chaos, on the
     * same records, as during a rolling change of the setting.
     */
    interface OnAnyRedis extends ChaosStore {

        @Override
        default Map<String, String> serverProperties(ServerProcess.Kind kind) {
            return kind == ServerProcess.Kind.PAYARA ? Map.of("idempotency.redis.coalesce", "true") : Map.of();
        }

        @Override
        default ServerProcess startServer(ServerProcess.Kind kind, Path war, int port) {
            return onItsPath(kind, ChaosStore.super.startServer(kind, war, port));
        }

        @Override
        default ServerProcess startSample(ServerProcess.Kind kind, Path war, int port, Map<String, String> systemProperties) {
            return onItsPath(kind, ChaosStore.super.startSample(kind, war, port, systemProperties));
        }

        /** The server, once its start line says the path it is on (so a setting it ignored fails the run). */
        private static ServerProcess onItsPath(ServerProcess.Kind kind, ServerProcess server) {
            boolean coalesced = server.log().contains("(calls coalesced)");
            if (coalesced != (kind == ServerProcess.Kind.PAYARA)) {
                server.close();
                throw new IllegalStateException("the " + kind + " of the chaos run should " + (coalesced ? "not " : "")
                        + "coalesce its calls; its log says otherwise");
            }
            return server;
        }
    }

    /** Each record on the master of its slot and a replica; completions wait for that replica. */
    record OnCluster(RedisCluster cluster) implements OnAnyRedis {

        @Override
        public String description() {
            return "a Redis Cluster (3 masters, 3 replicas), wait-replicas=1; Payara Micro's calls coalesced";
        }

        @Override
        public Map<String, String> config() {
            return Map.of("idempotency.redis.mode", "cluster", "idempotency.redis.nodes", cluster.nodesProperty(),
                    "idempotency.redis.wait-replicas", "1", "idempotency.redis.wait-timeout-ms", "200");
        }

        @Override
        public String restartEvent() {
            return "a master killed, its replica promoted, the old master back as a replica";
        }

        /** Kills a master (the failover promotes its replica), then brings it back: it rejoins as a replica. */
        @Override
        public void restart() {
            RedisServer victim = cluster.masterOf(ThreadLocalRandom.current().nextInt(16384));
            cluster.killAndAwaitFailover(victim);
            victim.restart();
            await().atMost(Duration.ofSeconds(60)).until(cluster::isUp);
        }

        @Override
        public int[] scan() {
            int[] counts = new int[2];
            for (RedisServer master : cluster.masters()) {
                int[] ofMaster = ChaosStore.scan(master);
                counts[0] += ofMaster[0];
                counts[1] += ofMaster[1];
            }
            return counts;
        }

        @Override
        public void close() {
            cluster.close();
        }
    }

    /** One master, two replicas, three sentinels; completions wait for one replica. */
    record OnSentinels(RedisSentinels sentinels) implements OnAnyRedis {

        @Override
        public String description() {
            return "Redis with Sentinel (1 master, 2 replicas, 3 sentinels), wait-replicas=1; Payara Micro's calls coalesced";
        }

        @Override
        public Map<String, String> config() {
            String nodes = String.join(",", sentinels.sentinels().stream().map(n -> n.getHost() + ":" + n.getPort()).toList());
            return Map.of("idempotency.redis.mode", "sentinel", "idempotency.redis.nodes", nodes,
                    "idempotency.redis.sentinel.master", RedisSentinels.MASTER_NAME,
                    "idempotency.redis.wait-replicas", "1", "idempotency.redis.wait-timeout-ms", "200");
        }

        @Override
        public String restartEvent() {
            return "the master killed, a replica promoted, the old master back as a replica";
        }

        /** Kills the master (a replica is promoted), then brings it back: the sentinels make it a replica. */
        @Override
        public void restart() {
            RedisServer old = sentinels.master();
            sentinels.killMasterAndAwaitFailover();
            old.restart();
            await().atMost(Duration.ofSeconds(60)).until(() -> sentinels.replicas().size() == 2
                    && sentinels.replicas().stream().allMatch(OnSentinels::linkUp));
        }

        private static boolean linkUp(RedisServer replica) {
            try (Jedis jedis = replica.client()) {
                return jedis.info("replication").contains("master_link_status:up");
            }
        }

        @Override
        public int[] scan() {
            return ChaosStore.scan(sentinels.master());
        }

        @Override
        public void close() {
            sentinels.close();
        }
    }

    /** {records without an expiry, records in progress} on one Redis (a master). */
    static int[] scan(RedisServer redis) {
        int withoutTtl = 0;
        int inProgress = 0;
        try (Jedis jedis = redis.client()) {
            String cursor = ScanParams.SCAN_POINTER_START;
            do {
                ScanResult<String> page = jedis.scan(cursor, new ScanParams().count(1000));
                for (String key : page.getResult()) {
                    if (jedis.pttl(key) < 0) {
                        withoutTtl++;
                    }
                    if ("P".equals(RedisRecords.state(jedis, key))) {
                        inProgress++;
                    }
                }
                cursor = page.getCursor();
            } while (!cursor.equals(ScanParams.SCAN_POINTER_START));
        }
        return new int[] {withoutTtl, inProgress};
    }

    /** For the report: {@code one Redis}. */
    String description();

    /** The application's configuration to use it. */
    Map<String, String> config();

    /**
     * Two servers started at once, {@code first} on another thread: when one fails to start (a
     * server refused for its call path, {@link OnAnyRedis}), the other is closed once up, and the
     * failure thrown.
     */
    static ServerProcess[] startBoth(Supplier<ServerProcess> first, Supplier<ServerProcess> second) throws Exception {
        CompletableFuture<ServerProcess> started = CompletableFuture.supplyAsync(first);
        ServerProcess other;
        try {
            other = second.get();
        } catch (RuntimeException | Error e) {
            try {
                started.get().close();
            } catch (Exception alsoFailed) {
                e.addSuppressed(alsoFailed);
            }
            throw e;
        }
        try {
            return new ServerProcess[] {started.get(), other};
        } catch (Exception e) {
            other.close();
            throw e;
        }
    }

    /** What a server of this kind is started with besides the application's configuration (system properties). */
    default Map<String, String> serverProperties(ServerProcess.Kind kind) {
        return Map.of();
    }

    /** A server of this kind for the test application, with what it needs to reach the store (Redis: nothing more). */
    default ServerProcess startServer(ServerProcess.Kind kind, Path war, int port) {
        return ServerProcess.startForTests(kind, List.of(war), port, serverProperties(kind));
    }

    /** A server of this kind for the sample service, configured with these system properties and the store. */
    default ServerProcess startSample(ServerProcess.Kind kind, Path war, int port, Map<String, String> systemProperties) {
        Map<String, String> properties = new HashMap<>(systemProperties);
        properties.putAll(serverProperties(kind));
        return ServerProcess.start(kind, List.of(war), port, properties);
    }

    /** Kills the store and starts it again, with its data. */
    void restart();

    /** What {@link #restart} does, for the run's events. */
    default String restartEvent() {
        return "the store killed and restarted";
    }

    /** {records without an expiry, records still in progress}. */
    int[] scan();

    @Override
    void close();

    /** One Redis with its append-only file on, as production Redis should run. */
    record OnRedis(RedisServer redis) implements OnAnyRedis {

        @Override
        public String description() {
            return "one Redis; Payara Micro's calls coalesced";
        }

        @Override
        public Map<String, String> config() {
            return Map.of("idempotency.redis.url", redis.url());
        }

        @Override
        public void restart() {
            redis.restart(); // kill -9, then the same port, the append-only file read back
        }

        @Override
        public int[] scan() {
            return ChaosStore.scan(redis);
        }

        @Override
        public void close() {
            redis.close();
        }
    }

    /** One PostgreSQL or MariaDB, reached through each server's own DataSource. */
    record OnDatabase(TestDatabase database) implements ChaosStore {

        @Override
        public String description() {
            return "one " + database.name() + " (idempotency.store=jdbc)";
        }

        @Override
        public Map<String, String> config() {
            return Map.of("idempotency.store", "jdbc", "idempotency.jdbc.datasource", "jdbc/idemkey");
        }

        @Override
        public ServerProcess startServer(ServerProcess.Kind kind, Path war, int port) {
            return ServerProcess.startForTestsWithDatabase(kind, List.of(war), port, database);
        }

        @Override
        public ServerProcess startSample(ServerProcess.Kind kind, Path war, int port, Map<String, String> systemProperties) {
            return ServerProcess.startWithDatabase(kind, List.of(war), port, systemProperties, database, List.of());
        }

        @Override
        public void restart() {
            database.restart(); // killed at once (connections drop), then the same port, the data kept
        }

        /** Rows never lack an expiry (the column is NOT NULL); in progress: not completed, not yet expired. */
        @Override
        public int[] scan() {
            String now = database.name().equals("MariaDB") ? "UTC_TIMESTAMP(6)" : "now()";
            return new int[] {(int) database.queryLong("SELECT count(*) FROM idempotency_keys WHERE expires_at IS NULL"),
                    (int) database.queryLong("SELECT count(*) FROM idempotency_keys WHERE NOT completed AND expires_at > " + now)};
        }

        @Override
        public void close() {
            database.close();
        }
    }
}
