package io.idemkey.testing;

import io.idemkey.core.Scheduler;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ManualSchedulerTest {

    private final ManualClock clock = new ManualClock();
    private final ManualScheduler scheduler = new ManualScheduler(clock);
    private final Instant start = clock.instant();

    private long secondsSinceStart() {
        return Duration.between(start, clock.instant()).toSeconds();
    }

    @Test
    void nothingRunsBeforeItsFirstPeriodHasElapsed() {
        List<Long> runs = new ArrayList<>();
        scheduler.everyInterval(Duration.ofSeconds(10), () -> runs.add(secondsSinceStart()));
        scheduler.advance(Duration.ofSeconds(9));
        assertEquals(List.of(), runs);
        scheduler.advance(Duration.ofSeconds(1));
        assertEquals(List.of(10L), runs);
    }

    @Test
    void periodicTasksRunInTimeOrderOncePerElapsedPeriodAtTheirDueTime() {
        List<String> runs = new ArrayList<>();
        scheduler.everyInterval(Duration.ofSeconds(10), () -> runs.add("a@" + secondsSinceStart()));
        scheduler.everyInterval(Duration.ofSeconds(4), () -> runs.add("b@" + secondsSinceStart()));
        scheduler.advance(Duration.ofSeconds(21));
        assertEquals(List.of("b@4", "b@8", "a@10", "b@12", "b@16", "a@20", "b@20"), runs);
        assertEquals(21, secondsSinceStart());
    }

    @Test
    void aCancelledTaskNeverRunsAgain() {
        List<Long> runs = new ArrayList<>();
        Scheduler.Task task = scheduler.everyInterval(Duration.ofSeconds(1), () -> runs.add(secondsSinceStart()));
        scheduler.advance(Duration.ofSeconds(2));
        task.cancel();
        task.cancel();
        scheduler.advance(Duration.ofSeconds(5));
        assertEquals(List.of(1L, 2L), runs);
        assertEquals(0, scheduler.activeTasks());
    }

    @Test
    void aTaskMayCancelItselfAndScheduleAnother() {
        List<String> runs = new ArrayList<>();
        Scheduler.Task[] self = new Scheduler.Task[1];
        self[0] = scheduler.everyInterval(Duration.ofSeconds(3), () -> {
            runs.add("first@" + secondsSinceStart());
            self[0].cancel();
            scheduler.everyInterval(Duration.ofSeconds(2), () -> runs.add("second@" + secondsSinceStart()));
        });
        scheduler.advance(Duration.ofSeconds(8));
        assertEquals(List.of("first@3", "second@5", "second@7"), runs);
    }

    @Test
    void runDueRunsWhatFellDueWhenTheClockWasMovedDirectly() {
        List<Long> runs = new ArrayList<>();
        scheduler.everyInterval(Duration.ofSeconds(5), () -> runs.add(secondsSinceStart()));
        clock.advance(Duration.ofSeconds(11));
        scheduler.runDue();
        assertEquals(List.of(11L, 11L), runs, "both overdue runs happen now: the clock never goes back");
        assertTrue(clock.instant().equals(start.plusSeconds(11)));
    }
}
