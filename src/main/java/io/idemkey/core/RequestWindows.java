package io.idemkey.core;

import io.idemkey.spi.RateLimit;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * Requests counted per key in fixed windows, in this JVM: the in-memory store's rate limit, and the
 * count of replays this instance answers from its cache (they never reach the store). Bounded: at
 * its bound, ended windows are dropped (at most once a second), and while it is still full a key it
 * does not track yet is not counted (its requests are let through). Thread-safe.
 */
public final class RequestWindows {

    private record Window(int count, Instant endsAt) {
    }

    private static final Duration SWEEP_AT_MOST_EVERY = Duration.ofSeconds(1);

    private final ConcurrentMap<String, Window> windows = new ConcurrentHashMap<>();
    private final int maxKeys;
    private volatile Instant lastSweep = Instant.MIN;

    public RequestWindows(int maxKeys) {
        this.maxKeys = maxKeys;
    }

    /**
     * Counts one request with this key.
     *
     * @return the time left in the window if the request is beyond the limit, else empty
     */
    public Optional<Duration> count(String key, RateLimit limit, Instant now) {
        if (windows.size() >= maxKeys) {
            if (lastSweep.plus(SWEEP_AT_MOST_EVERY).isBefore(now)) {
                lastSweep = now;
                sweep(now);
            }
            if (windows.size() >= maxKeys && !windows.containsKey(key)) {
                return Optional.empty(); // full of live windows: not tracked, let through
            }
        }
        Window window = windows.compute(key, (k, w) -> w == null || !w.endsAt().isAfter(now)
                ? new Window(1, now.plus(limit.window())) : new Window(w.count() + 1, w.endsAt()));
        return window.count() > limit.permits() ? Optional.of(Duration.between(now, window.endsAt())) : Optional.empty();
    }

    /** Drops the windows that ended. */
    public void sweep(Instant now) {
        windows.values().removeIf(w -> !w.endsAt().isAfter(now));
    }
}
