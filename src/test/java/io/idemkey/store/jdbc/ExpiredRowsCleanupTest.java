package io.idemkey.store.jdbc;

import io.idemkey.core.IdempotencyMetrics;
import io.idemkey.core.IdempotencyMetrics.Event;
import io.idemkey.spi.AcquireResult;
import io.idemkey.testing.PostgresServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The JDBC store's cleanup on a real PostgreSQL: a large backlog of expired rows drained in short
 * batches, by two cleaners at once (two servers), while requests keep being served.
 */
class ExpiredRowsCleanupTest {

    private static final String TABLE = "cleanup_keys";
    private static final int EXPIRED = 100_000;
    private static final int LIVE = 1_000;
    private static final Duration LONG = Duration.ofHours(1);
    private static final byte[] FINGERPRINT = {1, 2, 3};

    private static PostgresServer postgres;
    private static JdbcIdempotencyStore store;

    @BeforeAll
    static void startPostgres() {
        postgres = PostgresServer.start();
        store = new JdbcIdempotencyStore(postgres.dataSource(), TABLE, 10);
        store.createTable();
    }

    @AfterAll
    static void stopPostgres() {
        if (postgres != null) {
            postgres.close();
        }
    }

    @Test
    void twoCleanersDrainOneHundredThousandExpiredRowsInBatchesWhileRequestsAreServed() throws Exception {
        postgres.execute("INSERT INTO " + TABLE + " SELECT 'expired-' || i, TRUE, '\\x01', 'o', '\\x02', now() - INTERVAL '1 hour'"
                + " FROM generate_series(1, " + EXPIRED + ") i");
        postgres.execute("INSERT INTO " + TABLE + " SELECT 'live-' || i, TRUE, '\\x010203', 'o', '\\x07', now() + INTERVAL '1 hour'"
                + " FROM generate_series(1, " + LIVE + ") i");
        IdempotencyMetrics first = new IdempotencyMetrics();
        IdempotencyMetrics second = new IdempotencyMetrics();
        ExecutorService cleaners = Executors.newFixedThreadPool(2);
        long started = System.nanoTime();
        CompletableFuture<Void> one = CompletableFuture.runAsync(new ExpiredRowsCleanup(store, 2_000, first), cleaners);
        CompletableFuture<Void> two = CompletableFuture.runAsync(new ExpiredRowsCleanup(store, 2_000, second), cleaners);

        int served = 0;
        while (!one.isDone() || !two.isDone() || served < 100) {
            String key = "new-" + served;
            assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "owner", LONG));
            assertTrue(store.complete(key, "owner", new byte[] {9}, LONG));
            AcquireResult replay = store.acquire("live-" + (1 + served % LIVE), FINGERPRINT, "retry", LONG);
            assertArrayEquals(new byte[] {7}, assertInstanceOf(AcquireResult.Completed.class, replay).response());
            served++;
        }
        CompletableFuture.allOf(one, two).get();
        double seconds = (System.nanoTime() - started) / 1e9;
        cleaners.shutdown();

        assertEquals(0, count("expires_at <= now()"), "every expired row is gone");
        assertEquals(LIVE + served, count("TRUE"), "no live row was touched");
        assertEquals(EXPIRED, first.get(Event.EXPIRED_DELETED) + second.get(Event.EXPIRED_DELETED),
                "each row deleted once, by one cleaner or the other");
        assertEquals(0, first.get(Event.STORE_ERROR) + second.get(Event.STORE_ERROR));
        System.out.printf("cleanup: %d expired rows deleted by two cleaners (%d + %d) in %.2f s (%.0f rows/s),"
                        + " batches of 2000, while %d requests were served%n", EXPIRED, first.get(Event.EXPIRED_DELETED),
                second.get(Event.EXPIRED_DELETED), seconds, EXPIRED / seconds, served);
    }

    @Test
    void aCleanupThatCannotReachTheDatabaseCountsTheErrorAndRunsAgainLater() {
        IdempotencyMetrics metrics = new IdempotencyMetrics();
        ExpiredRowsCleanup cleanup = new ExpiredRowsCleanup(store, 10, metrics);
        postgres.stop();
        try {
            cleanup.run(); // a scheduled task that threw would never run again
            assertEquals(1, metrics.get(Event.STORE_ERROR));
        } finally {
            postgres.restart();
        }
        store.acquire("soon-expired", FINGERPRINT, "o", Duration.ofMillis(1));
        awaitExpired();
        cleanup.run();
        assertTrue(metrics.get(Event.EXPIRED_DELETED) >= 1);
    }

    private static void awaitExpired() {
        try {
            Thread.sleep(20);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static long count(String where) {
        return postgres.queryLong("SELECT count(*) FROM " + TABLE + " WHERE " + where);
    }
}
