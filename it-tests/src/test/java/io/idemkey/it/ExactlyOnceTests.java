package io.idemkey.it;

import io.idemkey.it.app.ExactlyOnceResource;
import io.idemkey.it.jpa.JpaChargeResource;
import io.idemkey.testing.RedisServer;
import io.idemkey.testing.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

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
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Exactly-once effects with the JDBC store, on a real server with a real PostgreSQL
 * ({@link ExactlyOnceIT}) or MariaDB ({@link MariaDbExactlyOnceIT}): the guarded
 * method's effect is a row written in its {@code @Transactional} method through the same DataSource
 * as the idempotency records, so the record commits with the effect or not at all. The same crash
 * on the Redis store shows the window this closes. The server of this run is started by the test
 * (it must crash), with the DataSource configured the way its users configure one.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Execution(ExecutionMode.CONCURRENT) // on Open Liberty, beside the classes on the adapter's server
@ResourceLock(ServerProcess.SERVERS_OF_THEIR_OWN) // one at a time (it-tests/pom.xml)
abstract class ExactlyOnceTests {

    /**
     * The cases beyond the portable core (the HTTP request's crash after the commit, lost lease and
     * rollback): a runtime that runs only the core excludes this tag (it-tests/pom.xml, execution payara7).
     */
    static final String MORE = "exactly-once-more";

    private static final String CHARGE = "exactly-once/charge";
    /** Another DataSource (a pool of its own) on the same database, for the records only. */
    private static final String SECOND_DATA_SOURCE = "jdbc/idemkey-records";
    /** WildFly's restart boots the five applications again (~40 s here): one crash there, the suite's time. */
    private static final String ONE_CRASH_ON_WILDFLY = "WildFly: one crash after the commit (the request's), for the suite's time";
    private static TestDatabase database;
    /**
     * The Redis store's records (once-redis), a Redis of this class's own: on Open Liberty the class runs
     * beside the others, some of which stop the shared test Redis (it-tests/pom.xml, execution open-liberty).
     */
    private static RedisServer onceRedis;
    private static List<Path> wars;
    private static int port;
    private static ServerProcess server;

    /** Starts this run's server on {@code started} with the applications deployed (the subclass's {@code @BeforeAll}). */
    static void startOn(TestDatabase started) throws Exception {
        database = started;
        onceRedis = RedisServer.start();
        database.execute(ExactlyOnceResource.ddl(database.name()));
        database.execute(JpaChargeResource.ddl(database.name()));
        Path directory = Files.createTempDirectory("idemkey-exactly-once");
        wars = List.of(
                Deployments.export(directory, Deployments.guardedApp("once", Map.of("idempotency.store", "jdbc",
                        "idempotency.jdbc.datasource", ExactlyOnceResource.DATA_SOURCE))),
                Deployments.export(directory, Deployments.guardedApp("once-redis", Map.of("idempotency.redis.url", onceRedis.url()))),
                Deployments.export(directory, Deployments.jpaApp("once-jpa")),
                Deployments.export(directory, Deployments.guardedApp("once-second-pool", Map.of("idempotency.store", "jdbc",
                        "idempotency.jdbc.datasource", SECOND_DATA_SOURCE))),
                Deployments.export(directory, Deployments.guardedApp("once-small-pool", Map.of("idempotency.store", "jdbc",
                        "idempotency.jdbc.datasource", ExactlyOnceResource.SMALL_DATA_SOURCE,
                        "idempotency.jdbc.timeout-seconds", "1"))));
        port = ServerProcess.freePort();
        server = start();
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
        if (onceRedis != null) {
            onceRedis.close();
        }
        if (database != null) {
            database.close();
        }
    }

    private static ServerProcess start() {
        ServerProcess started = ServerProcess.startWithDatabase(ServerProcess.Kind.ofThisRun(), wars, port, Map.of(),
                database, List.of("appSecurity-5.0", "persistence-3.1"),
                List.of(ExactlyOnceResource.DATA_SOURCE, SECOND_DATA_SOURCE, ExactlyOnceResource.SMALL_DATA_SOURCE),
                Map.of(ExactlyOnceResource.SMALL_DATA_SOURCE, 2));
        assertFalse(started.log().contains("FAILURE"), "a boot command failed: " + started.logFile());
        return started;
    }

    @Test
    @Order(1)
    void aRequestThatLostItsLeaseRollsBackItsEffectAndTheWinnersResponseIsReplayed() throws Exception {
        Http http = new Http(server.uri("once"));
        String key = Http.newKey();
        CompletableFuture<HttpResponse<String>> slow = CompletableFuture.supplyAsync(() -> http.send(charge(http, key, "hold")));
        await().atMost(Duration.ofSeconds(30)).until(() -> http.get("exactly-once/held?key=" + key).body().equals("true"));

        // The slow request pauses past its lease (a long GC pause, a stalled network): its record expires.
        assertEquals(1, expireInProgress("%" + key));
        HttpResponse<String> winner = http.send(charge(http, key, null));
        assertEquals(201, winner.statusCode(), winner.body());
        assertEquals(1, effects(key));

        http.send(http.request("exactly-once/resume?key=" + key).POST(HttpRequest.BodyPublishers.noBody()).build());
        HttpResponse<String> loser = slow.get(60, TimeUnit.SECONDS);
        assertEquals(409, loser.statusCode(), loser.body());
        assertEquals("https://idemkey.io/problems/key-taken-over", Http.json(loser).getString("type"));
        assertEquals(1, effects(key), "the loser's effect was rolled back");

        HttpResponse<String> retry = http.send(charge(http, key, null));
        assertEquals(201, retry.statusCode());
        assertEquals(winner.body(), retry.body());
        assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse(null));
        assertEquals(1, effects(key));
    }

    @Tag(MORE)
    @Test
    @Order(2)
    void aRefusalByExceptionRollsBackItsEffectAndIsRecordedAndReplayed() throws Exception {
        Http http = new Http(server.uri("once"));
        String key = Http.newKey();
        HttpResponse<String> refused = http.send(charge(http, key, "refuse"));
        assertEquals(402, refused.statusCode(), refused.body());
        assertEquals(0, effects(key), "the transaction rolled back");
        HttpResponse<String> retry = http.send(charge(http, key, null));
        assertEquals(402, retry.statusCode());
        assertEquals(refused.body(), retry.body());
        assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse(null));
        assertEquals(0, effects(key));
    }

    @Test
    @Order(3)
    void aServerErrorRollsBackItsEffectAndReleasesTheKeySoTheRetryRuns() throws Exception {
        Http http = new Http(server.uri("once"));
        String key = Http.newKey();
        assertEquals(500, http.send(charge(http, key, "fail")).statusCode());
        assertEquals(0, effects(key));
        HttpResponse<String> retry = http.send(charge(http, key, null));
        assertEquals(201, retry.statusCode(), retry.body());
        assertTrue(retry.headers().firstValue("Idempotent-Replayed").isEmpty());
        assertEquals(1, effects(key));
    }

    /**
     * An exception no mapper handles: the key is released before the error goes out, outside the
     * transaction that rolls back (a release written in it would be undone, and the retry refused).
     */
    @Tag(MORE)
    @Test
    @Order(4)
    void anUnmappedExceptionRollsBackItsEffectAndTheKeyIsFreeAtOnce() {
        Http http = new Http(server.uri("once"));
        String key = Http.newKey();
        assertEquals(500, http.send(charge(http, key, "explode")).statusCode());
        assertEquals(0, effects(key));
        HttpResponse<String> retry = http.send(charge(http, key, null));
        assertEquals(201, retry.statusCode(), retry.body());
        assertEquals(1, effects(key));
    }

    /**
     * A method whose transaction the database already aborted (a failed statement it swallowed):
     * the record cannot be written with the effects, the transaction rolls back, the client is told
     * to retry, and the key is free at once.
     */
    @Tag(MORE)
    @Test
    @Order(4)
    void aTransactionTheDatabaseAbortedIsRolledBackAndItsKeyReleased() {
        assumeTrue(onPostgres(), "PostgreSQL aborts a transaction whose statement failed; MariaDB fails the statement only");
        Http http = new Http(server.uri("once"));
        String key = Http.newKey();
        HttpResponse<String> poisoned = http.send(charge(http, key, "poison"));
        assertEquals(503, poisoned.statusCode(), poisoned.body());
        assertEquals("https://idemkey.io/problems/store-unavailable", Http.json(poisoned).getString("type"));
        assertEquals(0, effects(key), "rolled back");
        HttpResponse<String> retry = http.send(charge(http, key, null));
        assertEquals(201, retry.statusCode(), retry.body());
        assertTrue(retry.headers().firstValue("Idempotent-Replayed").isEmpty());
        assertEquals(1, effects(key));
    }

    /**
     * The records on a DataSource other than the one the method writes through: where the container
     * enlists both in the transaction (XA), the record joins it; where it refuses a second resource
     * that is not XA (Payara's JDBC resources by default: "Local transaction already has 1 non-XA
     * Resource"), the transaction commits and the answer is recorded after it, as for Redis: never a
     * 503 for every request.
     */
    @Tag(MORE)
    @Test
    @Order(4)
    void recordsOnASecondDataSourceTheContainerWillNotEnlistAreWrittenAfterTheCommit() {
        assumeTrue(server.kind() == ServerProcess.Kind.PAYARA || onPostgres() && server.kind() == ServerProcess.Kind.LIBERTY,
                "Open Liberty refuses a second DataSource that is not XA (MariaDB's here), WildFly any second one that"
                + " is not XA, by marking the transaction rollback-only: the request is answered 503");
        Http http = new Http(server.uri("once-second-pool"));
        String key = Http.newKey();
        HttpResponse<String> first = http.send(charge(http, key, null));
        assertEquals(201, first.statusCode(), first.body());
        assertEquals(1, effects(key));
        HttpResponse<String>[] retry = new HttpResponse[1];
        await().atMost(Duration.ofSeconds(10)).until(() -> (retry[0] = http.send(charge(http, key, null))).statusCode() != 409);
        assertEquals(first.body(), retry[0].body());
        assertEquals("true", retry[0].headers().firstValue("Idempotent-Replayed").orElse(null));
        assertEquals(1, effects(key));
    }

    /**
     * Open Liberty (MariaDB's DataSources here) and WildFly (its {@code data-source add} ones) refuse a
     * second DataSource that is not XA when its first statement runs, and mark the transaction
     * rollback-only: the effects are gone, so the answer is an honest 503 (use the DataSource the
     * method writes through, or XA ones), never a 201 whose effects were silently rolled back.
     */
    @Tag(MORE)
    @Test
    @Order(4)
    void whereTheContainerRefusesASecondDataSourceThatIsNotXaTheAnswerIs503AndNothingCommits() {
        assumeTrue(!onPostgres() && server.kind() == ServerProcess.Kind.LIBERTY || server.kind() == ServerProcess.Kind.WILDFLY,
                "Open Liberty with MariaDB's DataSources, WildFly with any (not XA)");
        Http http = new Http(server.uri("once-second-pool"));
        String key = Http.newKey();
        HttpResponse<String> refused = http.send(charge(http, key, null));
        assertEquals(503, refused.statusCode(), refused.body());
        assertEquals(0, effects(key), "rolled back");
    }

    /**
     * Business transactions hold every connection of the pool Idemkey's records use: a guarded
     * request is answered 503 within about the store's timeout (1 s here), not after the pool's own
     * wait (Payara 60 s, Open Liberty 30 s), and runs once the connections are back.
     */
    @Tag(MORE)
    @Test
    @Order(4)
    void aPoolDrainedByBusinessTransactionsAnswers503WithinTheStoresTimeout() throws Exception {
        Http business = new Http(server.uri("once"));
        List<String> occupiers = List.of(Http.newKey(), Http.newKey());
        List<CompletableFuture<HttpResponse<String>>> held = occupiers.stream().map(key -> CompletableFuture.supplyAsync(() ->
                business.send(business.request("exactly-once/occupy?key=" + key).POST(HttpRequest.BodyPublishers.noBody()).build())))
                .toList();
        await().atMost(Duration.ofSeconds(30)).until(() -> occupiers.stream()
                .allMatch(key -> business.get("exactly-once/held?key=" + key).body().equals("true")));

        Http http = new Http(server.uri("once-small-pool"));
        String key = Http.newKey();
        long started = System.nanoTime();
        HttpResponse<String> drained = http.postJson("guarded/payments", key, "{\"name\":\"drained\"}");
        long millis = (System.nanoTime() - started) / 1_000_000;
        assertEquals(503, drained.statusCode(), drained.body());
        assertEquals("https://idemkey.io/problems/store-unavailable", Http.json(drained).getString("type"));
        assertTrue(millis < 6_000, "answered after " + millis + " ms");
        assertEquals(0, http.executions(key), "the method did not run");

        for (String occupier : occupiers) {
            business.send(business.request("exactly-once/resume?key=" + occupier).POST(HttpRequest.BodyPublishers.noBody()).build());
        }
        for (CompletableFuture<HttpResponse<String>> occupier : held) {
            assertEquals(200, occupier.get(60, TimeUnit.SECONDS).statusCode());
        }
        HttpResponse<String> afterwards = http.postJson("guarded/payments", key, "{\"name\":\"drained\"}");
        assertEquals(201, afterwards.statusCode(), afterwards.body());
        assertEquals(1, http.executions(key));
    }

    /**
     * A transaction marked rollback-only whose method still answers 201: the container rolls it back
     * silently and the client gets the 201, but the effect is gone, so the answer is not recorded and
     * a retry runs again, on either store.
     */
    @ParameterizedTest
    @ValueSource(strings = {"once", "once-redis"})
    @Order(4)
    void anAnswerWhoseTransactionRolledBackIsNotRecordedAndTheRetryRuns(String context) {
        assumeTrue(onPostgres() || !context.endsWith("redis"), "the Redis store: once, on PostgreSQL's run");
        Http http = new Http(server.uri(context));
        String key = Http.newKey();
        assertEquals(201, http.send(charge(http, key, "rollback-only")).statusCode());
        assertEquals(0, effects(key), "rolled back");
        HttpResponse<String> retry = http.send(charge(http, key, null));
        assertEquals(201, retry.statusCode(), retry.body());
        assertTrue(retry.headers().firstValue("Idempotent-Replayed").isEmpty(), "not a replay of the rolled-back answer");
        assertEquals(1, effects(key));
    }

    /**
     * The server halts right after the transaction committed, before any response: with the JDBC
     * store the record committed with the effect, so after the restart the retry is replayed; with
     * the Redis store the record was never completed, so once its lease ran out the retry ran again.
     */
    @Test
    @Order(5)
    void aCrashRightAfterTheCommitIsReplayedOnTheJdbcStoreAndRunsTwiceOnRedis() throws Exception {
        String jdbcKey = Http.newKey();
        crash("once", jdbcKey);
        server = start();
        Http jdbc = new Http(server.uri("once"));
        HttpResponse<String> retry = jdbc.send(charge(jdbc, jdbcKey, null));
        assertEquals(201, retry.statusCode(), retry.body());
        assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse(null));
        assertEquals(1, effects(jdbcKey), "exactly one effect");

        if (!onPostgres() || server.kind() == ServerProcess.Kind.WILDFLY || Boolean.getBoolean("idemkey.test.exactlyOnceCore")) {
            return; // the Redis store's window: shown once per server, on PostgreSQL's run of the full set (not on WildFly: one restart less)
        }
        String redisKey = Http.newKey();
        crash("once-redis", redisKey);
        server = start();
        Http redis = new Http(server.uri("once-redis"));
        HttpResponse<String>[] last = new HttpResponse[1];
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(250)).until(() -> {
            last[0] = redis.send(charge(redis, redisKey, null));
            return last[0].statusCode() != 409; // the crashed request's lease holds the key for lockTtlSeconds
        });
        assertEquals(201, last[0].statusCode(), last[0].body());
        assertTrue(last[0].headers().firstValue("Idempotent-Replayed").isEmpty());
        assertEquals(2, effects(redisKey), "the Redis store's window: the effect committed, the record did not");
    }

    /**
     * An {@code @Idempotent} method's outcome is written in its transaction with its effect: after
     * the commit, the record is completed in the same database, and a later call returns the outcome
     * without running.
     */
    @Test
    @Order(6)
    void anIdempotentMethodsOutcomeCommitsWithItsEffectAndIsReturnedWithoutRunning() {
        Http http = new Http(server.uri("once"));
        String id = Http.newKey();
        String first = transfer(http, id, null);
        assertEquals("returned transfer " + id + " effect " + effectId(id), first);
        assertEquals(1, database.queryLong("SELECT count(*) FROM idempotency_keys WHERE record_key = ? AND completed",
                "idempotency:call:it-transfers:" + id));
        assertEquals(first, transfer(http, id, "explode"), "returned without running: 'then' is not fingerprinted");
        assertEquals(1, effects(id));
    }

    /** A call that outlived its lease is rolled back and told so; the winner's outcome stands. */
    @Tag(MORE)
    @Test
    @Order(6)
    void anIdempotentMethodThatLostItsLeaseRollsBackItsEffectAndThrowsTakenOver() throws Exception {
        Http http = new Http(server.uri("once"));
        String id = Http.newKey();
        CompletableFuture<String> slow = CompletableFuture.supplyAsync(() -> transfer(http, id, "hold"));
        await().atMost(Duration.ofSeconds(30)).until(() -> http.get("exactly-once/held?key=" + id).body().equals("true"));
        assertEquals(1, expireInProgress("idempotency:call:it-transfers:" + id));
        String winner = transfer(http, id, null);
        assertTrue(winner.startsWith("returned transfer " + id), winner);

        http.send(http.request("exactly-once/resume?key=" + id).POST(HttpRequest.BodyPublishers.noBody()).build());
        assertTrue(slow.get(60, TimeUnit.SECONDS).startsWith("threw TakenOver: "));
        assertEquals(1, effects(id), "the loser's effect was rolled back");
        assertEquals(winner, transfer(http, id, null));
    }

    /**
     * A transaction marked rollback-only, or an exception: the effect is gone, the outcome is not
     * recorded, and the next call runs (at once after the exception; the release after a rollback
     * happens once the transaction has ended, on the JDBC store off the caller's thread).
     */
    @Tag(MORE)
    @ParameterizedTest
    @ValueSource(strings = {"once", "once-redis"})
    @Order(6)
    void anIdempotentMethodWhoseTransactionRolledBackIsNotRecordedAndRunsAgain(String context) {
        assumeTrue(onPostgres() || !context.endsWith("redis"), "the Redis store: once, on PostgreSQL's run");
        Http http = new Http(server.uri(context));
        String id = Http.newKey();
        assertTrue(transfer(http, id, "rollback-only").startsWith("returned transfer " + id), "the method returned");
        assertEquals(0, effects(id), "rolled back");
        String[] retry = new String[1];
        await().atMost(Duration.ofSeconds(10)).until(() -> !(retry[0] = transfer(http, id, null)).startsWith("threw InProgress"));
        assertEquals("returned transfer " + id + " effect " + effectId(id), retry[0]);
        assertEquals(1, effects(id));


        String failing = Http.newKey();
        assertTrue(transfer(http, failing, "explode").startsWith("threw IllegalStateException: exploded after effect "));
        assertEquals(0, effects(failing), "rolled back");
        assertTrue(transfer(http, failing, null).startsWith("returned transfer " + failing), "released at once: the next call runs");
        assertEquals(1, effects(failing));
    }

    /**
     * The server halts right after an {@code @Idempotent} method's transaction committed: the outcome
     * committed with the effect, so after the restart the call returns it without running again.
     */
    @Tag(MORE)
    @Test
    @Order(7)
    void anIdempotentMethodsCrashRightAfterTheCommitReturnsTheOutcomeAfterTheRestart() throws Exception {
        assumeFalse(server.kind() == ServerProcess.Kind.WILDFLY, ONE_CRASH_ON_WILDFLY);
        String id = Http.newKey();
        Http http = new Http(server.uri("once"));
        assertThrows(RuntimeException.class, () -> transfer(http, id, "crash"), "the server halts under the call");
        server.await();
        assertEquals(1, effects(id), "the effect committed before the crash");
        server = start();
        Http restarted = new Http(server.uri("once"));
        assertEquals("returned transfer " + id + " effect " + effectId(id), transfer(restarted, id, null));
        assertEquals(1, effects(id), "exactly one effect");
    }

    /**
     * JPA writes a persisted entity when the persistence context flushes, at commit, after the
     * method returned (with a sequence id, {@code persist()} mostly touches no table at all): the
     * record still commits with it. The server halts right after the commit; after the restart the
     * retry is replayed and the entity exists once. An order with an identity id, the entity itself returned:
     * the record committed with it holds the id the database generated at the flush.
     */
    @Tag(MORE)
    @Test
    @Order(8)
    void aJpaEntityPersistedWithoutFlushCommitsWithTheRecordAndACrashAfterTheCommitIsReplayed() throws Exception {
        assumeFalse(server.kind() == ServerProcess.Kind.WILDFLY, ONE_CRASH_ON_WILDFLY);
        String charge = Http.newKey();
        Http http = new Http(server.uri("once-jpa"));
        assertThrows(RuntimeException.class, () -> http.send(jpaCharge(http, "sequence", charge, "crash")), "the server halts");
        server.await();
        assertEquals(1, jpaEffects("sequence", charge), "the entity committed before the crash");
        server = start();
        Http restarted = new Http(server.uri("once-jpa"));
        HttpResponse<String> retry = restarted.send(jpaCharge(restarted, "sequence", charge, null));
        assertEquals(201, retry.statusCode(), retry.body());
        assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse(null), "replayed");
        assertEquals(1, jpaEffects("sequence", charge), "exactly one entity");

        String order = Http.newKey();
        assertThrows(RuntimeException.class, () -> restarted.send(createOrder(restarted, order, "crash")), "the server halts");
        server.await();
        assertEquals(1, database.queryLong("SELECT count(*) FROM jpa_orders WHERE idemkey = ?", order), "committed");
        server = start();
        Http again = new Http(server.uri("once-jpa"));
        HttpResponse<String> replayed = again.send(createOrder(again, order, null));
        assertEquals("true", replayed.headers().firstValue("Idempotent-Replayed").orElse(null), replayed.body());
        assertEquals(database.queryLong("SELECT id FROM jpa_orders WHERE idemkey = ?", order), id(replayed),
                "the id generated at the flush: " + replayed.body());
        assertEquals(1, database.queryLong("SELECT count(*) FROM jpa_orders WHERE idemkey = ?", order), "exactly one entity");
    }

    /** A JPA request that outlived its lease: its entity is never flushed, the client gets 409. */
    @Tag(MORE)
    @ParameterizedTest
    @ValueSource(strings = {"sequence", "identity"})
    @Order(8)
    void aJpaRequestThatLostItsLeaseRollsBackItsEntity(String ids) throws Exception {
        Http http = new Http(server.uri("once-jpa"));
        String key = Http.newKey();
        CompletableFuture<HttpResponse<String>> slow = CompletableFuture.supplyAsync(() -> http.send(jpaCharge(http, ids, key, "hold")));
        await().atMost(Duration.ofSeconds(30)).until(() -> http.get("jpa/held?key=" + key).body().equals("true"));
        assertEquals(1, expireInProgress("%" + key));
        HttpResponse<String> winner = http.send(jpaCharge(http, ids, key, null));
        assertEquals(201, winner.statusCode(), winner.body());

        http.send(http.request("jpa/resume?key=" + key).POST(HttpRequest.BodyPublishers.noBody()).build());
        HttpResponse<String> loser = slow.get(60, TimeUnit.SECONDS);
        assertEquals(409, loser.statusCode(), loser.body());
        assertEquals("https://idemkey.io/problems/key-taken-over", Http.json(loser).getString("type"));
        assertEquals(1, jpaEffects(ids, key), "the loser's entity was never written");
        HttpResponse<String> retry = http.send(jpaCharge(http, ids, key, null));
        assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse(null));
        assertEquals(1, jpaEffects(ids, key));
    }

    /** A JPA transaction marked rollback-only: the 201 goes out, nothing is recorded, the retry runs. */
    @Tag(MORE)
    @ParameterizedTest
    @ValueSource(strings = {"sequence", "identity"})
    @Order(8)
    void aJpaAnswerWhoseTransactionRolledBackIsNotRecorded(String ids) {
        Http http = new Http(server.uri("once-jpa"));
        String key = Http.newKey();
        assertEquals(201, http.send(jpaCharge(http, ids, key, "rollback-only")).statusCode());
        assertEquals(0, jpaEffects(ids, key), "rolled back");
        HttpResponse<String>[] retry = new HttpResponse[1];
        await().atMost(Duration.ofSeconds(10)).until(() -> (retry[0] = http.send(jpaCharge(http, ids, key, null))).statusCode() != 409);
        assertEquals(201, retry[0].statusCode(), retry[0].body());
        assertTrue(retry[0].headers().firstValue("Idempotent-Replayed").isEmpty());
        assertEquals(1, jpaEffects(ids, key));
    }

    /**
     * A create that returns the persisted entity: its identity id, version and {@code @PrePersist}
     * timestamp are set as the transaction flushes, after the method returned, and a response filter
     * adds its {@code ETag} after the commit. The retry gets exactly what the first caller got.
     */
    @Test
    @Order(9)
    void aJpaCreateIsReplayedAsTheFirstCallerReceivedItWithItsGeneratedIdAndVersion() {
        Http http = new Http(server.uri("once-jpa"));
        String key = Http.newKey();
        HttpResponse<String> first = http.send(createOrder(http, key));
        assertEquals(201, first.statusCode(), first.body());
        assertEquals(database.queryLong("SELECT id FROM jpa_orders WHERE idemkey = ?", key), id(first),
                "the first caller got the id the database generated: " + first.body());
        assertTrue(first.headers().firstValue("ETag").isPresent(), "the response filter's ETag");

        HttpResponse<String> retry = http.send(createOrder(http, key));
        assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse(null));
        assertEquals(201, retry.statusCode());
        assertEquals(first.body(), retry.body(), "byte for byte");
        assertEquals(first.headers().firstValue("ETag"), retry.headers().firstValue("ETag"));
        assertEquals(first.headers().firstValue("Content-Type"), retry.headers().firstValue("Content-Type"));
        assertEquals(1, database.queryLong("SELECT count(*) FROM jpa_orders WHERE idemkey = ?", key));
    }

    /**
     * An update that returns the managed entity: the flush increments its version and its
     * {@code @PreUpdate} callback stamps it. A client doing optimistic locking with the replay must
     * get the version the database holds.
     */
    @Test
    @Order(9)
    void aJpaUpdateIsReplayedWithTheVersionItsFlushWrote() {
        Http http = new Http(server.uri("once-jpa"));
        HttpResponse<String> created = http.send(createOrder(http, Http.newKey()));
        assertEquals(201, created.statusCode(), created.body());
        long id = id(created);
        String key = Http.newKey();
        HttpResponse<String> first = http.send(amendOrder(http, id, key));
        assertEquals(200, first.statusCode(), first.body());
        jakarta.json.JsonObject amended = Http.json(first);
        assertEquals(database.queryLong("SELECT version FROM jpa_orders WHERE id = ?", id), amended.getInt("version"),
                "the version the flush wrote: " + first.body());
        assertTrue(amended.containsKey("updatedAt"), "stamped by @PreUpdate at the flush: " + first.body());

        HttpResponse<String> retry = http.send(amendOrder(http, id, key));
        assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse(null));
        assertEquals(first.body(), retry.body(), "byte for byte");
        assertEquals(first.headers().firstValue("ETag"), retry.headers().firstValue("ETag"));
    }

    /** An {@code @Idempotent} service method returning the entity it persisted: the replay has its id. */
    @Test
    @Order(9)
    void anIdempotentMethodReturningAJpaEntityIsReplayedWithTheIdItGotAtTheFlush() {
        Http http = new Http(server.uri("once-jpa"));
        String key = Http.newKey();
        HttpResponse<String> returned = http.send(http.request("jpa/orders/placed/" + key + "?amount=700")
                .POST(HttpRequest.BodyPublishers.noBody()).build());
        assertEquals(200, returned.statusCode(), returned.body());
        long id = database.queryLong("SELECT id FROM jpa_orders WHERE idemkey = ?", key);
        assertEquals(id, id(returned), returned.body());

        HttpResponse<String> replayed = http.send(http.request("jpa/orders/placed/" + key + "?amount=700")
                .POST(HttpRequest.BodyPublishers.noBody()).build());
        assertEquals(returned.body(), replayed.body(), "the returned entity and the replayed one");
        assertEquals(1, database.queryLong("SELECT count(*) FROM jpa_orders WHERE idemkey = ?", key), "ran once");
    }

    /** The order's id in a response, null if it has none. */
    private static Long id(HttpResponse<String> order) {
        jakarta.json.JsonNumber id = Http.json(order).getJsonNumber("id");
        return id == null ? null : id.longValue();
    }

    private static HttpRequest createOrder(Http http, String key) {
        return createOrder(http, key, null);
    }

    private static HttpRequest createOrder(Http http, String key, String then) {
        HttpRequest.Builder request = http.request("jpa/orders?amount=1250").header(Http.KEY, key);
        if (then != null) {
            request.header("X-Then", then);
        }
        return request.POST(HttpRequest.BodyPublishers.noBody()).build();
    }

    private static HttpRequest amendOrder(Http http, long id, String key) {
        return http.request("jpa/orders/" + id + "?note=gift").header(Http.KEY, key)
                .method("PATCH", HttpRequest.BodyPublishers.noBody()).build();
    }

    private static HttpRequest jpaCharge(Http http, String ids, String key, String then) {
        HttpRequest.Builder request = http.request("jpa/charge/" + ids).header(Http.KEY, key);
        if (then != null) {
            request.header("X-Then", then);
        }
        return request.POST(HttpRequest.BodyPublishers.noBody()).build();
    }

    private static long jpaEffects(String ids, String key) {
        return database.queryLong("SELECT count(*) FROM jpa_" + ids + "_charges WHERE idemkey = ?", key);
    }

    private static String transfer(Http http, String id, String then) {
        return http.send(http.request("calls/transfer/" + id + (then == null ? "" : "?then=" + then))
                .POST(HttpRequest.BodyPublishers.noBody()).build()).body();
    }

    private static long effectId(String key) {
        return database.queryLong("SELECT max(id) FROM effects WHERE idem_key = ?", key);
    }

    private static void crash(String context, String key) throws InterruptedException {
        Http http = new Http(server.uri(context));
        assertThrows(RuntimeException.class, () -> http.send(charge(http, key, "crash")), "the server halts under the request");
        server.await();
        assertEquals(1, effects(key), "the effect committed before the crash");
    }

    private static HttpRequest charge(Http http, String key, String then) {
        HttpRequest.Builder request = http.request(CHARGE).header(Http.KEY, key);
        if (then != null) {
            request.header("X-Then", then);
        }
        return request.POST(HttpRequest.BodyPublishers.noBody()).build();
    }

    static boolean onPostgres() {
        return database.name().equals("PostgreSQL");
    }

    /** Makes the in-progress record whose key is like {@code pattern} expired (a pause past its lease): how many. */
    private static int expireInProgress(String pattern) {
        return database.update("UPDATE idempotency_keys SET expires_at = " + (onPostgres() ? "now() - INTERVAL '1 second'"
                : "UTC_TIMESTAMP(6) - INTERVAL 1 SECOND") + " WHERE record_key LIKE ? AND NOT completed", pattern);
    }

    private static long effects(String key) {
        return database.queryLong("SELECT count(*) FROM effects WHERE idem_key = ?", key);
    }
}
