package io.idemkey.it;

import io.idemkey.it.app.ExactlyOnceResource;
import io.idemkey.testing.PostgresServer;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.as.arquillian.api.ServerSetup;
import org.jboss.as.arquillian.api.ServerSetupTask;
import org.jboss.as.arquillian.container.ManagementClient;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Exactly-once effects with the JDBC store through a WildFly datasource, configured the way WildFly's
 * users do it: the PostgreSQL driver deployed and a {@code data-source add} with {@code jboss-cli}
 * (docs/servers-wildfly.md). The guarded method writes its effect in its {@code @Transactional}
 * method through the same datasource as the idempotency records: the record commits with the
 * effect or not at all.
 */
@RunAsClient
@ServerSetup(WildFlyJdbcIT.DataSourceWithJbossCli.class)
class WildFlyJdbcIT extends ClientOfOneDeployment {

    /** Where the datasource is bound; the test application looks it up as {@code jdbc/idemkey}. */
    static final String JNDI_NAME = "java:/" + ExactlyOnceResource.DATA_SOURCE;
    private static PostgresServer database;

    @Deployment
    static WebArchive deployment() {
        return Deployments.guardedApp("once-wildfly", Map.of("idempotency.store", "jdbc",
                "idempotency.jdbc.datasource", JNDI_NAME));
    }

    /** Starts PostgreSQL, then deploys its driver and adds the datasource with jboss-cli; removes both afterwards. */
    public static class DataSourceWithJbossCli implements ServerSetupTask {

        /** Without a reload (the server runs the next test classes): its pool stops with it. */
        private static final String REMOVE_DATA_SOURCE =
                "/subsystem=datasources/data-source=idemkey:remove(){allow-resource-service-restart=true}";

        @Override
        public void setup(ManagementClient management, String containerId) throws Exception {
            database = PostgresServer.start();
            database.execute(ExactlyOnceResource.ddl(database.name()));
            cli(false, REMOVE_DATA_SOURCE); // left by an aborted run (jboss-cli stops at the first failure)
            cli(false, "undeploy postgresql.jar");
            cli(true,
                    "deploy " + Path.of(System.getProperty("postgresql.driverJar")).toAbsolutePath() + " --name=postgresql.jar",
                    "data-source add --name=idemkey --jndi-name=" + JNDI_NAME + " --driver-name=postgresql.jar"
                            + " --connection-url=jdbc:postgresql://" + database.address() + ":" + database.port() + "/postgres"
                            + " --user-name=postgres --password=unused");
        }

        @Override
        public void tearDown(ManagementClient management, String containerId) throws Exception {
            cli(true, REMOVE_DATA_SOURCE, "undeploy postgresql.jar");
        }
    }

    @AfterAll
    static void stopDatabase() {
        if (database != null) {
            database.close();
        }
    }

    @Test
    void aRefusalByExceptionRollsBackItsEffectAndIsRecordedAndReplayed() {
        String key = Http.newKey();
        HttpResponse<String> refused = http.send(charge(key, "refuse"));
        assertEquals(402, refused.statusCode(), refused.body());
        assertEquals(0, effects(key), "the transaction rolled back");
        HttpResponse<String> retry = http.send(charge(key, null));
        assertEquals(402, retry.statusCode());
        assertEquals(refused.body(), retry.body());
        assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse(null));
        assertEquals(1, database.queryLong("SELECT count(*) FROM idempotency_keys WHERE record_key LIKE ? AND completed",
                "%" + key), "the record committed in the same transaction");
    }

    @Test
    void aServerErrorRollsBackItsEffectAndReleasesTheKeySoTheRetryRuns() {
        String key = Http.newKey();
        assertEquals(500, http.send(charge(key, "fail")).statusCode());
        assertEquals(0, effects(key));
        HttpResponse<String> retry = http.send(charge(key, null));
        assertEquals(201, retry.statusCode(), retry.body());
        assertTrue(retry.headers().firstValue("Idempotent-Replayed").isEmpty());
        assertEquals(1, effects(key));
        HttpResponse<String> replay = http.send(charge(key, null));
        assertEquals(retry.body(), replay.body());
        assertEquals(1, effects(key));
    }

    @Test
    void aRequestThatLostItsLeaseRollsBackItsEffectAndTheWinnersResponseIsReplayed() throws Exception {
        String key = Http.newKey();
        CompletableFuture<HttpResponse<String>> slow = CompletableFuture.supplyAsync(() -> http.send(charge(key, "hold")));
        await().atMost(Duration.ofSeconds(30)).until(() -> http.get("exactly-once/held?key=" + key).body().equals("true"));
        assertEquals(1, database.update("UPDATE idempotency_keys SET expires_at = now() - INTERVAL '1 second'"
                + " WHERE record_key LIKE ? AND NOT completed", "%" + key));
        HttpResponse<String> winner = http.send(charge(key, null));
        assertEquals(201, winner.statusCode(), winner.body());

        http.send(http.request("exactly-once/resume?key=" + key).POST(HttpRequest.BodyPublishers.noBody()).build());
        HttpResponse<String> loser = slow.get(60, TimeUnit.SECONDS);
        assertEquals(409, loser.statusCode(), loser.body());
        assertEquals("https://idemkey.io/problems/key-taken-over", Http.json(loser).getString("type"));
        assertEquals(1, effects(key), "the loser's effect was rolled back");
        HttpResponse<String> retry = http.send(charge(key, null));
        assertEquals(winner.body(), retry.body());
        assertEquals(1, effects(key));
    }

    private HttpRequest charge(String key, String then) {
        HttpRequest.Builder request = http.request("exactly-once/charge").header(Http.KEY, key);
        if (then != null) {
            request.header("X-Then", then);
        }
        return request.POST(HttpRequest.BodyPublishers.noBody()).build();
    }

    private static long effects(String key) {
        return database.queryLong("SELECT count(*) FROM effects WHERE idem_key = ?", key);
    }

    /** Runs jboss-cli against the test server, as an administrator would. */
    static void cli(boolean mustSucceed, String... commands) throws IOException, InterruptedException {
        Path script = Files.createTempFile("idemkey-wildfly-", ".cli");
        Files.write(script, List.of(commands));
        Path home = Path.of(System.getProperty("wildfly.home"));
        Path log = Files.createTempFile("idemkey-wildfly-cli-", ".log");
        Process cli = new ProcessBuilder(home.resolve("bin/jboss-cli.sh").toString(), "--connect",
                "--controller=remote+http://127.0.0.1:" + System.getProperty("wildfly.managementPort"),
                "--file=" + script).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!cli.waitFor(120, TimeUnit.SECONDS)) {
            cli.destroyForcibly();
            throw new IllegalStateException("jboss-cli did not finish: " + Files.readString(log));
        }
        if (mustSucceed && cli.exitValue() != 0) {
            throw new IllegalStateException("jboss-cli failed (" + cli.exitValue() + "): " + Files.readString(log));
        }
    }
}
