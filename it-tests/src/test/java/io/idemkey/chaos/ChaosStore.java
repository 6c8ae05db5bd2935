package io.idemkey.chaos;

import io.idemkey.it.ServerProcess;
import io.idemkey.testing.PostgresServer;
import io.idemkey.testing.RedisRecords;
import io.idemkey.testing.RedisServer;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** The store the chaos run's servers share, and what the run does to it. */
interface ChaosStore extends AutoCloseable {

    /** {@code redis} (the default) or {@code jdbc}. */
    static ChaosStore start(String name) {
        return switch (name) {
            case "redis" -> new OnRedis(RedisServer.start("--appendonly", "yes", "--appendfsync", "always"));
            case "jdbc" -> new OnPostgres(PostgresServer.start());
            default -> throw new IllegalArgumentException("chaos.store must be redis or jdbc, not " + name);
        };
    }

    /** For the report: {@code one Redis}. */
    String description();

    /** The application's configuration to use it. */
    Map<String, String> config();

    /** A server of this kind for the test application, with what it needs to reach the store. */
    ServerProcess startServer(ServerProcess.Kind kind, Path war, int port);

    /** A server of this kind for the sample service, configured with these system properties and the store. */
    ServerProcess startSample(ServerProcess.Kind kind, Path war, int port, Map<String, String> systemProperties);

    /** Kills the store and starts it again, with its data. */
    void restart();

    /** {records without an expiry, records still in progress}. */
    int[] scan();

    @Override
    void close();

    /** One Redis with its append-only file on, as production Redis should run. */
    record OnRedis(RedisServer redis) implements ChaosStore {

        @Override
        public String description() {
            return "one Redis";
        }

        @Override
        public Map<String, String> config() {
            return Map.of("idempotency.redis.url", redis.url());
        }

        @Override
        public ServerProcess startServer(ServerProcess.Kind kind, Path war, int port) {
            return ServerProcess.startForTests(kind, List.of(war), port);
        }

        @Override
        public ServerProcess startSample(ServerProcess.Kind kind, Path war, int port, Map<String, String> systemProperties) {
            return ServerProcess.start(kind, List.of(war), port, systemProperties);
        }

        @Override
        public void restart() {
            redis.restart(); // kill -9, then the same port, the append-only file read back
        }

        @Override
        public int[] scan() {
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

        @Override
        public void close() {
            redis.close();
        }
    }

    /** One PostgreSQL, reached through each server's own DataSource. */
    record OnPostgres(PostgresServer postgres) implements ChaosStore {

        @Override
        public String description() {
            return "one PostgreSQL (idempotency.store=jdbc)";
        }

        @Override
        public Map<String, String> config() {
            return Map.of("idempotency.store", "jdbc", "idempotency.jdbc.datasource", "jdbc/idemkey");
        }

        @Override
        public ServerProcess startServer(ServerProcess.Kind kind, Path war, int port) {
            return ServerProcess.startForTestsWithPostgres(kind, List.of(war), port, postgres.port());
        }

        @Override
        public ServerProcess startSample(ServerProcess.Kind kind, Path war, int port, Map<String, String> systemProperties) {
            return ServerProcess.startWithPostgres(kind, List.of(war), port, systemProperties, postgres.port(), List.of());
        }

        @Override
        public void restart() {
            postgres.restart(); // immediate shutdown (connections drop), then the same port, the data kept
        }

        /** Rows never lack an expiry (the column is NOT NULL); in progress: not completed, not yet expired. */
        @Override
        public int[] scan() {
            return new int[] {(int) postgres.queryLong("SELECT count(*) FROM idempotency_keys WHERE expires_at IS NULL"),
                    (int) postgres.queryLong("SELECT count(*) FROM idempotency_keys WHERE NOT completed AND expires_at > now()")};
        }

        @Override
        public void close() {
            postgres.close();
        }
    }
}
