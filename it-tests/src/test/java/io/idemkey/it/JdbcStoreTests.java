package io.idemkey.it;

import io.idemkey.core.RecordKey;
import io.idemkey.testing.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;

import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The HTTP contract with {@code idempotency.store=jdbc}: the whole status table and seed 002's seven
 * scenarios, on a server of this run's kind with the DataSource configured the way its users
 * configure one, and a private database the test can stop: PostgreSQL ({@link JdbcStoreIT}) or
 * MariaDB ({@link MariaDbStoreIT}). Then what is the JDBC store's own: the table created at
 * deployment, records as rows, expired rows cleaned up, and an outage that behaves as a Redis outage
 * does (fail-closed 503, fail-open runs, recovery without a restart).
 */
@Execution(ExecutionMode.CONCURRENT) // on Open Liberty, beside the classes on the adapter's server
@ResourceLock(ServerProcess.SERVERS_OF_THEIR_OWN) // one at a time (it-tests/pom.xml)
abstract class JdbcStoreTests {

    /** The store's configuration in every application here. */
    static final Map<String, String> JDBC = Map.of("idempotency.store", "jdbc",
            "idempotency.jdbc.datasource", "jdbc/idemkey", "idempotency.jdbc.timeout-seconds", "1",
            "idempotency.jdbc.cleanup-interval-seconds", "1", "idempotency.jdbc.cleanup-batch-size", "100");

    private static TestDatabase database;
    private static ServerProcess server;
    private Http http;

    /** Starts this run's server on {@code started}, with the test application deployed (the subclass's {@code @BeforeAll}). */
    static void startOn(TestDatabase started) throws Exception {
        database = started;
        DatabaseStatements.enable(database);
        Path directory = Files.createTempDirectory("idemkey-jdbc");
        // built as a JDBC-only application builds its WAR: without Jedis (docs/dependencies.md)
        Path war = Deployments.export(directory, StatusTableTests.deploymentWithoutJedis(JDBC));
        Map<String, String> rateLimited = new HashMap<>(JDBC);
        rateLimited.put("idempotency.rate-limit.per-key", "5/30s");
        rateLimited.put("idempotency.jdbc.table", "rate_limited_keys"); // its own: the other's cleanup counts alone
        rateLimited.put("idempotency.admin.enabled", "true"); // and the admin API (AdminApiIT: on Redis)
        rateLimited.put("idempotency.admin.role", "idempotency-ops");
        Path limitedWar = Deployments.export(directory, Deployments.guardedApp("jdbc-rate-limit", rateLimited));
        server = ServerProcess.startForTestsWithDatabase(ServerProcess.Kind.ofThisRun(), List.of(war, limitedWar),
                ServerProcess.freePort(), database);
        assertFalse(server.log().contains("FAILURE"), "a boot command failed: " + server.logFile());
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
        if (database != null) {
            database.close();
        }
    }

    @BeforeEach
    void client() {
        http = new Http(server.uri(StatusTableTests.CONTEXT));
    }

    @Nested
    class StatusTable extends StatusTableOnDatabaseTests {

        @Override
        ServerProcess server() {
            return server;
        }

        @Override
        TestDatabase database() {
            return database;
        }
    }

    @Nested
    class SeedScenarios extends SeedScenarioTests {

        @BeforeEach
        void client() {
            http = new Http(server.uri(StatusTableTests.CONTEXT));
        }

        @Override
        void assertRecordCompletedForADay(String key) {
            assertCompletedRowForADay(key);
        }

        @Override
        ServerProcess startPodA(Path war) {
            return ServerProcess.startForTestsWithDatabase(ServerProcess.Kind.ofThisRun(), List.of(war),
                    ServerProcess.freePort(), database);
        }

        @Override
        Map<String, String> podAConfig() {
            return JDBC;
        }

        @Override
        void stopStore() {
            database.stop();
        }

        @Override
        void restartStore() {
            database.restart();
        }
    }

    @Test
    void theTableIsCreatedAtDeploymentAndAFirstRequestLeavesOneCompletedRowForTtlHours() {
        String key = Http.newKey();
        assertEquals(201, http.postJson("guarded/payments", key, "{\"name\":\"order-42\",\"amount\":1999}").statusCode());
        assertCompletedRowForADay(key);
    }

    @Test
    void expiredRowsAreDeletedInTheBackgroundAndCounted() {
        long before = http.metric("idempotency.expired.deleted");
        database.execute(database.name().equals("MariaDB")
                ? "INSERT INTO idempotency_keys (record_key, completed, fingerprint, owner_token, response, expires_at) SELECT CONCAT('expired-', seq), TRUE, x'01', 'o', NULL,"
                  + " UTC_TIMESTAMP(6) - INTERVAL 1 SECOND FROM seq_1_to_1000"
                : "INSERT INTO idempotency_keys (record_key, completed, fingerprint, owner_token, response, expires_at) SELECT 'expired-' || i, TRUE, '\\x01', 'o', NULL,"
                  + " now() - INTERVAL '1 second' FROM generate_series(1, 1000) i");
        await().atMost(Duration.ofSeconds(30)).until(() ->
                database.queryLong("SELECT count(*) FROM idempotency_keys WHERE record_key LIKE 'expired-%'") == 0);
        // counted right after each batch's commit: the last batch's count may follow the rows' absence
        await().atMost(Duration.ofSeconds(5)).until(() -> http.metric("idempotency.expired.deleted") >= before + 1000);
        await().atMost(Duration.ofSeconds(5)).until(() ->
                server.log().contains("expired records from JdbcIdempotencyStore[idempotency_keys] in")); // at the run's end
    }

    /**
     * {@code idempotency.rate-limit.per-key=5/30s} on the JDBC store: the sixth request with a key
     * gets 429, replays counted as much as runs; and a key whose every request fails (released each
     * time: a retry storm) is limited all the same, its count kept on its expired row.
     */
    @Test
    void aKeyHammeredBeyondTheRateLimitGets429EvenWhenEveryRequestFailed() {
        Http limited = new Http(server.uri("jdbc-rate-limit"));
        String key = Http.newKey();
        HttpResponse<String> first = limited.postJson("guarded/echo", key, "{}");
        assertEquals(201, first.statusCode(), first.body());
        for (int i = 2; i <= 5; i++) {
            assertEquals(201, limited.postJson("guarded/echo", key, "{}").statusCode(), "request " + i);
        }
        HttpResponse<String> refused = limited.postJson("guarded/echo", key, "{}");
        assertEquals(429, refused.statusCode(), refused.body());
        assertTrue(refused.body().contains("https://idemkey.io/problems/rate-limited"), refused.body());
        assertEquals(1, limited.executions(key));

        String failing = Http.newKey();
        for (int i = 1; i <= 5; i++) {
            assertEquals(500, limited.post("guarded/server-error", failing).statusCode(), "request " + i + " runs and fails");
        }
        assertEquals(429, limited.post("guarded/server-error", failing).statusCode(), "the storm is limited");
        assertEquals(5, limited.executions(failing));
    }

    /**
     * The admin API on the JDBC store (issue 29; AdminApiIT proves it on Redis): a completed key's
     * row looked up and purged with an audit line, after which the key runs again; a key in progress
     * listed as stuck by the indexed query, its purge refused without force and done with it.
     */
    @Test
    void theAdminApiLooksUpListsAndPurgesRowsWithAnAuditLine() throws Exception {
        Http admin = new Http(server.uri("jdbc-rate-limit"));
        String key = Http.newKey();
        assertEquals(201, admin.postJson("guarded/echo", key, "{}").statusCode());
        HttpResponse<String> found = admin(admin, "GET", "keys?caller=&key=" + key);
        assertEquals(200, found.statusCode(), found.body());
        assertTrue(found.body().contains("\"state\":\"completed\"") && found.body().contains("\"status\":201"), found.body());
        assertEquals(403, admin.send(admin.request("idempotency-admin/keys?caller=&key=" + key, "alice")
                .method("DELETE", HttpRequest.BodyPublishers.noBody()).build()).statusCode(), "outside the role");
        HttpResponse<String> purged = admin(admin, "DELETE", "keys?caller=&key=" + key + "&reason="
                + URLEncoder.encode("ticket 7", StandardCharsets.UTF_8).replace("+", "%20"));
        assertEquals(200, purged.statusCode(), purged.body());
        assertEquals(0, database.queryLong("SELECT count(*) FROM rate_limited_keys WHERE record_key = ?",
                RecordKey.of("idempotency:", "", key)), "the row is gone");
        assertTrue(admin.get("audit-log").body().contains("by=\"ops\" record=\"idempotency::" + key
                + "\" force=false outcome=PURGED reason=\"ticket 7\""), admin.get("audit-log").body());
        assertEquals(201, admin.postJson("guarded/echo", key, "{\"other\":1}").statusCode(), "purged: runs again");

        String stuck = Http.newKey();
        CompletableFuture<HttpResponse<String>> running = CompletableFuture.supplyAsync(() ->
                admin.post("guarded/slow?millis=6000", stuck));
        admin.awaitExecution(stuck);
        await().atMost(Duration.ofSeconds(10)).until(() -> admin(admin, "GET", "stuck?older-than=1&limit=100")
                .body().contains("\"storeKey\":\"idempotency::" + stuck + "\""));
        assertEquals(409, admin(admin, "DELETE", "keys?caller=&key=" + stuck + "&reason=stuck").statusCode());
        assertEquals(200, admin(admin, "DELETE", "keys?caller=&key=" + stuck + "&reason=stuck&force=true").statusCode());
        running.get();
    }

    private static HttpResponse<String> admin(Http http, String method, String operation) {
        return http.send(http.request("idempotency-admin/" + operation, "ops")
                .method(method, HttpRequest.BodyPublishers.noBody()).build());
    }

    /** One row for the key, completed, expiring after ttlHours (24). */
    private static void assertCompletedRowForADay(String key) {
        String now = database.name().equals("MariaDB") ? "UTC_TIMESTAMP(6)" : "now()";
        assertEquals(1, database.queryLong("SELECT count(*) FROM idempotency_keys WHERE record_key = ? AND completed"
                + " AND expires_at > " + now + " + INTERVAL '23' HOUR AND expires_at <= " + now + " + INTERVAL '24' HOUR",
                RecordKey.of("idempotency:", "", key)), "one completed row, expiring after ttlHours");
    }
}
