package io.idemkey.core;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the engine decided, counted. Counters never carry the key (unbounded cardinality).
 * Thread-safe and cheap on the request path.
 */
public final class IdempotencyMetrics {

    /** The counted events; {@link #metricName()} is the exported name. */
    public enum Event {
        /** A first request acquired its key and ran. */
        ACQUIRED,
        /** A retry was answered with the recorded response. */
        REPLAYED,
        /** A retry met a running first request: 409. */
        CONFLICT,
        /** A key was reused with a different request: 422. */
        MISMATCH,
        /** A response was recorded for replay. */
        COMPLETED,
        /** A key was released (5xx, exception, retryable, refused before the method started). */
        RELEASED,
        /** A store operation failed (unreachable, timed out). */
        STORE_ERROR,
        /** A lease was lost: the record expired or was taken over before its owner finished. */
        LOST_LEASE,
        /** A request ran unprotected because the store was unreachable and the endpoint fails open. */
        FAIL_OPEN,
        /** A response was delivered but could not be recorded (too large, store gone); its key was released. */
        NOT_RECORDED;

        public String metricName() {
            return "idempotency." + name().toLowerCase(java.util.Locale.ROOT).replace('_', '.');
        }
    }

    private final Map<Event, LongAdder> counters = new LinkedHashMap<>();

    public IdempotencyMetrics() {
        for (Event event : Event.values()) {
            counters.put(event, new LongAdder());
        }
    }

    public void count(Event event) {
        counters.get(event).increment();
    }

    public long get(Event event) {
        return counters.get(event).sum();
    }

    /** Every counter, by metric name, in declaration order. */
    public Map<String, Long> snapshot() {
        Map<String, Long> snapshot = new LinkedHashMap<>();
        counters.forEach((event, adder) -> snapshot.put(event.metricName(), adder.sum()));
        return snapshot;
    }
}
