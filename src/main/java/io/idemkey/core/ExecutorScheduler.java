package io.idemkey.core;

import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/** A {@link Scheduler} on a {@link ScheduledExecutorService} (a managed one on the servers). */
public final class ExecutorScheduler implements Scheduler {

    private final ScheduledExecutorService executor;

    public ExecutorScheduler(ScheduledExecutorService executor) {
        this.executor = executor;
    }

    @Override
    public Task everyInterval(Duration period, Runnable task) {
        long millis = Math.max(1, period.toMillis());
        ScheduledFuture<?> future = executor.scheduleAtFixedRate(task, millis, millis, TimeUnit.MILLISECONDS);
        return () -> future.cancel(false);
    }
}
