package io.idemkey.it;

import io.idemkey.it.resources.CdiResources;
import io.idemkey.testing.PostgresServer;
import io.idemkey.testing.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code idempotency.resources=cdi}: an application that offers the DataSource (a {@code @Named}
 * bean whose name is no JNDI name), the {@code TransactionSynchronizationRegistry} and a
 * {@code ManagedThreadFactory} as CDI beans ({@link CdiResources}), as Quarkus and Helidon MP do,
 * gets Idemkey on the JDBC store with each taken from CDI: the status table, and exactly-once effects
 * (the record written in the method's transaction, through the registry bean). An application with
 * {@code resources=cdi} and no DataSource bean fails its deployment naming the property.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Execution(ExecutionMode.CONCURRENT) // on Open Liberty, beside the classes on the adapter's server
@ResourceLock(ServerProcess.SERVERS_OF_THEIR_OWN) // one at a time (it-tests/pom.xml)
class CdiResourcesIT {

    private static final String WITHOUT_DATA_SOURCE = "cdi-without-datasource";
    private static final String CHARGE = "exactly-once/charge";

    private static TestDatabase database;
    private static List<Path> wars;
    private static int port;
    private static ServerProcess server;

    /** The store's configuration: every resource from CDI, the DataSource by its bean name. */
    private static Map<String, String> cdiConfig() {
        Map<String, String> config = new LinkedHashMap<>();
        config.put("idempotency.store", "jdbc");
        config.put("idempotency.resources", "cdi");
        config.put("idempotency.jdbc.datasource", CdiResources.DATA_SOURCE);
        config.put("idempotency.jdbc.timeout-seconds", "1");
        return config;
    }

    @BeforeAll
    static void start() throws Exception {
        database = PostgresServer.start();
        DatabaseStatements.enable(database);
        database.execute(io.idemkey.it.app.ExactlyOnceResource.ddl(database.name()));
        Path directory = Files.createTempDirectory("idemkey-cdi-resources");
        // the sound application first: Payara Micro initializes none after one that failed
        wars = List.of(
                Deployments.export(directory, StatusTableTests.deployment(cdiConfig())
                        .addPackage(CdiResources.class.getPackage())),
                Deployments.export(directory, Deployments.guardedApp(WITHOUT_DATA_SOURCE, cdiConfig())));
        port = ServerProcess.freePort();
        server = startServer();
    }

    private static ServerProcess startServer() {
        ServerProcess started = ServerProcess.startForTestsWithDatabase(ServerProcess.Kind.ofThisRun(), wars, port, database);
        assertFalse(started.log().contains("FAILURE"), "a boot command failed: " + started.logFile());
        return started;
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

    @Test
    @Order(1)
    void theStartUpLineSaysTheDataSourceTheRegistryAndTheThreadFactoryCameFromCdi() {
        String started = Arrays.stream(server.log().split("\n"))
                .filter(line -> line.contains("Idemkey started: ") && line.contains("jdbc=" + CdiResources.DATA_SOURCE + "/"))
                .findFirst().orElseThrow(() -> new AssertionError("no start-up line of the application: " + server.logFile()));
        assertTrue(started.contains("resources=cdi"), started);
        assertTrue(started.contains("DataSource @Named(\"orders\") from CDI"), started);
        assertTrue(started.contains("TransactionSynchronizationRegistry from CDI"), started);
        assertTrue(started.contains("ManagedThreadFactory from CDI"), started);
        assertTrue(server.log().contains("Idemkey keeps its records in the table idempotency_keys of the DataSource"
                + " @Named(\"orders\") from CDI"), server.logFile().toString());
    }

    @Test
    @Order(2)
    void withoutADataSourceBeanTheDeploymentFailsNamingThePropertyAndTheBeanWanted() throws Exception {
        assertTrue(server.log().contains("Invalid Idemkey configuration: idempotency.jdbc.datasource is 'orders', and"
                + " the application has no CDI bean javax.sql.DataSource @Named(\"orders\") (idempotency.resources=cdi:"
                + " CDI beans only, no JNDI look-up)"), server.logFile().toString());
        assertFalse(server.log().contains("names no DataSource the application can look up"), "no JNDI look-up");
        HttpResponse<Void> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                server.uri(WITHOUT_DATA_SOURCE).resolve("guarded/executions?key=x")).GET().build(),
                HttpResponse.BodyHandlers.discarding());
        assertNotEquals(200, response.statusCode(), "the application is not serving");
    }

    /**
     * The registry bean at work: the request that lost its lease cannot complete its record in its
     * transaction, which is rolled back with its effect; the winner's response is replayed.
     */
    @Test
    @Order(3)
    void aRequestThatLostItsLeaseRollsBackItsEffectAndTheWinnersResponseIsReplayed() throws Exception {
        Http http = new Http(server.uri(StatusTableTests.CONTEXT));
        String key = Http.newKey();
        CompletableFuture<HttpResponse<String>> slow = CompletableFuture.supplyAsync(() -> http.send(charge(http, key, "hold")));
        await().atMost(Duration.ofSeconds(30)).until(() -> http.get("exactly-once/held?key=" + key).body().equals("true"));

        assertEquals(1, database.update("UPDATE idempotency_keys SET expires_at = now() - INTERVAL '1 second'"
                + " WHERE record_key LIKE ? AND NOT completed", "%" + key));
        HttpResponse<String> winner = http.send(charge(http, key, null));
        assertEquals(201, winner.statusCode(), winner.body());
        assertEquals(1, effects(key));

        http.send(http.request("exactly-once/resume?key=" + key).POST(HttpRequest.BodyPublishers.noBody()).build());
        HttpResponse<String> loser = slow.get(60, TimeUnit.SECONDS);
        assertEquals(409, loser.statusCode(), loser.body());
        assertEquals(1, effects(key), "the loser's effect was rolled back");

        HttpResponse<String> retry = http.send(charge(http, key, null));
        assertEquals(winner.body(), retry.body());
        assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse(null));
        assertEquals(1, effects(key));
    }

    /** The record committed with the effect, through the DataSource bean: after a crash right after the commit the retry is replayed. */
    @Test
    @Order(4)
    void aCrashRightAfterTheCommitIsReplayedAfterTheRestart() throws Exception {
        String key = Http.newKey();
        Http before = new Http(server.uri(StatusTableTests.CONTEXT));
        assertThrows(RuntimeException.class, () -> before.send(charge(before, key, "crash")), "the server halts under the request");
        server.await();
        assertEquals(1, effects(key), "the effect committed before the crash");
        server = startServer();
        Http after = new Http(server.uri(StatusTableTests.CONTEXT));
        HttpResponse<String> retry = after.send(charge(after, key, null));
        assertEquals(201, retry.statusCode(), retry.body());
        assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse(null));
        assertEquals(1, effects(key), "exactly one effect");
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

    private static HttpRequest charge(Http http, String key, String then) {
        HttpRequest.Builder request = http.request(CHARGE).header(Http.KEY, key);
        if (then != null) {
            request.header("X-Then", then);
        }
        return request.POST(HttpRequest.BodyPublishers.noBody()).build();
    }

    private static long effects(String key) {
        return database.queryLong("SELECT count(*) FROM effects WHERE idem_key = ?", key);
    }
}
