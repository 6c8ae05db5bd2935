package io.idemkey.spi;

import java.time.Duration;
import java.util.Objects;

/**
 * At most {@code permits} requests per idempotency key (and caller scope) in a fixed window that
 * starts with the first of them, as {@code idempotency.rate-limit.per-key} ({@code 20/1m}) sets it.
 *
 * @param permits requests allowed per window, at least 1
 * @param window  the window, at least one second
 */
public record RateLimit(int permits, Duration window) {

    /**
     * Checks the components.
     *
     * @param permits requests allowed per window, at least 1
     * @param window the window's length, positive
     */
    public RateLimit {
        Objects.requireNonNull(window, "window");
        if (permits < 1) {
            throw new IllegalArgumentException("permits must be at least 1: " + permits);
        }
        if (window.compareTo(Duration.ofSeconds(1)) < 0) {
            throw new IllegalArgumentException("the window must be at least 1 s: " + window);
        }
    }

    @Override
    public String toString() {
        long seconds = window.toSeconds();
        String unit = seconds % 3600 == 0 ? seconds / 3600 + "h" : seconds % 60 == 0 ? seconds / 60 + "m" : seconds + "s";
        return permits + " requests per " + unit;
    }
}
