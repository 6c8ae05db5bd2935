package io.idemkey.testing;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;

/** A {@link Clock} that stands still until a test moves it. Thread-safe; never moves backwards. */
public final class ManualClock extends Clock {

    private final AtomicReference<Instant> now;
    private final ZoneId zone;

    public ManualClock() {
        this(Instant.parse("2030-01-01T00:00:00Z"));
    }

    public ManualClock(Instant start) {
        this(new AtomicReference<>(start), ZoneOffset.UTC);
    }

    private ManualClock(AtomicReference<Instant> now, ZoneId zone) {
        this.now = now;
        this.zone = zone;
    }

    @Override
    public Instant instant() {
        return now.get();
    }

    @Override
    public ZoneId getZone() {
        return zone;
    }

    /** The same time line, seen in another zone. */
    @Override
    public Clock withZone(ZoneId zone) {
        return new ManualClock(now, zone);
    }

    /** Moves the clock forward by {@code duration} (zero or more) and returns the new instant. */
    public Instant advance(Duration duration) {
        if (duration.isNegative()) {
            throw new IllegalArgumentException("time does not go backwards: " + duration);
        }
        return now.updateAndGet(t -> t.plus(duration));
    }

    /** Moves the clock to {@code instant}, if that is later than now. */
    public void advanceTo(Instant instant) {
        now.updateAndGet(t -> instant.isAfter(t) ? instant : t);
    }
}
