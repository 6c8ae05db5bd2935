package io.idemkey.store.redis;

import io.idemkey.spi.IdempotencyStore;
import io.idemkey.spi.StoreUnavailableException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;

/**
 * Callers acquiring fresh keys as fast as they can while a test breaks Redis (a failover): counts
 * each outcome ({@code Acquired}, {@code unavailable}, or any other exception by its text) and the
 * slowest call.
 */
final class AcquireLoad {

    private static final byte[] FINGERPRINT = new byte[16];

    private final AtomicBoolean stopping = new AtomicBoolean();
    private final Map<String, Long> outcomes = new ConcurrentHashMap<>();
    private final AtomicLong slowestCallMillis = new AtomicLong();
    private final ExecutorService executor;
    private final List<Future<?>> callers = new ArrayList<>();

    private AcquireLoad(IdempotencyStore store, int threads, IntFunction<String> keys) {
        executor = Executors.newFixedThreadPool(threads);
        for (int t = 0; t < threads; t++) {
            int caller = t;
            callers.add(executor.submit(() -> {
                for (int i = 0; !stopping.get() || i % 50 != 0; i++) {
                    long start = System.nanoTime();
                    String outcome;
                    try {
                        outcome = store.acquire(keys.apply(caller * 1_000_000 + i), FINGERPRINT, "o", Duration.ofSeconds(60))
                                .getClass().getSimpleName();
                    } catch (StoreUnavailableException e) {
                        outcome = "unavailable";
                    } catch (RuntimeException e) {
                        outcome = e.toString(); // anything else is a defect: the test's assertion names it
                    }
                    slowestCallMillis.accumulateAndGet(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), Math::max);
                    outcomes.merge(outcome, 1L, Long::sum);
                }
            }));
        }
    }

    /** Starts {@code threads} callers, each acquiring {@code keys.apply(n)} for new numbers n. */
    static AcquireLoad start(IdempotencyStore store, int threads, IntFunction<String> keys) {
        return new AcquireLoad(store, threads, keys);
    }

    /** Lets every caller finish its current batch, and returns the outcomes counted. */
    Map<String, Long> stop() throws Exception {
        stopping.set(true);
        for (Future<?> caller : callers) {
            caller.get(60, TimeUnit.SECONDS);
        }
        executor.shutdown();
        return Map.copyOf(outcomes);
    }

    long slowestCallMillis() {
        return slowestCallMillis.get();
    }

    /** Whether only acquisitions and outages were seen. */
    static boolean onlyAcquiredOrUnavailable(Map<String, Long> outcomes) {
        return outcomes.keySet().stream().allMatch(o -> o.equals("Acquired") || o.equals("unavailable"));
    }
}
