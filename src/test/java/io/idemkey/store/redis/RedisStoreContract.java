package io.idemkey.store.redis;

import io.idemkey.spi.IdempotencyStoreContract;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/** The store contract on a real Redis, whatever its topology: Redis expires records by its own clock. */
abstract class RedisStoreContract extends IdempotencyStoreContract {

    /**
     * Whether the stores under test send the calls ready together as one pipeline
     * ({@link RedisStoreOptions#coalesce(boolean)}): each Redis test class runs on both paths,
     * through a subclass that says true.
     */
    protected boolean coalesce() {
        return false;
    }

    @Override
    protected Duration shortTtl() {
        return Duration.ofMillis(150);
    }

    @Override
    protected void passTime(Duration duration) {
        sleep(duration.toMillis());
    }

    @Override
    protected void awaitExpiry(long writtenAtNanos, Duration ttl, BooleanSupplier expired) {
        awaitExpiryInRealTime(writtenAtNanos, ttl, expired, 2);
    }

    /**
     * Makes the store's pools open connections and keep them idle: {@code count} callers at once,
     * each acquiring 20 keys (spread over every master of a cluster).
     */
    protected void fillPoolWithConnections(int count) throws Exception {
        CyclicBarrier barrier = new CyclicBarrier(count);
        ExecutorService executor = Executors.newFixedThreadPool(count);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                int n = i;
                futures.add(executor.submit(() -> {
                    barrier.await(10, TimeUnit.SECONDS);
                    for (int j = 0; j < 20; j++) {
                        store.acquire(key("fill-" + n + "-" + j), FINGERPRINT, "f", LONG_LOCK);
                    }
                    return null;
                }));
            }
            for (Future<?> future : futures) {
                future.get(30, TimeUnit.SECONDS);
            }
        } finally {
            executor.shutdownNow();
        }
    }
}
