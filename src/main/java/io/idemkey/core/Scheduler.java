package io.idemkey.core;

import java.time.Duration;

/**
 * Runs the engine's background work: lease renewals, retries of a completion the store could
 * not take, a release that must wait until a transaction has ended. On a server it is backed by a pool of Idemkey's own on the managed thread factory's threads; tests drive it by hand.
 */
public interface Scheduler {

    /** A scheduled task that can be stopped. */
    @FunctionalInterface
    interface Task {
        /** Stops future runs; a run in progress finishes. Idempotent. */
        void cancel();
    }

    /** Runs {@code task} every {@code period}, the first time one period from now. */
    Task everyInterval(Duration period, Runnable task);

    /** Runs {@code task} once, {@code delay} from now, on the scheduler's thread (never the caller's). */
    Task once(Duration delay, Runnable task);
}
