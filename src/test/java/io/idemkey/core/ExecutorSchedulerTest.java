package io.idemkey.core;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ExecutorSchedulerTest {

    private final ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor();

    @AfterEach
    void stop() {
        executor.shutdownNow();
    }

    @Test
    void cancelAllStopsEveryTaskStillScheduledOnAnExecutorTheApplicationDoesNotOwn() throws Exception {
        ExecutorScheduler scheduler = new ExecutorScheduler(executor);
        AtomicInteger runs = new AtomicInteger();
        scheduler.everyInterval(Duration.ofMillis(1), runs::incrementAndGet);
        scheduler.everyInterval(Duration.ofMillis(1), runs::incrementAndGet);
        ScheduledFuture<?> probe = executor.schedule(() -> { }, 50, TimeUnit.MILLISECONDS);
        probe.get();
        scheduler.cancelAll();
        int afterCancel = executor.submit(runs::get).get(); // queued behind any run in progress
        executor.schedule(() -> { }, 50, TimeUnit.MILLISECONDS).get();
        assertTrue(afterCancel > 0, "the tasks ran before");
        assertEquals(afterCancel, runs.get(), "and never after");
        assertTrue(!executor.isShutdown(), "the executor itself is not ours to stop");
    }
}
