package io.idemkey.store.jdbc;

import io.idemkey.core.ExecutorScheduler;
import io.idemkey.core.IdempotencyMetrics;
import io.idemkey.core.IdempotencyMetrics.Event;
import io.idemkey.spi.AcquireResult;
import io.idemkey.testing.ManualClock;
import io.idemkey.testing.ManualScheduler;
import io.idemkey.testing.TestDatabase;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The JDBC store's cleanup on a real database: a large backlog of expired rows drained in short
 * batches, by two cleaners at once (two servers), while requests keep being served. Run on
 * PostgreSQL ({@link ExpiredRowsCleanupTest}) and MariaDB ({@link MariaDbExpiredRowsCleanupTest}).
 */
abstract class ExpiredRowsCleanupTests {

    static final String TABLE = "cleanup_keys";
    private static final int EXPIRED = 100_000;
    private static final int LIVE = 1_000;
    private static final Duration LONG = Duration.ofHours(1);
    private static final byte[] FINGERPRINT = {1, 2, 3};

    private JdbcIdempotencyStore store;

    /** The database of the subclass, started once for the class. */
    abstract TestDatabase database();

    /** Inserts {@code count} completed rows {@code <prefix>1...}, expired an hour ago or expiring in an hour. */
    abstract void insertRows(String prefix, int count, boolean expired);

    /** The database's clock, as the store's statements read it. */
    abstract String now();

    @BeforeEach
    void emptyTable() {
        store = new JdbcIdempotencyStore(database().dataSource(), TABLE, 10);
        store.createTable();
        database().execute("TRUNCATE " + TABLE);
    }

    @Test
    void twoCleanersDrainOneHundredThousandExpiredRowsInBatchesWhileRequestsAreServed() throws Exception {
        insertRows("expired-", EXPIRED, true);
        insertRows("live-", LIVE, false);
        IdempotencyMetrics first = new IdempotencyMetrics();
        IdempotencyMetrics second = new IdempotencyMetrics();
        ScheduledExecutorService firstServer = Executors.newSingleThreadScheduledExecutor();
        ScheduledExecutorService secondServer = Executors.newSingleThreadScheduledExecutor();
        ExpiredRowsCleanup one = new ExpiredRowsCleanup(store, 2_000, first, new ExecutorScheduler(firstServer));
        ExpiredRowsCleanup two = new ExpiredRowsCleanup(store, 2_000, second, new ExecutorScheduler(secondServer));
        long started = System.nanoTime();
        firstServer.execute(one);
        secondServer.execute(two);
        await().atMost(Duration.ofSeconds(10)).until(() -> one.running() && two.running() || count("expires_at <= " + now()) == 0);

        int served = 0;
        while (one.running() || two.running() || served < 100) {
            String key = "new-" + served;
            assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "owner", LONG));
            assertTrue(store.complete(key, "owner", new byte[] {9}, LONG));
            AcquireResult replay = store.acquire("live-" + (1 + served % LIVE), FINGERPRINT, "retry", LONG);
            assertArrayEquals(new byte[] {7}, assertInstanceOf(AcquireResult.Completed.class, replay).response());
            served++;
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        firstServer.shutdown();
        secondServer.shutdown();

        assertEquals(0, count("expires_at <= " + now()), "every expired row is gone");
        assertEquals(LIVE + served, count("TRUE"), "no live row was touched");
        assertEquals(EXPIRED, first.get(Event.EXPIRED_DELETED) + second.get(Event.EXPIRED_DELETED),
                "each row deleted once, by one cleaner or the other");
        assertEquals(0, first.get(Event.STORE_ERROR) + second.get(Event.STORE_ERROR));
        System.out.printf("cleanup: %d expired rows deleted by two cleaners (%d + %d) in %.2f s (%.0f rows/s),"
                        + " batches of 2000, while %d requests were served%n", EXPIRED, first.get(Event.EXPIRED_DELETED),
                second.get(Event.EXPIRED_DELETED), seconds, EXPIRED / seconds, served);
    }

    /**
     * A key whose record expired is free: a retry that arrives while the cleanup's DELETE holds that
     * row (with the rest of its batch) takes it over once the statement is done, never 409.
     */
    @Test
    void aRetryOfAnExpiredKeyWhileTheCleanupDeletesItsRowIsNeverInProgress() throws Exception {
        int expired = 50_000;
        int batch = 250; // 200 short statements, each a window for a retry to meet its rows locked
        insertRows("stale-", expired, true);
        IdempotencyMetrics metrics = new IdempotencyMetrics();
        ScheduledExecutorService server = Executors.newSingleThreadScheduledExecutor();
        ExpiredRowsCleanup cleaner = new ExpiredRowsCleanup(store, batch, metrics, new ExecutorScheduler(server));
        CompletableFuture<Void> cleanup = CompletableFuture.runAsync(() -> {
            while (count("record_key LIKE 'stale-%' AND expires_at <= " + now()) > 0) {
                cleaner.run();
                await().atMost(Duration.ofSeconds(30)).until(() -> !cleaner.running());
            }
        });
        int inProgress = 0;
        int retries = 0;
        // The cleanup deletes the oldest first, batch after batch: these all expired at once, and come
        // in the order they were written. The retries ask for keys of the batch being deleted.
        while (!cleanup.isDone()) {
            long next = metrics.get(Event.EXPIRED_DELETED) + 1 + retries % batch;
            AcquireResult result = store.acquire("stale-" + next, FINGERPRINT, "retry-" + retries, LONG);
            retries++;
            if (result instanceof AcquireResult.InProgress) {
                inProgress++;
            } else {
                assertInstanceOf(AcquireResult.Acquired.class, result);
            }
        }
        cleanup.get();
        server.shutdown();
        System.out.println("cleanup race: " + retries + " retries, " + inProgress + " in progress");
        assertTrue(retries > 50, retries + " retries: too few to have met the batches' locks"); // 176-420 seen
        assertEquals(0, inProgress, inProgress + " of " + retries + " retries of free keys were told another request runs");
    }

    /**
     * A run of many batches leaves the scheduler's thread to the tasks queued behind it (lease
     * renewals, completions after a commit) between its batches, instead of holding it to the end.
     */
    @Test
    void aLongCleanupRunLetsOtherScheduledTasksRunBetweenItsBatches() throws Exception {
        insertRows("backlog-", 20_000, true);
        IdempotencyMetrics metrics = new IdempotencyMetrics();
        ScheduledExecutorService server = Executors.newSingleThreadScheduledExecutor(); // one thread: the worst case
        ExecutorScheduler scheduler = new ExecutorScheduler(server);
        ExpiredRowsCleanup cleanup = new ExpiredRowsCleanup(store, 500, metrics, scheduler);
        CompletableFuture<Long> renewal = new CompletableFuture<>();
        server.execute(cleanup);
        scheduler.once(Duration.ZERO, () -> renewal.complete(metrics.get(Event.EXPIRED_DELETED)));
        long deletedBefore = renewal.get(30, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(30)).until(() -> !cleanup.running());
        server.shutdown();
        assertEquals(0, count("record_key LIKE 'backlog-%'"));
        assertTrue(deletedBefore < 20_000, "the task queued behind the cleanup ran after " + deletedBefore
                + " of 20000 rows were deleted, not after the whole run");
    }

    @Test
    void aCleanupThatCannotReachTheDatabaseCountsTheErrorAndRunsAgainLater() {
        IdempotencyMetrics metrics = new IdempotencyMetrics();
        ExpiredRowsCleanup cleanup = new ExpiredRowsCleanup(store, 10, metrics, new ManualScheduler(new ManualClock()));
        database().stop();
        try {
            cleanup.run(); // a scheduled task that threw would never run again
            assertEquals(1, metrics.get(Event.STORE_ERROR));
        } finally {
            database().restart();
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

    long count(String where) {
        return database().queryLong("SELECT count(*) FROM " + TABLE + " WHERE " + where);
    }
}
