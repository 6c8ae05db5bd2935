package io.idemkey.core;

import io.idemkey.core.IdempotencyMetrics.Event;
import io.idemkey.spi.RateLimit;
import io.idemkey.spi.StoreAccessDeniedException;
import io.idemkey.store.redis.RedisIdempotencyStore;
import io.idemkey.store.redis.RedisStoreOptions;
import io.idemkey.testing.LogCapture;
import io.idemkey.testing.RedisCluster;
import io.idemkey.testing.RedisSentinels;
import io.idemkey.testing.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.util.JedisClusterCRC16;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.logging.Level;
import java.util.logging.LogRecord;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Idemkey on Redis as the user docs/security.md describes, created on every server of a Sentinel
 * group (1 master, 2 replicas, 3 sentinels) with the {@code ACL SETUSER} line the page shows, read
 * from the page itself: the status table (first execution, replay, 409, 422), the rate limit, the
 * list of records in progress, completions waiting for a replica and a failover all work, and the
 * check the store makes when the application starts passes. A user without one permission, or
 * credentials Redis does not accept, fail that check naming what was refused, and a request then
 * gets 503, counted as a refusal, never as a store outage, and logged once without a stack trace.
 */
class RedisAclUserTest {

    private static final String PREFIX = "idempotency:";
    private static final String PASSWORD = "acl-user-password";
    private static final Duration TIMEOUT = Duration.ofSeconds(1);
    private static final IdempotencyPolicy POLICY =
            new IdempotencyPolicy(Duration.ofHours(1), Duration.ofSeconds(5), true, Set.of(), false, Duration.ZERO);
    private static final IdempotencyPolicy FAIL_OPEN =
            new IdempotencyPolicy(Duration.ofHours(1), Duration.ofSeconds(5), true, Set.of(), true, Duration.ZERO);
    private static final byte[] FINGERPRINT = fingerprint("{\"amount\":10}");
    private static final byte[] OTHER_FINGERPRINT = fingerprint("{\"amount\":11}");
    private static final StoredResponse CREATED = new StoredResponse(201,
            List.of(new StoredResponse.Header("Content-Type", "application/json")), "{\"id\":42}".getBytes(StandardCharsets.UTF_8));

    private static RedisSentinels sentinels;
    private static ScheduledExecutorService timers;

    @RegisterExtension
    final LogCapture engineLog = new LogCapture(IdempotencyEngine.class.getName());

    @BeforeAll
    static void startSentinelsWithTheDocumentedUser() throws IOException {
        sentinels = RedisSentinels.start();
        timers = Executors.newScheduledThreadPool(2);
        List<String> rule = documentedRule();
        List<RedisServer> servers = new ArrayList<>(sentinels.replicas());
        servers.add(sentinels.master());
        for (RedisServer server : servers) {
            setUser(server, "idemkey", rule);
        }
    }

    @AfterAll
    static void stopSentinels() {
        timers.shutdownNow();
        sentinels.close();
    }

    /**
     * The words after {@code ACL SETUSER idemkey reset on >PASSWORD} on docs/security.md, which must
     * be the rule the store's messages give for the default prefix.
     */
    private static List<String> documentedRule() throws IOException {
        String command = "ACL SETUSER idemkey reset on >PASSWORD ";
        String line = Files.readAllLines(Path.of("docs/security.md")).stream().filter(l -> l.startsWith(command))
                .findFirst().orElseThrow(() -> new AssertionError("docs/security.md shows no '" + command + "...'"));
        String rule = line.substring(command.length()).strip();
        assertEquals(RedisIdempotencyStore.aclRule(PREFIX), rule, "the documented rule is the one the store names");
        return List.of(rule.split(" +"));
    }

    /** {@code ACL SETUSER <name> reset on ><password> <rule...>}, as the default user of the server. */
    private static void setUser(RedisServer server, String name, List<String> rule) {
        List<String> arguments = new ArrayList<>(List.of("SETUSER", name, "reset", "on", ">" + PASSWORD));
        arguments.addAll(rule);
        try (Jedis jedis = server.client()) {
            Object reply = jedis.sendCommand(Protocol.Command.ACL, arguments.toArray(String[]::new));
            assertEquals("OK", new String((byte[]) reply, StandardCharsets.UTF_8));
        }
    }

    private static RedisStoreOptions sentineled(String user, String password) {
        return RedisStoreOptions.fromUrl("redis://ignored", user, password)
                .sentinel(RedisSentinels.MASTER_NAME, sentinels.sentinels()).connectTimeout(TIMEOUT).readTimeout(TIMEOUT);
    }

    private static IdempotencyEngine engine(RedisIdempotencyStore store, IdempotencyMetrics metrics, RateLimit limit) {
        return IdempotencyEngine.builder(store, new ExecutorScheduler(timers)).metrics(metrics).rateLimit(limit)
                .replayCacheBytes(0) // every decision from Redis
                .build();
    }

    private static Decision begin(IdempotencyEngine engine, String key, byte[] fingerprint, IdempotencyPolicy policy) {
        return engine.begin(RecordKey.of(PREFIX, "alice", key), key, fingerprint, policy, "POST /orders");
    }

    @Test
    void theDocumentedUserRunsTheStatusTableTheRateLimitTheListOfRecordsInProgressAndAFailover() {
        IdempotencyMetrics metrics = new IdempotencyMetrics();
        try (RedisIdempotencyStore store = RedisIdempotencyStore.open(sentineled("idemkey", PASSWORD)
                .waitReplicas(1, Duration.ofMillis(500)))) {
            store.checkPermissions(PREFIX, true, true);
            IdempotencyEngine engine = engine(store, metrics, new RateLimit(5, Duration.ofMinutes(1)));
            RecordAdmin admin = new RecordAdmin(store, PREFIX, RecordIdentifiers.PLAIN, RecordCodec.PLAIN, Duration.ofHours(1),
                    Clock.systemUTC(), storeKey -> { });
            String key = UUID.randomUUID().toString();

            Execution first = assertInstanceOf(Decision.Proceed.class, begin(engine, key, FINGERPRINT, POLICY)).execution();
            assertInstanceOf(Decision.Conflict.class, begin(engine, key, FINGERPRINT, POLICY), "409 while it runs");
            assertInstanceOf(Decision.Mismatch.class, begin(engine, key, OTHER_FINGERPRINT, POLICY), "422 for another request");
            assertEquals(List.of(RecordKey.of(PREFIX, "alice", key)), admin.stuck(Duration.ZERO, "", 10).records().stream()
                    .map(RecordAdmin.KeyState::storeKey).toList(), "the list of records in progress");
            first.complete(CREATED);
            Decision.Replay replay = assertInstanceOf(Decision.Replay.class, begin(engine, key, FINGERPRINT, POLICY));
            assertEquals(201, replay.response().status());
            assertArrayEquals(CREATED.body(), replay.response().body());
            assertInstanceOf(Decision.Replay.class, begin(engine, key, FINGERPRINT, POLICY), "the fifth request of 5");
            assertInstanceOf(Decision.RateLimited.class, begin(engine, key, FINGERPRINT, POLICY), "the sixth: 429");

            RedisServer old = sentinels.master();
            old.awaitReplicated(sentinels.replicas());
            sentinels.killMasterAndAwaitFailover();
            String after = UUID.randomUUID().toString();
            await("the store follows the promoted replica").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                    .until(() -> begin(engine, after, FINGERPRINT, POLICY) instanceof Decision.Proceed proceed
                            && complete(proceed));
            assertInstanceOf(Decision.Replay.class, begin(engine, after, FINGERPRINT, POLICY), "on the promoted replica");
            assertInstanceOf(Decision.RateLimited.class, begin(engine, key, FINGERPRINT, POLICY),
                    "the record and its counter survived the failover");
            store.checkPermissions(PREFIX, true, true);
        }
        assertEquals(0, metrics.get(Event.STORE_ACCESS_DENIED), metrics.snapshot().toString());
        assertTrue(engineLog.records().stream().noneMatch(r -> r.getLevel() == Level.SEVERE), engineLog.messages().toString());
    }

    /**
     * A Redis Cluster (3 masters, 3 replicas), the user on every node: the status table and the rate
     * limit on keys of every master, the list of records in progress across the masters, and a key
     * whose slot is being migrated, followed with {@code ASKING}.
     */
    @Test
    void theDocumentedUserWorksOnARedisClusterAcrossMastersAndASlotBeingMigrated() throws IOException {
        IdempotencyMetrics metrics = new IdempotencyMetrics();
        try (RedisCluster cluster = RedisCluster.start(3)) {
            List<String> rule = documentedRule();
            cluster.nodes().forEach(node -> setUser(node, "idemkey", rule));
            try (RedisIdempotencyStore store = RedisIdempotencyStore.open(RedisStoreOptions.fromUrl("redis://ignored", "idemkey",
                    PASSWORD).cluster(cluster.seeds()).connectTimeout(TIMEOUT).readTimeout(TIMEOUT))) {
                store.checkPermissions(PREFIX, true, true);
                IdempotencyEngine engine = engine(store, metrics, new RateLimit(4, Duration.ofMinutes(1)));
                RecordAdmin admin = new RecordAdmin(store, PREFIX, RecordIdentifiers.PLAIN, RecordCodec.PLAIN,
                        Duration.ofHours(1), Clock.systemUTC(), storeKey -> { });
                List<String> keys = new ArrayList<>();
                List<Execution> running = new ArrayList<>();
                for (int i = 0; i < 12; i++) {
                    String key = UUID.randomUUID().toString();
                    keys.add(key);
                    running.add(assertInstanceOf(Decision.Proceed.class, begin(engine, key, FINGERPRINT, POLICY)).execution());
                    assertInstanceOf(Decision.Conflict.class, begin(engine, key, FINGERPRINT, POLICY));
                    assertInstanceOf(Decision.Mismatch.class, begin(engine, key, OTHER_FINGERPRINT, POLICY));
                }
                assertTrue(keys.stream().map(key -> cluster.masterOf(JedisClusterCRC16.getSlot(RecordKey.of(PREFIX, "alice", key))))
                        .distinct().count() > 1, "keys on more than one master");
                List<String> listed = new ArrayList<>();
                String cursor = "";
                do {
                    RecordAdmin.StuckPage page = admin.stuck(Duration.ZERO, cursor, 100);
                    page.records().forEach(record -> listed.add(record.storeKey()));
                    cursor = page.nextCursor();
                } while (!cursor.isEmpty());
                assertEquals(keys.stream().map(key -> RecordKey.of(PREFIX, "alice", key)).sorted().toList(),
                        listed.stream().sorted().toList(), "every master's records in progress");
                running.forEach(execution -> execution.complete(CREATED));

                String moving = keys.get(0);
                int slot = JedisClusterCRC16.getSlot(RecordKey.of(PREFIX, "alice", moving));
                RedisServer target = cluster.masters().stream().filter(master -> master != cluster.masterOf(slot))
                        .findFirst().orElseThrow();
                RedisCluster.Migration migration = cluster.beginMigration(slot, target);
                assertEquals(2, migration.moveKeys(2), "the record and its counter, in one slot");
                assertInstanceOf(Decision.Replay.class, begin(engine, moving, FINGERPRINT, POLICY), "followed with ASKING");
                assertInstanceOf(Decision.RateLimited.class, begin(engine, moving, FINGERPRINT, POLICY), "its fifth request");
                migration.finish();
                for (String key : keys.subList(1, keys.size())) {
                    assertInstanceOf(Decision.Replay.class, begin(engine, key, FINGERPRINT, POLICY));
                }
            }
        }
        assertEquals(0, metrics.get(Event.STORE_ACCESS_DENIED), metrics.snapshot().toString());
        assertEquals(0, metrics.get(Event.STORE_ERROR), metrics.snapshot().toString());
    }

    private static boolean complete(Decision.Proceed proceed) {
        proceed.execution().complete(CREATED);
        return true;
    }

    @Test
    void aUserWithoutOneCommandFailsTheCheckNamingWhatWasRefusedAndRequestsAreRefusedNotAnOutage() {
        List<String> withoutIncr = Arrays.stream(RedisIdempotencyStore.aclRule(PREFIX).split(" +"))
                .filter(word -> !word.equals("+incr")).toList();
        RedisServer master = sentinels.master();
        setUser(master, "no-incr", withoutIncr);
        IdempotencyMetrics metrics = new IdempotencyMetrics();
        try (RedisIdempotencyStore store = RedisIdempotencyStore.open(RedisStoreOptions.fromUrl(master.url(), "no-incr", PASSWORD)
                .connectTimeout(TIMEOUT).readTimeout(TIMEOUT))) {
            store.checkPermissions(PREFIX, false, true); // no rate limit: INCR is not needed
            StoreAccessDeniedException refused = assertThrows(StoreAccessDeniedException.class,
                    () -> store.checkPermissions(PREFIX, true, true));
            assertTrue(refused.getMessage().contains("refuses a rate-limited acquire of idempotency:permission-check-")
                    && refused.getMessage().contains("the record script calls, Redis refuses INCR (NOPERM")
                    && refused.getMessage().contains(RedisIdempotencyStore.aclRule(PREFIX)), refused.getMessage());

            IdempotencyEngine engine = engine(store, metrics, new RateLimit(5, Duration.ofMinutes(1)));
            for (int i = 0; i < 3; i++) {
                assertInstanceOf(Decision.Unavailable.class, begin(engine, UUID.randomUUID().toString(), FINGERPRINT, FAIL_OPEN),
                        "503, even where the endpoint fails open");
            }
        }
        assertRefusedNotAnOutage(metrics, 3);
    }

    @Test
    void aWrongPasswordFailsTheCheckAndRequestsAreRefusedNotAnOutage() {
        IdempotencyMetrics metrics = new IdempotencyMetrics();
        try (RedisIdempotencyStore store = RedisIdempotencyStore.open(sentineled("idemkey", "not-" + PASSWORD))) {
            StoreAccessDeniedException refused = assertThrows(StoreAccessDeniedException.class,
                    () -> store.checkPermissions(PREFIX, true, true));
            assertTrue(refused.getMessage().contains("does not accept the user and password Idemkey connects with: WRONGPASS"),
                    refused.getMessage());
            IdempotencyEngine engine = engine(store, metrics, null);
            for (int i = 0; i < 3; i++) {
                assertInstanceOf(Decision.Unavailable.class, begin(engine, UUID.randomUUID().toString(), FINGERPRINT, FAIL_OPEN));
            }
        }
        assertRefusedNotAnOutage(metrics, 3);
    }

    /** Counted as refusals, none as a store error or a request run unprotected; one SEVERE line, without a stack trace. */
    private void assertRefusedNotAnOutage(IdempotencyMetrics metrics, int requests) {
        assertEquals(requests, metrics.get(Event.STORE_ACCESS_DENIED), metrics.snapshot().toString());
        assertEquals(0, metrics.get(Event.STORE_ERROR), metrics.snapshot().toString());
        assertEquals(0, metrics.get(Event.FAIL_OPEN), metrics.snapshot().toString());
        List<LogRecord> severe = engineLog.records().stream().filter(r -> r.getLevel() == Level.SEVERE).toList();
        assertEquals(1, severe.size(), engineLog.messages().toString());
        assertNull(severe.get(0).getThrown(), "no stack trace");
        assertTrue(severe.get(0).getMessage().contains("store-access-denied"), severe.get(0).getMessage());
    }

    private static byte[] fingerprint(String body) {
        return new Fingerprint().of("POST", "/orders", List.of(), true, body.getBytes(StandardCharsets.UTF_8), Set.of());
    }
}
