package io.idemkey.testing;

import io.idemkey.core.Scheduler;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;

/**
 * A {@link Scheduler} driven by a {@link ManualClock}: nothing runs until {@link #advance} moves the
 * clock, and then every periodic task whose time has come runs, in time order (ties in the order they
 * were scheduled), as many times as its period elapsed, with the clock set to each run's due time.
 * Tasks run on the thread that calls {@code advance}; they may schedule and cancel tasks.
 */
public final class ManualScheduler implements Scheduler {

    private static final Comparator<Periodic> DUE_ORDER =
            Comparator.comparing((Periodic p) -> p.next).thenComparingLong(p -> p.sequence);

    private final ManualClock clock;
    private final List<Periodic> tasks = new ArrayList<>();
    private long sequence;
    private volatile boolean stopped;

    public ManualScheduler(ManualClock clock) {
        this.clock = clock;
    }

    public ManualClock clock() {
        return clock;
    }

    /** Stops taking tasks, as an executor being shut down: from now on every task is refused with a {@link RejectedExecutionException}. */
    public void stop() {
        stopped = true;
    }

    @Override
    public synchronized Task everyInterval(Duration period, Runnable task) {
        refuseIfStopped();
        if (period.isNegative() || period.isZero()) {
            throw new IllegalArgumentException("period must be positive: " + period);
        }
        Periodic periodic = new Periodic(period, task, clock.instant().plus(period), sequence++);
        tasks.add(periodic);
        return periodic;
    }

    @Override
    public Task once(Duration delay, Runnable task) {
        refuseIfStopped();
        Periodic[] self = new Periodic[1];
        synchronized (this) {
            self[0] = new Periodic(Duration.ofDays(365), () -> {
                self[0].cancel();
                task.run();
            }, clock.instant().plus(delay), sequence++);
            tasks.add(self[0]);
        }
        return self[0];
    }

    private void refuseIfStopped() {
        if (stopped) {
            throw new RejectedExecutionException("the scheduler is stopped");
        }
    }

    /** Moves the clock by {@code duration}, running every task that falls due on the way. */
    public void advance(Duration duration) {
        Instant target = clock.instant().plus(duration);
        for (Periodic due = nextDue(target); due != null; due = nextDue(target)) {
            due.task.run();
        }
        clock.advanceTo(target);
    }

    /** Runs the tasks already due (the clock may have been moved directly), without moving it further. */
    public void runDue() {
        advance(Duration.ZERO);
    }

    /** How many tasks are scheduled and not cancelled. */
    public synchronized int activeTasks() {
        tasks.removeIf(p -> p.cancelled);
        return tasks.size();
    }

    /** The earliest task due at or before {@code target}, its next run booked; null if none. */
    private synchronized Periodic nextDue(Instant target) {
        tasks.removeIf(p -> p.cancelled);
        Periodic due = tasks.stream().filter(p -> !p.next.isAfter(target)).min(DUE_ORDER).orElse(null);
        if (due != null) {
            clock.advanceTo(due.next);
            due.next = due.next.plus(due.period);
        }
        return due;
    }

    private static final class Periodic implements Task {
        final Duration period;
        final Runnable task;
        final long sequence;
        Instant next;
        volatile boolean cancelled;

        Periodic(Duration period, Runnable task, Instant next, long sequence) {
            this.period = period;
            this.task = task;
            this.next = next;
            this.sequence = sequence;
        }

        @Override
        public void cancel() {
            cancelled = true;
        }
    }
}
