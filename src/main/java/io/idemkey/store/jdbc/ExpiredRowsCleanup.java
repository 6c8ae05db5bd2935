package io.idemkey.store.jdbc;

import io.idemkey.core.IdempotencyMetrics;
import io.idemkey.core.IdempotencyMetrics.Event;

import java.time.Duration;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Deletes the JDBC store's expired rows, as a scheduled task: batch after batch of short statements
 * (each its own transaction, locking only expired rows) until a batch comes back short, for at most
 * ten seconds a run. Expired rows
 * already count as absent, so cleanup only keeps the table small; when it falls behind or fails,
 * nothing but disk space is affected. Cleanups on several servers at once share the rows (each skips
 * those another is deleting). Logged at INFO when it deleted something, counted as
 * {@code idempotency.expired.deleted}.
 */
public final class ExpiredRowsCleanup implements Runnable {

    private static final Logger LOG = Logger.getLogger(ExpiredRowsCleanup.class.getName());
    /** The longest one run goes on (the next run goes on where it stopped): it shares threads with lease renewal. */
    private static final Duration RUN_BUDGET = Duration.ofSeconds(10);
    /** The endpoint label its counter carries. */
    static final String LABEL = "cleanup";

    private final JdbcIdempotencyStore store;
    private final int batchSize;
    private final IdempotencyMetrics metrics;
    private boolean failing;

    public ExpiredRowsCleanup(JdbcIdempotencyStore store, int batchSize, IdempotencyMetrics metrics) {
        if (batchSize < 1) {
            throw new IllegalArgumentException("batch size " + batchSize);
        }
        this.store = store;
        this.batchSize = batchSize;
        this.metrics = metrics;
    }

    /** One cleanup run; never throws (a scheduled task that throws is never run again). */
    @Override
    public synchronized void run() {
        long started = System.nanoTime();
        long deleted = 0;
        int batches = 0;
        try {
            int batch;
            do {
                batch = store.deleteExpired(batchSize);
                batches++;
                deleted += batch;
                metrics.count(Event.EXPIRED_DELETED, LABEL, batch);
            } while (batch == batchSize && !Thread.currentThread().isInterrupted()
                    && System.nanoTime() - started < RUN_BUDGET.toNanos());
            if (failing) {
                failing = false;
                LOG.info(() -> "Idemkey: the cleanup of " + store + " works again");
            }
        } catch (RuntimeException e) {
            metrics.count(Event.STORE_ERROR, LABEL);
            if (!failing) {
                failing = true;
                LOG.log(Level.WARNING, "Idemkey: the cleanup of expired records in " + store
                        + " failed (it runs again at its next interval; expired records count as absent meanwhile): " + e);
            }
        }
        if (deleted > 0) {
            long rows = deleted;
            int statements = batches;
            Duration took = Duration.ofNanos(System.nanoTime() - started);
            LOG.info(() -> "Idemkey deleted " + rows + " expired records from " + store + " in " + statements
                    + " batches of at most " + batchSize + " (" + took.toMillis() + " ms)");
        }
    }
}
