package io.idemkey.core;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A {@link Scheduler} on a {@link ScheduledExecutorService} (on the servers a pool of Idemkey's own on
 * the managed thread factory's threads): it keeps track of its tasks so that {@link #cancelAll()} can
 * stop them when the application stops.
 */
public final class ExecutorScheduler implements Scheduler {

    private final ScheduledExecutorService executor;
    private final Set<ScheduledFuture<?>> tasks = ConcurrentHashMap.newKeySet();

    public ExecutorScheduler(ScheduledExecutorService executor) {
        this.executor = executor;
    }

    @Override
    public Task everyInterval(Duration period, Runnable task) {
        long millis = Math.max(1, period.toMillis());
        ScheduledFuture<?> future = executor.scheduleAtFixedRate(task, millis, millis, TimeUnit.MILLISECONDS);
        tasks.add(future);
        return () -> {
            future.cancel(false);
            tasks.remove(future);
        };
    }

    @Override
    public Task once(Duration delay, Runnable task) {
        AtomicReference<ScheduledFuture<?>> self = new AtomicReference<>();
        ScheduledFuture<?> future = executor.schedule(() -> {
            try {
                task.run();
            } finally {
                ScheduledFuture<?> booked = self.get();
                if (booked != null) { // null if it ran before it was booked: removed below
                    tasks.remove(booked);
                }
            }
        }, Math.max(0, delay.toMillis()), TimeUnit.MILLISECONDS);
        self.set(future);
        tasks.add(future);
        if (future.isDone()) {
            tasks.remove(future);
        }
        return () -> {
            future.cancel(false);
            tasks.remove(future);
        };
    }

    /** Stops every task still scheduled (renewals of requests that will never finish: the application stops). */
    public void cancelAll() {
        tasks.forEach(future -> future.cancel(false));
        tasks.clear();
    }
}
