package io.idemkey.store.redis;

import io.idemkey.spi.AcquireResult;
import io.idemkey.spi.IdempotencyStore;
import io.idemkey.spi.Lease;
import io.idemkey.spi.RateLimit;
import io.idemkey.spi.Renewal;
import io.idemkey.spi.StoreUnavailableException;
import io.idemkey.testing.RedisMonitor;
import io.idemkey.testing.RedisServer;
import io.idemkey.testing.ReplyLosingProxy;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Connection;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;
import redis.clients.jedis.util.JedisClusterCRC16;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import static io.idemkey.testing.Renewals.extended;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RedisIdempotencyStoreTest extends RedisStoreContract {

    private static final Duration TIMEOUT = Duration.ofMillis(500);
    /** Commands the test itself sends to read the statistics (its own client connects and asks). */
    private static final Set<String> TEST_COMMANDS =
            Set.of("info", "config|resetstat", "client|setinfo", "monitor", "echo");
    /** What the Lua scripts call inside Redis (counted by commandstats, but no round trips). */
    private static final Set<String> COMMANDS_IN_SCRIPTS = Set.of("get", "set", "pexpire", "pttl", "del", "incr");

    /** This class's server (a subclass's {@code startRedis} hides this one's: {@link ValkeyIdempotencyStoreTest}, {@link Redis8IdempotencyStoreTest}). */
    static RedisServer server;

    @BeforeAll
    static void startRedis() {
        server = RedisServer.start();
    }

    /**
     * Whether the server has {@code SET ... IFEQ} (Valkey from 8.1, Redis from 8.4; Debian 12's Redis
     * 7.0 has not), by the version it reports: the machine's {@code redis-server} may be either.
     */
    protected boolean conditionalSet() {
        return server.hasConditionalSet();
    }

    @AfterAll
    static void stopRedis() {
        if (server != null) {
            server.close();
        }
    }

    @Override
    protected IdempotencyStore createStore() {
        return RedisIdempotencyStore.open(options());
    }

    /** The shared test Redis, on this class's path (coalesced or not), with short timeouts. */
    private RedisStoreOptions options() {
        return RedisStoreOptions.fromUrl(server.url(), null, null).coalesce(coalesce()).connectTimeout(TIMEOUT).readTimeout(TIMEOUT);
    }

    private static long pttl(String key) {
        try (Jedis jedis = server.client()) {
            return jedis.pttl(key);
        }
    }

    /** The commands Redis received since the last reset, minus those the test sent itself. */
    private static Map<String, Long> storeCommands() {
        Map<String, Long> calls = new LinkedHashMap<>(server.commandCalls());
        calls.keySet().removeAll(TEST_COMMANDS);
        return calls;
    }

    /** Runs each operation once, so that every script is cached and the pool holds a connection. */
    private void warmUp() {
        String key = key("warm-up");
        store.acquire(key, FINGERPRINT, "w", LONG_LOCK);
        store.renew(key, "w", LONG_LOCK);
        store.complete(key, "w", RESPONSE, DAY);
        store.acquire(key("warm-up-2"), FINGERPRINT, "w", LONG_LOCK);
        store.release(key("warm-up-2"), "w");
    }

    private static <T> T timed(Duration limit, Supplier<T> action) {
        long start = System.nanoTime();
        T result = action.get();
        long elapsed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(elapsed < limit.toMillis(), "took " + elapsed + " ms");
        return result;
    }

    private static StoreUnavailableException assertUnavailableWithin(Duration limit, Runnable operation) {
        long start = System.nanoTime();
        StoreUnavailableException e = assertThrows(StoreUnavailableException.class, operation::run);
        long elapsed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(elapsed < limit.toMillis(), "gave up after " + elapsed + " ms");
        return e;
    }

    @Test
    void everyKeyTheStoreWritesHasATtl() {
        String key = key("ttl");
        store.acquire(key, FINGERPRINT, "owner-1", Duration.ofSeconds(30));
        long afterAcquire = pttl(key);
        assertTrue(afterAcquire > 0 && afterAcquire <= 30_000, "PTTL after acquire: " + afterAcquire);

        assertEquals(Renewal.RENEWED, store.renew(key, "owner-1", Duration.ofSeconds(45)));
        long afterRenew = pttl(key);
        assertTrue(afterRenew > 30_000 && afterRenew <= 45_000, "PTTL after renew: " + afterRenew);

        assertTrue(store.complete(key, "owner-1", RESPONSE, Duration.ofHours(24)));
        long afterComplete = pttl(key);
        assertTrue(afterComplete > 45_000 && afterComplete <= 24 * 3_600_000L, "PTTL after complete: " + afterComplete);

        store.acquire(key, FINGERPRINT, "owner-2", Duration.ofSeconds(30));
        assertTrue(pttl(key) > 45_000, "a replay leaves the record's TTL alone");
    }

    @Test
    void nothingTheStoreLeavesInRedisLivesForever() {
        warmUp();
        store.acquire(key("mixed-1"), FINGERPRINT, "a", LONG_LOCK);
        store.acquire(key("mixed-1"), FINGERPRINT, "b", LONG_LOCK);
        store.acquire(key("mixed-1"), OTHER_FINGERPRINT, "c", LONG_LOCK);
        store.acquire(key("mixed-2"), FINGERPRINT, "a", LONG_LOCK);
        store.complete(key("mixed-2"), "a", RESPONSE, DAY);
        store.complete(key("mixed-2"), "stale", RESPONSE, DAY);
        store.release(key("unknown"), "a");
        store.renew(key("unknown-2"), "a", LONG_LOCK);
        store.acquire(key("counted"), FINGERPRINT, "a", LONG_LOCK, new RateLimit(1, Duration.ofMinutes(1)));
        store.acquire(key("counted"), FINGERPRINT, "b", LONG_LOCK, new RateLimit(1, Duration.ofMinutes(1)));
        List<String> keys = new ArrayList<>();
        try (Jedis jedis = server.client()) {
            String cursor = ScanParams.SCAN_POINTER_START;
            do {
                ScanResult<String> page = jedis.scan(cursor);
                keys.addAll(page.getResult());
                cursor = page.getCursor();
            } while (!cursor.equals(ScanParams.SCAN_POINTER_START));
            assertFalse(keys.isEmpty());
            for (String key : keys) {
                assertTrue(jedis.pttl(key) > 0, key + " has no TTL");
            }
        }
        assertFalse(keys.contains(key("unknown")) || keys.contains(key("unknown-2")), "no key is created by a CAS that failed");
    }

    /**
     * The commands the store sent while {@code operations} ran, by name, in order. {@code INFO
     * commandstats} also counts the commands the Lua scripts run inside Redis, so the commands are
     * read with MONITOR and cross-checked against the statistics.
     */
    private static List<String> roundTrips(Runnable operations) {
        return sent(operations).commands();
    }

    /** What the store sent while {@code operations} ran: the commands ({@link #roundTrips}), and the round trips they took. */
    private record Sent(List<String> commands, long roundTrips) {
    }

    /**
     * The commands the store sent while {@code operations} ran ({@link #roundTrips}), and how many
     * round trips they took: Redis's socket reads meanwhile ({@code INFO stats}, less the second
     * {@code INFO}'s own read), one per pipeline of commands the store wrote at once.
     */
    private static Sent sent(Runnable operations) {
        server.resetStats();
        List<String> sent;
        long reads;
        try (RedisMonitor monitor = RedisMonitor.start(server); Jedis stats = server.client()) {
            long readsBefore = RedisServer.socketReads(stats);
            operations.run();
            reads = RedisServer.socketReads(stats) - readsBefore - 1;
            sent = new ArrayList<>(monitor.takeClientCommands());
            sent.removeIf("info"::equals); // the statistics' own, never the store's
        }
        Map<String, Long> calls = storeCommands();
        for (String script : List.of("evalsha", "eval")) {
            long sentCount = sent.stream().filter(script::equals).count();
            assertEquals(sentCount, calls.getOrDefault(script, 0L), "stats " + calls);
        }
        Set<String> others = new java.util.HashSet<>(calls.keySet());
        others.removeAll(Set.of("evalsha", "eval"));
        others.removeAll(COMMANDS_IN_SCRIPTS);
        assertEquals(Set.of(), others, "commands besides the scripts: " + calls);
        return new Sent(sent, reads);
    }

    /**
     * The list of records in progress reads no completed record's response: Redis sends the store
     * about what the in-progress records and the SCAN replies take, however large the completed
     * responses under the same prefix are.
     */
    @Test
    void theListOfRecordsInProgressDoesNotTransferCompletedResponses() {
        String prefix = key("stuck-bytes:");
        byte[] large = new byte[256 * 1024];
        Arrays.fill(large, (byte) 'r');
        int completed = 20;
        for (int i = 0; i < completed; i++) {
            String key = prefix + "done-" + i;
            assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "owner", LONG_LOCK));
            assertTrue(store.complete(key, "owner", large, DAY));
        }
        for (int i = 0; i < 3; i++) {
            assertInstanceOf(AcquireResult.Acquired.class, store.acquire(prefix + "running-" + i, FINGERPRINT, "owner-" + i,
                    LONG_LOCK));
        }
        io.idemkey.spi.StoreInspection inspection = (io.idemkey.spi.StoreInspection) store;
        inspection.inProgress(prefix, "", 100); // the script loaded, the connections made
        try (Jedis stats = server.client()) {
            long before = RedisServer.bytesSent(stats);
            List<String> listed = new ArrayList<>();
            String cursor = "";
            do {
                io.idemkey.spi.StoreInspection.Page page = inspection.inProgress(prefix, cursor, 100);
                page.records().forEach(record -> listed.add(record.recordKey()));
                cursor = page.nextCursor();
            } while (!cursor.isEmpty());
            long sent = RedisServer.bytesSent(stats) - before;
            assertEquals(Set.of(prefix + "running-0", prefix + "running-1", prefix + "running-2"), Set.copyOf(listed));
            assertTrue(sent < 64 * 1024, "Redis sent " + sent + " bytes for a list of 3 records in progress beside "
                    + completed + " completed ones of " + large.length + " bytes each");
        }
    }

    /** The acquire is two plain commands in one round trip, the completion the record script: two round trips. */
    @Test
    void firstExecutionCostsExactlyTwoRoundTrips() {
        warmUp();
        String key = key("round-trips-first");
        Sent sent = sent(() -> {
            assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "owner-1", LONG_LOCK));
            assertTrue(store.complete(key, "owner-1", RESPONSE, DAY));
        });
        assertEquals(List.of("set", "pttl", "evalsha"), sent.commands());
        assertEquals(2, sent.roundTrips(), "round trips");
    }

    /**
     * A completion as the engine makes it (told the fingerprint): where Redis has {@code SET ...
     * IFEQ}, one plain command, no script; where it has not, the first one is refused (a syntax
     * error, the key untouched) and runs the script, and every completion after it runs the script
     * alone. Either way the record is completed, and only by its owner.
     */
    @Test
    void aCompletionIsOneConditionalSetWhereRedisHasOneAndTheScriptWhereNot() {
        warmUp();
        try (IdempotencyStore fresh = RedisIdempotencyStore.open(options())) {
            String key = key("conditional-set");
            assertInstanceOf(AcquireResult.Acquired.class, fresh.acquire(key, FINGERPRINT, "owner-1", LONG_LOCK));
            assertFalse(fresh.complete(key, "owner-2", FINGERPRINT, RESPONSE, DAY), "another owner");
            Sent first = sent(() -> assertTrue(fresh.complete(key, "owner-1", FINGERPRINT, RESPONSE, DAY)));
            assertEquals(conditionalSet() ? List.of("set") : List.of("evalsha"), first.commands(),
                    "after the other owner's completion (where Redis refused IFEQ then, the refusal is remembered)");
            assertEquals(1, first.roundTrips(), "round trips");
            assertTrue(pttl(key) > LONG_LOCK.toMillis(), "the completed record's TTL: " + pttl(key) + " ms");
            AcquireResult replay = fresh.acquire(key, FINGERPRINT, "owner-3", LONG_LOCK);
            assertArrayEquals(RESPONSE, ((AcquireResult.Completed) replay).response());
            assertTrue(fresh.complete(key, "owner-1", FINGERPRINT, "again".getBytes(), DAY),
                    "sent again after its reply was lost: done already");
            assertArrayEquals(RESPONSE, ((AcquireResult.Completed) fresh.acquire(key, FINGERPRINT, "owner-4", LONG_LOCK))
                    .response(), "the first response stays");
        }
        try (IdempotencyStore fresh = RedisIdempotencyStore.open(options())) {
            String key = key("conditional-set-refused");
            fresh.acquire(key, FINGERPRINT, "owner-1", LONG_LOCK);
            Sent first = sent(() -> assertTrue(fresh.complete(key, "owner-1", FINGERPRINT, RESPONSE, DAY)));
            assertEquals(conditionalSet() ? List.of("set") : List.of("set", "evalsha"), first.commands());
            assertEquals(conditionalSet() ? 1 : 2, first.roundTrips(), "round trips");
        }
    }

    @Test
    void replayCostsExactlyOneRoundTrip() {
        warmUp();
        String key = key("round-trips-replay");
        store.acquire(key, FINGERPRINT, "owner-1", LONG_LOCK);
        store.complete(key, "owner-1", RESPONSE, DAY);
        Sent sent = sent(() ->
                assertInstanceOf(AcquireResult.Completed.class, store.acquire(key, FINGERPRINT, "owner-2", LONG_LOCK)));
        assertEquals(List.of("set", "pttl"), sent.commands());
        assertEquals(1, sent.roundTrips(), "round trips");
    }

    @Test
    void conflictAndMismatchCostExactlyOneRoundTripEach() {
        warmUp();
        String key = key("round-trips-conflict");
        store.acquire(key, FINGERPRINT, "owner-1", LONG_LOCK);
        Sent conflict = sent(() ->
                assertInstanceOf(AcquireResult.InProgress.class, store.acquire(key, FINGERPRINT, "owner-2", LONG_LOCK)));
        assertEquals(List.of("set", "pttl"), conflict.commands());
        assertEquals(1, conflict.roundTrips(), "round trips");
        Sent mismatch = sent(() ->
                assertInstanceOf(AcquireResult.Mismatch.class, store.acquire(key, OTHER_FINGERPRINT, "owner-3", LONG_LOCK)));
        assertEquals(List.of("set", "pttl"), mismatch.commands());
        assertEquals(1, mismatch.roundTrips(), "round trips");
    }

    /**
     * An acquire sent again after its reply was lost finds its own record in progress: acquired
     * again, its lease whole again (a renewal, as the record script's acquire does), and no other
     * owner's token acquires it.
     */
    @Test
    void anAcquireSentAgainFindsItsOwnRecordAndRenewsItsLease() {
        warmUp();
        String key = key("own-again");
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "owner-1", Duration.ofSeconds(20)));
        try (Jedis jedis = server.client()) {
            jedis.pexpire(key, 5_000);
            assertEquals(List.of("set", "pttl", "evalsha"), roundTrips(() -> assertInstanceOf(AcquireResult.Acquired.class,
                    store.acquire(key, FINGERPRINT, "owner-1", Duration.ofSeconds(20)))));
            assertTrue(jedis.pttl(key) > 15_000, "the lease is whole again: " + jedis.pttl(key) + " ms left");
        }
        assertInstanceOf(AcquireResult.InProgress.class, store.acquire(key, FINGERPRINT, "owner-2", LONG_LOCK));
        assertTrue(store.complete(key, "owner-1", RESPONSE, DAY));
    }

    /**
     * A Redis before 7.0 refuses {@code SET}'s {@code GET} beside {@code NX} (a syntax error): the
     * first acquire then runs the record script instead, and every acquire after it, with the same
     * answers.
     */
    @Test
    void aRedisBeforeSevenGetsTheScriptsAcquire() {
        warmUp();
        try (ReplyLosingProxy proxy = ReplyLosingProxy.to(server.port());
             IdempotencyStore older = RedisIdempotencyStore.open(RedisStoreOptions.fromUrl(proxy.url(), null, null)
                     .coalesce(coalesce()).connectTimeout(TIMEOUT).readTimeout(TIMEOUT))) {
            proxy.refuseSetGet();
            String key = key("before-seven");
            assertEquals(List.of("set", "pttl", "evalsha"), roundTrips(() ->
                    assertInstanceOf(AcquireResult.Acquired.class, older.acquire(key, FINGERPRINT, "owner-1", LONG_LOCK))),
                    "refused, then the script");
            assertEquals(List.of("evalsha"), roundTrips(() ->
                    assertInstanceOf(AcquireResult.InProgress.class, older.acquire(key, FINGERPRINT, "owner-2", LONG_LOCK))));
            assertTrue(older.complete(key, "owner-1", RESPONSE, DAY));
            assertEquals(List.of("evalsha"), roundTrips(() -> assertArrayEquals(RESPONSE,
                    ((AcquireResult.Completed) older.acquire(key, FINGERPRINT, "owner-3", LONG_LOCK)).response())));
        }
    }

    /** A key that holds something else than one of Idemkey's records is refused, not read as a record, and left as it is. */
    @Test
    void anAcquireOfAKeyHoldingNoRecordIsRefusedAndLeavesIt() {
        String key = key("foreign");
        try (Jedis jedis = server.client()) {
            for (String value : List.of("not a record", "X\u0000\u0000", "P\u0005abc")) { // the last two as short as a record
                jedis.set(key, value);
                RuntimeException refused = assertThrows(RuntimeException.class,
                        () -> store.acquire(key, FINGERPRINT, "owner-1", LONG_LOCK));
                assertTrue(refused.getMessage().contains("holds no record"), refused.toString());
                assertEquals(value, jedis.get(key));
            }
        }
    }

    @Test
    void rateLimitIsCountedInTheAcquireRoundTripAndItsCounterExpiresWithTheWindow() {
        warmUp();
        String key = key("round-trips-rate-limit");
        RateLimit limit = new RateLimit(1, Duration.ofSeconds(30));
        assertEquals(List.of("evalsha"), roundTrips(() ->
                assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "owner-1", LONG_LOCK, limit))));
        assertEquals(List.of("evalsha"), roundTrips(() ->
                assertInstanceOf(AcquireResult.RateLimited.class, store.acquire(key, FINGERPRINT, "owner-2", LONG_LOCK, limit))));
        long counterTtl = pttl(RedisIdempotencyStore.counterKey(key));
        assertTrue(counterTtl > 0 && counterTtl <= 30_000, "the counter lives as long as its window: " + counterTtl);
    }

    /**
     * An acquire whose reply was lost (the script ran, then the connection broke) is sent again by
     * the store on a fresh connection with the same owner token, and finds its own record: acquired.
     * With a rate limit that second sending is the same request, not another, and is not counted
     * again: else, at the limit, it answered 429 although the first sending made the record, and the
     * key then answered 409 until the lease ended.
     */
    @Test
    void aRateLimitedAcquireSentAgainAfterItsReplyWasLostIsNotCountedTwice() {
        RateLimit limit = new RateLimit(1, Duration.ofMinutes(1));
        String key = key("lost-reply-rate-limited");
        try (ReplyLosingProxy proxy = ReplyLosingProxy.to(server.port());
             IdempotencyStore proxied = RedisIdempotencyStore.open(RedisStoreOptions.fromUrl(proxy.url(), null, null).coalesce(coalesce())
                     .connectTimeout(TIMEOUT).readTimeout(TIMEOUT))) {
            proxied.acquire(key("proxy-warm-up"), FINGERPRINT, "w", LONG_LOCK); // a pooled connection
            proxied.complete(key("proxy-warm-up"), "w", RESPONSE, DAY); // the script cached
            server.resetStats();
            proxy.loseNextReply();
            AcquireResult acquired = proxied.acquire(key, FINGERPRINT, "owner-1", LONG_LOCK, limit);
            assertEquals(2L, server.commandCalls().get("evalsha"), "the acquire was sent again after its reply was lost");
            assertEquals(0L, server.commandCalls().getOrDefault("eval", 0L), "the lost reply was the script's, not a NOSCRIPT");
            assertInstanceOf(AcquireResult.Acquired.class, acquired, "the record the first sending made is this request's");
            assertInstanceOf(AcquireResult.RateLimited.class, proxied.acquire(key, FINGERPRINT, "owner-2", LONG_LOCK, limit),
                    "one request counted, so another is beyond the limit of 1");
            assertTrue(proxied.complete(key, "owner-1", RESPONSE, DAY));
        }
    }

    /** A Redis ACL user limited to the key prefix ({@code ~idempotency:*}) may touch the counter too. */
    @Test
    void requestCounterSitsInTheRecordsClusterSlotUnderTheRecordsKey() {
        for (String recordKey : new String[]{"idempotency:alice:8e03978e", "idempotency::k%7B1%7D", "{tenant-7}idempotency::k",
                "idempotency:h:bXlfaGFzaF9vZl90aGVfc2NvcGVfYW5kX3RoZV9rZXk"}) {
            String counter = RedisIdempotencyStore.counterKey(recordKey);
            assertEquals(JedisClusterCRC16.getSlot(recordKey), JedisClusterCRC16.getSlot(counter), counter);
            assertTrue(counter.startsWith(recordKey) && counter.endsWith("#requests"), counter);
            assertFalse(counter.equals(recordKey));
        }
    }

    @Test
    void releaseAndRenewCostExactlyOneRoundTripEach() {
        warmUp();
        String key = key("round-trips-release");
        store.acquire(key, FINGERPRINT, "owner-1", LONG_LOCK);
        assertEquals(List.of("evalsha"), roundTrips(() -> assertEquals(Renewal.RENEWED, store.renew(key, "owner-1", LONG_LOCK))));
        assertEquals(List.of("evalsha"), roundTrips(() -> assertTrue(store.release(key, "owner-1"))));
    }

    @Test
    void leasesRenewedTogetherCostOneRoundTripNotOnePerLease() {
        warmUp();
        List<Lease> leases = acquiredLeases("renew-all", 50);
        boolean[] renewed;
        long socketReads;
        try (Jedis stats = server.client()) {
            long before = RedisServer.socketReads(stats);
            renewed = extended(store.renew(leases));
            socketReads = RedisServer.socketReads(stats) - before - 1; // less this INFO's own read
        }
        assertArrayEquals(allTrue(50), renewed);
        assertTrue(socketReads <= 2, "Redis read the 50 renewals in " + socketReads + " socket reads");
        assertEquals(Collections.nCopies(50, "evalsha"), roundTrips(() -> assertArrayEquals(allTrue(50), extended(store.renew(leases)))),
                "one script call per lease, nothing else");
    }

    @Test
    void afterScriptFlushRenewingLeasesTogetherStillWorks() {
        warmUp();
        List<Lease> leases = acquiredLeases("renew-all-noscript", 3);
        try (Jedis jedis = server.client()) {
            jedis.scriptFlush();
        }
        List<String> sent = roundTrips(() -> assertArrayEquals(allTrue(3), extended(store.renew(leases))));
        assertEquals(List.of("evalsha", "evalsha", "evalsha", "eval", "eval", "eval"), sent);
        assertEquals(Collections.nCopies(3, "evalsha"), roundTrips(() -> assertArrayEquals(allTrue(3), extended(store.renew(leases)))),
                "EVAL cached the script again");
    }

    private List<Lease> acquiredLeases(String name, int count) {
        List<Lease> leases = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String key = key(name + "-" + i);
            assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "owner-" + i, LONG_LOCK));
            leases.add(new Lease(key, "owner-" + i, LONG_LOCK));
        }
        return leases;
    }

    private static boolean[] allTrue(int count) {
        boolean[] values = new boolean[count];
        Arrays.fill(values, true);
        return values;
    }

    @Test
    void afterScriptFlushACompletionStillWorksWithOneExtraRoundTrip() {
        warmUp();
        try (Jedis jedis = server.client()) {
            jedis.scriptFlush();
        }
        String key = key("noscript");
        assertEquals(List.of("set", "pttl"), roundTrips(() ->
                assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "owner-1", LONG_LOCK))),
                "an acquire needs no script");
        assertEquals(List.of("evalsha", "eval"), roundTrips(() -> assertTrue(store.complete(key, "owner-1", RESPONSE, DAY))));
        String next = key("noscript-next");
        store.acquire(next, FINGERPRINT, "owner-2", LONG_LOCK);
        assertEquals(List.of("evalsha"), roundTrips(() -> assertTrue(store.complete(next, "owner-2", RESPONSE, DAY))),
                "EVAL cached the script again");
    }

    @Test
    void afterRedisRestartsTheFirstReadinessCheckIsUp() throws Exception {
        fillPoolWithConnections(8);
        server.restart();
        assertTrue(store.isAvailable(), "the readiness check's PING retries on a fresh connection too");
    }

    @Test
    void afterRedisRestartsTheNextAcquireSucceedsOnTheSameStore() throws Exception {
        fillPoolWithConnections(8);
        server.restart();
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key("after-restart"), FINGERPRINT, "owner-1", LONG_LOCK));
        assertTrue(store.complete(key("after-restart"), "owner-1", RESPONSE, DAY));
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key("after-restart-2"), FINGERPRINT, "owner-1", LONG_LOCK));
        assertTrue(store.isAvailable());
    }

    @Test
    void redisOutOfMemoryIsAnOutageNotADefect() {
        String completed = key("oom-completed");
        String inProgress = key("oom-in-progress");
        store.acquire(completed, FINGERPRINT, "owner-1", LONG_LOCK);
        assertTrue(store.complete(completed, "owner-1", RESPONSE, DAY));
        store.acquire(inProgress, FINGERPRINT, "owner-1", LONG_LOCK);
        try (Jedis jedis = server.client()) {
            jedis.configSet("maxmemory", "1");
            jedis.configSet("maxmemory-policy", "noeviction");
            try {
                StoreUnavailableException refused = assertThrows(StoreUnavailableException.class,
                        () -> store.acquire(key("oom"), FINGERPRINT, "owner-1", LONG_LOCK));
                assertTrue(refused.getMessage().contains("OOM"), refused.getMessage());
                // what needs no write still gets its answer from a full Redis, as it did through the script
                assertArrayEquals(RESPONSE, ((AcquireResult.Completed) store.acquire(completed, FINGERPRINT, "owner-2",
                        LONG_LOCK)).response(), "a replay from a full Redis");
                assertInstanceOf(AcquireResult.InProgress.class, store.acquire(inProgress, FINGERPRINT, "owner-2", LONG_LOCK),
                        "a conflict on a full Redis");
            } finally {
                jedis.configSet("maxmemory", "0");
            }
        }
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key("oom"), FINGERPRINT, "owner-1", LONG_LOCK));
    }

    /**
     * A full Redis refuses a completion's {@code SET ... IFEQ} before it looks at the key: the script
     * answers for that call (another owner's completion: false, not an outage). A key that holds no
     * string fails its completion with the script's error and is left as it is. Neither makes the
     * store give up {@code IFEQ}: where Redis has it, the next completion is one again.
     */
    @Test
    void aCompletionRefusedByAFullRedisOrMeetingAForeignKeyRunsTheScriptForThatCallOnly() {
        warmUp();
        String lost = key("oom-lease-lost");
        store.acquire(lost, FINGERPRINT, "owner-1", LONG_LOCK);
        try (Jedis jedis = server.client()) {
            jedis.configSet("maxmemory", "1");
            jedis.configSet("maxmemory-policy", "noeviction");
            try {
                assertFalse(store.complete(lost, "owner-2", FINGERPRINT, RESPONSE, DAY), "not its lease, on a full Redis too");
            } finally {
                jedis.configSet("maxmemory", "0");
            }
            String foreign = key("oom-foreign");
            jedis.hset(foreign, "field", "value");
            assertThrows(RuntimeException.class, () -> store.complete(foreign, "owner-1", FINGERPRINT, RESPONSE, DAY));
            assertEquals("value", jedis.hget(foreign, "field"), "left as it was");
        }
        String key = key("oom-after");
        store.acquire(key, FINGERPRINT, "owner-1", LONG_LOCK);
        assertEquals(conditionalSet() ? List.of("set") : List.of("evalsha"),
                roundTrips(() -> assertTrue(store.complete(key, "owner-1", FINGERPRINT, RESPONSE, DAY))));
    }

    /**
     * A cluster's topology refresh closes the pool of a node that left the cluster, and a call that
     * is taking a connection from that pool just then gets Jedis's "Could not get a resource from
     * the pool" around the pool's {@code IllegalStateException} (seen once, in a cluster failover
     * on a loaded machine). Nothing was sent: the call goes again once, as on a broken connection,
     * and a pool still closed is an outage (503, or fail-open), never a store defect.
     */
    @Test
    void aCallWhosePoolIsClosedUnderItIsAnOutageNotADefect() {
        RedisStoreOptions options = options();
        AtomicReference<RedisStoreOptions.Connected> connected = new AtomicReference<>();
        try (RedisIdempotencyStore closing = keepingItsClient(options, connected)) {
            assertInstanceOf(AcquireResult.Acquired.class, closing.acquire(key("pool-open"), FINGERPRINT, "owner-1", LONG_LOCK));
            ((RedisClient) connected.get().client()).getPool().close();

            for (Runnable call : List.<Runnable>of(
                    () -> closing.acquire(key("pool-closed"), FINGERPRINT, "owner-1", LONG_LOCK),
                    () -> closing.complete(key("pool-open"), "owner-1", RESPONSE, DAY),
                    () -> closing.renew(List.of(new Lease(key("pool-open"), "owner-1", LONG_LOCK))),
                    () -> closing.release(key("pool-open"), "owner-1"))) {
                StoreUnavailableException outage = assertThrows(StoreUnavailableException.class, call::run);
                assertTrue(outage.getMessage().contains("Could not get a resource from the pool"), outage.getMessage());
            }
        }
    }

    /**
     * The same pool closed while a call waits for one of its connections (all are taken: a master
     * that vanished holds them until the read timeout): the pool interrupts its waiters, and the
     * call is an outage too.
     */
    @Test
    void aCallWaitingForAConnectionWhenThePoolClosesIsAnOutageNotADefect() throws Exception {
        RedisStoreOptions options = options().poolMaxTotal(1).poolMaxWait(Duration.ofSeconds(30));
        AtomicReference<RedisStoreOptions.Connected> connected = new AtomicReference<>();
        try (RedisIdempotencyStore closing = keepingItsClient(options, connected)) {
            assertInstanceOf(AcquireResult.Acquired.class, closing.acquire(key("pool-waited"), FINGERPRINT, "owner-1", LONG_LOCK));
            RedisClient client = (RedisClient) connected.get().client();
            try (Connection taken = client.getPool().getResource()) {
                CompletableFuture<Object> waiting = CompletableFuture.supplyAsync(
                        () -> closing.acquire(key("pool-waiting"), FINGERPRINT, "owner-1", LONG_LOCK));
                await().atMost(Duration.ofSeconds(10)).until(() -> client.getPool().getNumWaiters() == 1);
                client.getPool().close();
                ExecutionException outcome = assertThrows(ExecutionException.class, () -> waiting.get(10, TimeUnit.SECONDS));
                assertInstanceOf(StoreUnavailableException.class, outcome.getCause(), String.valueOf(outcome.getCause()));
            }
        }
    }

    /** A store as {@link RedisIdempotencyStore#open(RedisStoreOptions)} makes it, whose client the test can reach. */
    private static RedisIdempotencyStore keepingItsClient(RedisStoreOptions options,
                                                          AtomicReference<RedisStoreOptions.Connected> connected) {
        return RedisIdempotencyStore.openWith(options, () -> {
            connected.set(options.createClient(null));
            return connected.get();
        }, () -> { });
    }

    /**
     * A Redis restarting with data answers {@code -LOADING} until its dataset is back in memory. The
     * pooled connection is broken by the restart, so the command goes through the retry on a fresh
     * connection: the reply there must be an outage too (503, or fail-open), never a store defect.
     */
    @Test
    void redisLoadingItsDataAfterARestartIsAnOutageNotADefect() {
        try (RedisServer loading = RedisServer.start("--enable-debug-command", "local");
             IdempotencyStore store = RedisIdempotencyStore.open(RedisStoreOptions.fromUrl(loading.url(), null, null).coalesce(coalesce())
                     .connectTimeout(TIMEOUT).readTimeout(TIMEOUT))) {
            assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key("before"), FINGERPRINT, "owner-1", LONG_LOCK));
            assertTrue(store.complete(key("before"), "owner-1", RESPONSE, DAY));
            try (Jedis jedis = new Jedis("127.0.0.1", loading.port(), 120_000)) {
                // about 200 MB that the restarted server loads from its dump for a second or more
                jedis.sendCommand(() -> "DEBUG".getBytes(), "POPULATE", "2000000", "filler", "100");
                jedis.save();
            }
            loading.restartWithoutWaitingForItsData(); // returns as soon as the server answers, LOADING included
            StoreUnavailableException loadingReply = assertThrows(StoreUnavailableException.class,
                    () -> store.acquire(key("while-loading"), FINGERPRINT, "owner-1", LONG_LOCK));
            assertTrue(loadingReply.getMessage().contains("LOADING"), loadingReply.getMessage());
            await().atMost(Duration.ofSeconds(60)).until(store::isAvailable);
            assertInstanceOf(AcquireResult.Completed.class, store.acquire(key("before"), FINGERPRINT, "owner-2", LONG_LOCK),
                    "the record came back with the dump");
            try (Jedis jedis = new Jedis("127.0.0.1", loading.port(), 120_000)) { // 2M keys: slow on a busy machine
                jedis.flushAll();
                jedis.save(); // leaves an empty dump, not 200 MB, in the server's temporary directory
            }
        }
    }

    @Test
    void whileRedisIsDownEveryOperationFailsFastAsUnavailableAndWorksAgainAfterRestart() {
        warmUp();
        Duration limit = Duration.ofSeconds(3);
        server.stop();
        try {
            StoreUnavailableException e = assertUnavailableWithin(limit,
                    () -> store.acquire(key("outage"), FINGERPRINT, "owner-1", LONG_LOCK));
            assertTrue(e.getMessage().contains("127.0.0.1:" + server.port()), e.getMessage());
            assertUnavailableWithin(limit, () -> store.acquire(key("outage"), FINGERPRINT, "owner-1", LONG_LOCK));
            assertUnavailableWithin(limit, () -> store.complete(key("outage"), "owner-1", RESPONSE, DAY));
            assertUnavailableWithin(limit, () -> store.release(key("outage"), "owner-1"));
            assertUnavailableWithin(limit, () -> store.renew(key("outage"), "owner-1", LONG_LOCK));
            assertFalse(timed(limit, store::isAvailable));
        } finally {
            server.restart();
        }
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key("outage"), FINGERPRINT, "owner-1", LONG_LOCK));
        assertTrue(store.complete(key("outage"), "owner-1", RESPONSE, DAY));
        assertTrue(store.isAvailable());
    }

    @Test
    void aRedisThatStopsAnsweringFailsFastWithinTheReadTimeout() throws Exception {
        warmUp();
        String pid;
        try (Jedis jedis = server.client()) {
            pid = jedis.info("server").lines().filter(l -> l.startsWith("process_id:"))
                    .map(l -> l.substring("process_id:".length()).trim()).findFirst().orElseThrow();
        }
        signal("STOP", pid);
        try {
            long start = System.nanoTime();
            assertThrows(StoreUnavailableException.class,
                    () -> store.acquire(key("hung"), FINGERPRINT, "owner-1", LONG_LOCK));
            long elapsed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(elapsed >= TIMEOUT.toMillis() - 50 && elapsed < 2 * TIMEOUT.toMillis() + 500,
                    "gave up after " + elapsed + " ms with a read timeout of " + TIMEOUT.toMillis() + " ms: one wait, not two");
        } finally {
            signal("CONT", pid);
        }
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key("after-hang"), FINGERPRINT, "owner-1", LONG_LOCK));
    }

    /**
     * A Redis that vanished without a TCP reset (a dead host, a partition) does not even accept a
     * connection: the connect times out, which Jedis reports as a suppressed exception of its
     * "Failed to connect". That is a timeout too: the store gives up after one connect timeout
     * (trying again on a fresh connection would wait as long again, for nothing).
     */
    @Test
    void aRedisThatAcceptsNoConnectionFailsWithinOneConnectTimeout() {
        Duration connectTimeout = Duration.ofSeconds(1);
        try (RedisServer vanishing = RedisServer.start();
             IdempotencyStore fresh = RedisIdempotencyStore.open(RedisStoreOptions.fromUrl(vanishing.url(), null, null).coalesce(coalesce())
                     .connectTimeout(connectTimeout).readTimeout(Duration.ofSeconds(10)))) {
            vanishing.vanish();
            try {
                long start = System.nanoTime();
                StoreUnavailableException e = assertThrows(StoreUnavailableException.class,
                        () -> fresh.acquire(key("vanished"), FINGERPRINT, "owner-1", LONG_LOCK));
                long elapsed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertTrue(elapsed >= connectTimeout.toMillis() - 50 && elapsed < connectTimeout.toMillis() * 3 / 2,
                        "gave up after " + elapsed + " ms with a connect timeout of " + connectTimeout.toMillis()
                                + " ms: one wait, not two (" + e.getMessage() + ")");
            } finally {
                vanishing.resume();
            }
            // the SYNs the full accept queue dropped are sent again after a second: wait until Redis has
            // accepted the backlog and answers, else the next connect may time out on a busy machine
            await().atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() -> {
                try (Jedis probe = new Jedis("127.0.0.1", vanishing.port(), 5_000)) {
                    return "PONG".equals(probe.ping());
                }
            });
            assertInstanceOf(AcquireResult.Acquired.class, fresh.acquire(key("back"), FINGERPRINT, "owner-1", LONG_LOCK));
        }
    }

    private static void signal(String signal, String pid) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + signal, pid).inheritIO().start();
        assertTrue(kill.waitFor(5, TimeUnit.SECONDS) && kill.exitValue() == 0, "kill -" + signal + " " + pid);
    }

    @Test
    void descriptionNeverShowsThePassword() {
        RedisStoreOptions options = RedisStoreOptions.fromUrl("redis://user:s3cr3t@127.0.0.1:6390/2", null, null);
        assertEquals("redis://user@127.0.0.1:6390/2", options.description());
        try (RedisIdempotencyStore unopened = RedisIdempotencyStore.open(options)) {
            assertFalse(unopened.toString().contains("s3cr3t"));
        }
    }
}
