package io.idemkey.store.redis;

import io.idemkey.spi.AcquireResult;
import io.idemkey.spi.StoreUnavailableException;
import io.idemkey.testing.RedisServer;
import io.idemkey.testing.ReplyLosingProxy;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The coalescing call path ({@link CoalescedCalls}) with real threads on a real redis-server: calls
 * ready together travel together, a lone call is not held back, and a batch that gets no answer
 * fails exactly the calls it carried, each then classified and retried as a call of its own.
 */
class CoalescedCallsTest {

    private static final byte[] FINGERPRINT = new byte[16];
    private static final byte[] RESPONSE = "{\"paid\":true}".getBytes();
    private static final Duration LOCK = Duration.ofMinutes(5);
    private static final Duration DAY = Duration.ofHours(24);

    private static RedisServer server;
    private final String namespace = "coalesced:" + UUID.randomUUID() + ":";

    @BeforeAll
    static void startRedis() {
        server = RedisServer.start();
    }

    @AfterAll
    static void stopRedis() {
        if (server != null) {
            server.close();
        }
    }

    private static RedisIdempotencyStore open(String url, boolean coalesce, Duration timeout) {
        return RedisIdempotencyStore.open(RedisStoreOptions.fromUrl(url, null, null).coalesce(coalesce)
                .connectTimeout(timeout).readTimeout(timeout));
    }

    private String key(String name) {
        return namespace + name;
    }

    /** {@code threads} callers started together, each running {@code body} with its number; their results. */
    private static <T> List<T> together(int threads, IntCallable<T> body) throws Exception {
        CyclicBarrier barrier = new CyclicBarrier(threads);
        ExecutorService executor = Executors.newFixedThreadPool(threads);
        try {
            List<Future<T>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int caller = t;
                futures.add(executor.submit((Callable<T>) () -> {
                    barrier.await(10, TimeUnit.SECONDS);
                    return body.call(caller);
                }));
            }
            List<T> results = new ArrayList<>();
            for (Future<T> future : futures) {
                results.add(future.get(60, TimeUnit.SECONDS));
            }
            return results;
        } finally {
            executor.shutdownNow();
        }
    }

    private interface IntCallable<T> {
        T call(int n) throws Exception;
    }

    /**
     * 32 callers at once, each acquiring and completing 25 keys: far fewer pipelines than calls
     * (counted by the store), and far fewer socket reads by Redis than calls (counted by Redis,
     * {@code INFO stats}), every call answered as alone.
     */
    @Test
    void callsReadyTogetherTravelAsOnePipelineAndRedisReadsThemTogether() throws Exception {
        try (RedisIdempotencyStore store = open(server.url(), true, Duration.ofSeconds(5));
             Jedis stats = server.client()) {
            store.acquire(key("warm-up"), FINGERPRINT, "w", LOCK);
            store.complete(key("warm-up"), "w", RESPONSE, DAY); // the script cached
            CoalescedCalls coalesced = store.coalesced();
            long pipelinesBefore = coalesced.pipelines();
            long callsBefore = coalesced.calls();
            long readsBefore = RedisServer.socketReads(stats);
            int threads = 32;
            int keys = 25;
            List<Integer> done = together(threads, caller -> {
                int completed = 0;
                for (int i = 0; i < keys; i++) {
                    String key = key("together-" + caller + "-" + i);
                    assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "o-" + caller, LOCK));
                    completed += store.complete(key, "o-" + caller, RESPONSE, DAY) ? 1 : 0;
                }
                return completed;
            });
            long reads = RedisServer.socketReads(stats) - readsBefore - 1; // less this INFO's own read
            long pipelines = coalesced.pipelines() - pipelinesBefore;
            long calls = coalesced.calls() - callsBefore;

            assertEquals(threads * keys, done.stream().mapToInt(Integer::intValue).sum(), "every completion applied");
            assertEquals(2L * threads * keys, calls, "each call sent once");
            System.out.printf("%d calls from %d callers in %d pipelines (%.1f calls each), %d socket reads by Redis%n",
                    calls, threads, pipelines, (double) calls / pipelines, reads);
            assertTrue(pipelines * 2 < calls, calls + " calls in " + pipelines + " pipelines: fewer than 2 a pipeline");
            assertTrue(reads * 2 < calls, calls + " calls in " + reads + " socket reads by Redis: fewer than 2 a read");
        }
    }

    /**
     * One caller alone: each call goes out at once, in a pipeline of its own, and takes no longer
     * than on the path without coalescing (the two stores measured in turn, the median of each),
     * even with the longest linger the setting allows (a batch waits for company only once calls
     * have been arriving together).
     */
    @Test
    void aLoneCallGoesOutAtOnceAndIsNotHeldBack() {
        try (RedisIdempotencyStore coalescing = RedisIdempotencyStore.open(RedisStoreOptions.fromUrl(server.url(), null, null)
                .coalesce(true).coalesceLinger(RedisStoreOptions.MAX_COALESCE_LINGER).readTimeout(Duration.ofSeconds(5)));
             RedisIdempotencyStore plain = open(server.url(), false, Duration.ofSeconds(5))) {
            int rounds = 400;
            long[] coalescedNanos = new long[rounds];
            long[] plainNanos = new long[rounds];
            for (int i = -50; i < rounds; i++) { // 50 rounds of warm-up (JIT, pools)
                long coalescedTook = timedAcquire(coalescing, key("lone-c-" + i));
                long plainTook = timedAcquire(plain, key("lone-p-" + i));
                if (i >= 0) {
                    coalescedNanos[i] = coalescedTook;
                    plainNanos[i] = plainTook;
                }
            }
            CoalescedCalls coalesced = coalescing.coalesced();
            assertEquals(coalesced.calls(), coalesced.pipelines(), "a lone call travels alone");
            double coalescedMedian = median(coalescedNanos) / 1e6;
            double plainMedian = median(plainNanos) / 1e6;
            System.out.printf("a lone acquire: %.3f ms coalescing, %.3f ms without (medians of %d)%n",
                    coalescedMedian, plainMedian, rounds);
            assertTrue(coalescedMedian <= plainMedian * 1.5 + 0.1, "a lone call took " + coalescedMedian
                    + " ms on the coalescing path, " + plainMedian + " ms without");
        }
    }

    /**
     * Once calls arrive together (a batch carried two), the next batch waits its linger for
     * company: a call ready 150 ms into a 600 ms linger travels in the same pipeline as the call
     * that waited. Once they stop arriving together (a batch carried one), a lone call goes out at
     * once again. (A linger this long only makes the steps visible; the setting allows 10 ms.)
     */
    @Test
    void onceCallsArriveTogetherABatchWaitsForCompanyUpToItsLinger() throws Exception {
        Duration linger = Duration.ofMillis(600);
        try (RedisServer own = RedisServer.start()) {
            RedisStoreOptions options = RedisStoreOptions.fromUrl(own.url(), null, null).readTimeout(Duration.ofSeconds(5));
            CoalescedCalls coalesced = new CoalescedCalls(RedisIdempotencyStore.RECORD, CoalescedCalls.MAX_BATCH, linger);
            try (RedisIdempotencyStore store = new RedisIdempotencyStore(() -> options.createClient(null), () -> { },
                    "linger", 0, Duration.ofMillis(100), coalesced)) {
                ExecutorService callers = Executors.newFixedThreadPool(3);
                try {
                    store.acquire(key("linger-warm-up"), FINGERPRINT, "w", LOCK); // a batch of one: no linger
                    long pipelines = coalesced.pipelines();

                    // two calls queued behind one that a frozen Redis holds up: the next batch carries both
                    own.freeze();
                    Future<AcquireResult> held;
                    List<Future<AcquireResult>> queued = new ArrayList<>();
                    try {
                        held = callers.submit(() -> store.acquire(key("linger-held"), FINGERPRINT, "o", LOCK));
                        await().atMost(Duration.ofSeconds(5)).until(() -> coalesced.pipelines() == pipelines + 1);
                        for (String name : List.of("linger-queued-1", "linger-queued-2")) {
                            queued.add(callers.submit(() -> store.acquire(key(name), FINGERPRINT, "o", LOCK)));
                        }
                        await().atMost(Duration.ofSeconds(5)).until(() -> coalesced.queued() == 2);
                    } finally {
                        own.resume();
                    }
                    assertInstanceOf(AcquireResult.Acquired.class, held.get(10, TimeUnit.SECONDS));
                    for (Future<AcquireResult> call : queued) {
                        assertInstanceOf(AcquireResult.Acquired.class, call.get(10, TimeUnit.SECONDS));
                    }
                    assertEquals(pipelines + 2, coalesced.pipelines(), "the held call alone, then the two queued together");

                    // calls arrived together: the next call waits for company, and one ready 150 ms later joins it
                    Future<Long> waiting = callers.submit(() -> timedAcquire(store, key("linger-first")));
                    Thread.sleep(150);
                    Future<AcquireResult> joining = callers.submit(() -> store.acquire(key("linger-joining"), FINGERPRINT, "o", LOCK));
                    long waited = TimeUnit.NANOSECONDS.toMillis(waiting.get(10, TimeUnit.SECONDS));
                    assertInstanceOf(AcquireResult.Acquired.class, joining.get(10, TimeUnit.SECONDS));
                    assertEquals(pipelines + 3, coalesced.pipelines(), "the call ready 150 ms later went in the same pipeline");
                    assertTrue(waited >= 600 && waited < 3_000, "the call that waited for company took " + waited
                            + " ms with a linger of " + linger.toMillis() + " ms: the linger and a round trip");

                    // a lone call after them still waits once (its previous batch carried two), the next not at all
                    store.acquire(key("linger-lone-1"), FINGERPRINT, "o", LOCK);
                    long lone = timedAcquire(store, key("linger-lone-2"));
                    assertTrue(lone < linger.toNanos() / 2, "a lone call after a lone call took "
                            + TimeUnit.NANOSECONDS.toMillis(lone) + " ms with a linger of " + linger.toMillis() + " ms");
                } finally {
                    callers.shutdownNow();
                }
            }
        }
    }

    private long timedAcquire(RedisIdempotencyStore store, String key) {
        long start = System.nanoTime();
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "o", LOCK));
        return System.nanoTime() - start;
    }

    private static double median(long[] values) {
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    /**
     * 16 callers acquiring through a proxy that loses one reply mid-way and closes that connection:
     * every call the lost pipeline carried fails as a broken connection and is sent again once, on
     * a fresh connection, finding its own record (acquired, its lease renewed: one call more); no
     * other call is sent twice, and no caller sees an error. Redis's count of acquires is the
     * callers' calls plus exactly the calls the store counted as carried by a pipeline that got no
     * answer, and its count of script calls (the renewals) exactly those.
     */
    @Test
    void aLostReplyFailsExactlyTheCallsItsPipelineCarriedAndEachIsSentAgainOnce() throws Exception {
        try (ReplyLosingProxy proxy = ReplyLosingProxy.to(server.port());
             RedisIdempotencyStore store = open(proxy.url(), true, Duration.ofSeconds(5))) {
            store.acquire(key("proxy-warm-up"), FINGERPRINT, "w", LOCK);
            store.complete(key("proxy-warm-up"), "w", RESPONSE, DAY); // the script cached (for the renewals)
            CoalescedCalls coalesced = store.coalesced();
            server.resetStats();
            long callsBefore = coalesced.calls();
            AtomicInteger made = new AtomicInteger();
            Map<String, Long> outcomes = new ConcurrentHashMap<>();
            int threads = 16;
            int keys = 40;
            together(threads, caller -> {
                for (int i = 0; i < keys; i++) {
                    if (caller == 0 && i == keys / 2) {
                        proxy.loseNextReply(); // the next pipeline answered, whichever caller's it carries
                    }
                    String outcome;
                    try {
                        outcome = store.acquire(key("lost-" + caller + "-" + i), FINGERPRINT, "o-" + caller, LOCK)
                                .getClass().getSimpleName();
                    } catch (RuntimeException e) {
                        outcome = e.toString();
                    }
                    made.incrementAndGet();
                    outcomes.merge(outcome, 1L, Long::sum);
                }
                return null;
            });
            long resent = coalesced.calls() - callsBefore - made.get();
            long acquires = server.commandCalls().getOrDefault("set", 0L);
            long scripts = server.commandCalls().getOrDefault("evalsha", 0L);

            assertEquals(Map.of("Acquired", (long) threads * keys), outcomes, "every call acquired its key");
            assertTrue(coalesced.unanswered() >= 1, "a pipeline lost its reply");
            assertEquals(2 * coalesced.unanswered(), resent,
                    "sent again, and then renewed: exactly the calls the unanswered pipeline carried");
            assertEquals(made.get() + coalesced.unanswered(), acquires, "Redis ran each acquire once, and those again");
            assertEquals(coalesced.unanswered(), scripts, "and renewed the leases of those");
            System.out.printf("lost reply: %d calls carried by the unanswered pipeline, each sent again once%n",
                    coalesced.unanswered());
        }
    }

    /**
     * A Redis that stops answering (frozen) while 16 callers are at it: the pipeline in flight
     * times out, and the calls queued behind it fail with the same timeout without being sent;
     * every caller gets an outage within about one read timeout (not one per batch in turn), and
     * nothing is sent twice (Redis, resumed, runs at most the calls that pipeline carried).
     */
    @Test
    void aFrozenRedisFailsTheCallsInFlightAndThoseQueuedBehindThemWithinOneReadTimeout() throws Exception {
        Duration timeout = Duration.ofSeconds(1);
        try (RedisServer frozen = RedisServer.start();
             RedisIdempotencyStore store = open(frozen.url(), true, timeout)) {
            store.acquire(key("frozen-warm-up"), FINGERPRINT, "w", LOCK);
            CoalescedCalls coalesced = store.coalesced();
            frozen.resetStats();
            frozen.freeze();
            List<String> outcomes;
            AtomicLong slowest = new AtomicLong();
            try {
                outcomes = together(16, caller -> {
                    long start = System.nanoTime();
                    try {
                        return store.acquire(key("frozen-" + caller), FINGERPRINT, "o", LOCK).toString();
                    } catch (StoreUnavailableException e) {
                        return "unavailable";
                    } catch (RuntimeException e) {
                        return e.toString();
                    } finally {
                        slowest.accumulateAndGet(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), Math::max);
                    }
                });
            } finally {
                frozen.resume();
            }
            assertEquals(List.of("unavailable"), outcomes.stream().distinct().toList(), "every caller an outage");
            assertTrue(slowest.get() < timeout.toMillis() * 3 / 2, "the slowest caller gave up after " + slowest.get()
                    + " ms, with a read timeout of " + timeout.toMillis() + " ms");
            assertEquals(16, coalesced.unanswered() + coalesced.notSent(), "each call failed once, carried or queued");
            await().atMost(Duration.ofSeconds(10)).until(frozen::answers);
            long ran = frozen.commandCalls().getOrDefault("set", 0L);
            assertTrue(ran <= coalesced.unanswered(), "Redis ran " + ran + " acquires; the pipelines that timed out carried "
                    + coalesced.unanswered() + ": nothing sent again");
            assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key("after-freeze"), FINGERPRINT, "o", LOCK));
        }
    }

    /**
     * A Redis stopped while 16 callers are at it: each call ends acquired or as an outage, never as
     * anything else, within its timeouts; the store serves again once Redis is back.
     */
    @Test
    void aStoppedRedisFailsTheCallsInFlightAsAnOutageAndTheStoreServesAgainAfterARestart() throws Exception {
        try (RedisServer stopped = RedisServer.start();
             RedisIdempotencyStore store = open(stopped.url(), true, Duration.ofSeconds(1))) {
            AcquireLoad load = AcquireLoad.start(store, 16, n -> key("stopped-" + n));
            await().atMost(Duration.ofSeconds(10)).until(() -> store.coalesced().calls() > 500);
            stopped.stop();
            await().atMost(Duration.ofSeconds(10)).until(() -> store.coalesced().unanswered() > 0);
            Map<String, Long> outcomes = load.stop();
            assertTrue(AcquireLoad.onlyAcquiredOrUnavailable(outcomes), "only acquisitions and outages: " + outcomes);
            assertTrue(outcomes.getOrDefault("unavailable", 0L) > 0, "the callers saw the outage: " + outcomes);
            assertTrue(load.slowestCallMillis() < 3_000, "slowest call " + load.slowestCallMillis() + " ms: no hang");
            stopped.restart();
            assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key("after-stop"), FINGERPRINT, "o", LOCK));
        }
    }
}
