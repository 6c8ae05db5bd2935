package io.idemkey.store.jdbc;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Bounds the wait for a pooled connection. A container's pool makes a borrower wait up to its own
 * limit (Payara 60 s, Open Liberty 30 s) when every connection is in use, by business transactions
 * as much as by Idemkey: far longer than a store call may take. JDBC has no way to ask for less, but
 * both pools end the wait when the waiting thread is interrupted (with an {@code SQLException}, the
 * interrupt consumed). So the watchdog interrupts a borrower still waiting at its deadline, and
 * never after it stopped waiting: {@link Armed#close()} and the interrupt exclude each other, and
 * an interrupt that arrived from the watchdog is cleared there (one the thread had before is kept).
 * One daemon thread, started on first use, serves every borrower of the store.
 */
final class CheckoutWatchdog implements AutoCloseable {

    private ScheduledThreadPoolExecutor timer;
    private boolean closed;

    /** Watches the calling thread until the returned handle is closed; interrupts it after {@code limit}. */
    Armed arm(Duration limit) {
        return new Armed(Thread.currentThread(), limit);
    }

    private synchronized ScheduledThreadPoolExecutor timer() {
        if (closed) { // a call after the store closed starts no thread that nothing would stop
            throw new IllegalStateException("the JDBC store is closed");
        }
        if (timer == null) {
            timer = new ScheduledThreadPoolExecutor(1, task -> {
                Thread thread = new Thread(task, "idemkey-jdbc-checkout-watchdog");
                thread.setDaemon(true);
                return thread;
            });
            timer.setRemoveOnCancelPolicy(true);
        }
        return timer;
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (timer != null) {
            timer.shutdownNow();
            timer = null;
        }
    }

    /** One borrower's watch. */
    final class Armed implements AutoCloseable {
        private final Thread borrower;
        private final boolean interruptedBefore;
        private final ScheduledFuture<?> alarm;
        private boolean watching = true;
        private boolean fired;

        private Armed(Thread borrower, Duration limit) {
            this.borrower = borrower;
            this.interruptedBefore = borrower.isInterrupted();
            this.alarm = timer().schedule(this::fire, Math.max(1, limit.toMillis()), TimeUnit.MILLISECONDS);
        }

        private synchronized void fire() {
            if (watching) {
                fired = true;
                borrower.interrupt();
            }
        }

        /** Whether the borrower was interrupted because it waited too long. */
        synchronized boolean fired() {
            return fired;
        }

        /** Stops watching; clears the watchdog's interrupt, if it came (call on the borrower's thread). */
        @Override
        public synchronized void close() {
            watching = false;
            alarm.cancel(false);
            if (fired) {
                Thread.interrupted();
                if (interruptedBefore) {
                    borrower.interrupt();
                }
            }
        }
    }
}
