package io.idemkey.store.jdbc;

import io.idemkey.core.IdempotencyMetrics;
import io.idemkey.core.IdempotencyMetrics.Event;
import io.idemkey.core.Scheduler;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Deletes the JDBC store's expired rows, as a scheduled task: batch after batch of short statements
 * (each its own transaction, locking only expired rows) until a batch comes back short, for at most
 * ten seconds a run. Each batch is a task of its own on the scheduler, so a long run never holds a
 * scheduler thread that completions after a transaction wait for: they run between its batches
 * (lease renewals have a pool of their own on a server).
 * Expired rows already count as absent, so cleanup only keeps the table small; when it falls behind
 * or fails, nothing but disk space is affected. Cleanups on several servers at once share the rows
 * (each skips those another is deleting). Logged at INFO when it deleted something, counted as
 * {@code idempotency.expired.deleted}.
 */
public final class ExpiredRowsCleanup implements Runnable {

    private static final Logger LOG = Logger.getLogger(ExpiredRowsCleanup.class.getName());
    /** The longest one run goes on (the next run goes on where it stopped). */
    private static final Duration RUN_BUDGET = Duration.ofSeconds(10);
    /** The endpoint label its counter carries. */
    static final String LABEL = "cleanup";

    private final JdbcIdempotencyStore store;
    private final int batchSize;
    private final IdempotencyMetrics metrics;
    private final Scheduler scheduler;
    private final AtomicBoolean running = new AtomicBoolean();
    private volatile boolean failing;

    /** @param scheduler runs each batch (the scheduler this task itself is scheduled on) */
    public ExpiredRowsCleanup(JdbcIdempotencyStore store, int batchSize, IdempotencyMetrics metrics, Scheduler scheduler) {
        if (batchSize < 1) {
            throw new IllegalArgumentException("batch size " + batchSize);
        }
        this.store = store;
        this.batchSize = batchSize;
        this.metrics = metrics;
        this.scheduler = scheduler;
    }

    /** Starts a cleanup run, unless one is still going on; never throws (a scheduled task that throws never runs again). */
    @Override
    public void run() {
        if (running.compareAndSet(false, true)) {
            new Run().next();
        }
    }

    /** Whether a run is going on (its batches are queued or running). */
    public boolean running() {
        return running.get();
    }

    /** One cleanup run: its batches, one scheduler task each. */
    private final class Run {
        private final long started = System.nanoTime();
        private long deleted;
        private int batches;

        void next() {
            try {
                int batch = store.deleteExpired(batchSize);
                batches++;
                deleted += batch;
                metrics.count(Event.EXPIRED_DELETED, LABEL, batch);
                if (failing) {
                    failing = false;
                    LOG.info(() -> "Idemkey: the cleanup of " + store + " works again");
                }
                if (batch == batchSize && System.nanoTime() - started < RUN_BUDGET.toNanos()
                        && queueNext()) {
                    return;
                }
            } catch (RuntimeException e) {
                metrics.count(Event.STORE_ERROR, LABEL);
                if (!failing) {
                    failing = true;
                    LOG.log(Level.WARNING, "Idemkey: the cleanup of expired records in " + store
                            + " failed (it runs again at its next interval; expired records count as absent meanwhile): " + e);
                }
            }
            ended();
        }

        /** The next batch, behind whatever else the scheduler has to run; false if it cannot take it. */
        private boolean queueNext() {
            try {
                scheduler.once(Duration.ZERO, this::next);
                return true;
            } catch (RuntimeException rejected) { // the application is stopping
                return false;
            }
        }

        private void ended() {
            running.set(false);
            if (deleted > 0) {
                long rows = deleted;
                int statements = batches;
                Duration took = Duration.ofNanos(System.nanoTime() - started);
                LOG.info(() -> "Idemkey deleted " + rows + " expired records from " + store + " in " + statements
                        + " batches of at most " + batchSize + " (" + took.toMillis() + " ms)");
            }
        }
    }
}
