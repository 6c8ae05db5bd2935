package io.idemkey.core;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * What the engine decided, counted: totals kept here (the readiness check shows them), and every
 * event handed to an {@link Exporter} (MicroProfile Metrics, where the server has it) with its
 * endpoint. Counters never carry the key (unbounded cardinality); the endpoint label is bounded,
 * one per resource method. Thread-safe and cheap on the request path.
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
        /**
         * The store refused a request's call: the credentials Idemkey connects with are not accepted, or
         * lack a permission (a Redis ACL): a configuration error, answered 503; not a {@link #STORE_ERROR}.
         */
        STORE_ACCESS_DENIED,
        /** A lease was lost: the record expired or was taken over before its owner finished. */
        LOST_LEASE,
        /** A request ran unprotected because the store was unreachable and the endpoint fails open. */
        FAIL_OPEN,
        /** A response was delivered but could not be recorded (too large, store gone); its key was released. */
        NOT_RECORDED,
        /** A request was refused with 429: its key was used more often than the rate limit allows. */
        RATE_LIMITED,
        /** An expired record was deleted by the store's cleanup (stores that do not expire records themselves). */
        EXPIRED_DELETED,
        /** A completion fewer replicas acknowledged than {@code idempotency.redis.wait-replicas} asks, within its timeout. */
        NOT_REPLICATED,
        /**
         * A completion or release that could not be sent (again) because the application is stopping:
         * its record stays in progress until its lease ends.
         */
        DROPPED_AT_SHUTDOWN;

        public String metricName() {
            return "idempotency." + name().toLowerCase(Locale.ROOT).replace('_', '.');
        }
    }

    /** Where counted events and store latencies go besides the totals: a monitoring system. */
    public interface Exporter {

        /** One event at one endpoint ({@code POST /orders}). */
        void count(Event event, String endpoint);

        /** The same event several times at once (rows deleted by one cleanup). */
        default void count(Event event, String endpoint, long times) {
            for (long i = 0; i < times; i++) {
                count(event, endpoint);
            }
        }

        /** One store call ({@code acquire}, {@code complete}, {@code release}, {@code renew}) and how long it took. */
        void storeCall(String operation, Duration took);

        /** Hands over the figure of executions holding a lease right now (a gauge). */
        void inFlight(LongSupplier executionsHoldingALease);

        /**
         * {@code exporter}, made harmless: the first failure of any of its calls (a registry that
         * refuses a meter, a linkage error) is logged once and turns it off, so that no request or
         * store call ever fails for its metrics.
         */
        static Exporter guarded(Exporter exporter) {
            return new GuardedExporter(Objects.requireNonNull(exporter, "exporter"));
        }

        /** Exports nothing. */
        Exporter NONE = new Exporter() {
            @Override
            public void count(Event event, String endpoint) {
            }

            @Override
            public void storeCall(String operation, Duration took) {
            }

            @Override
            public void inFlight(LongSupplier executionsHoldingALease) {
            }
        };
    }

    private final Map<Event, LongAdder> counters = new LinkedHashMap<>();
    private final Exporter exporter;

    public IdempotencyMetrics() {
        this(Exporter.NONE);
    }

    public IdempotencyMetrics(Exporter exporter) {
        this.exporter = Objects.requireNonNull(exporter, "exporter");
        for (Event event : Event.values()) {
            counters.put(event, new LongAdder());
        }
    }

    public void count(Event event, String endpoint) {
        counters.get(event).increment();
        exporter.count(event, endpoint);
    }

    /** The same event several times at once. */
    public void count(Event event, String endpoint, long times) {
        counters.get(event).add(times);
        exporter.count(event, endpoint, times);
    }

    public long get(Event event) {
        return counters.get(event).sum();
    }

    public Exporter exporter() {
        return exporter;
    }

    /** Every counter, by metric name, in declaration order. */
    public Map<String, Long> snapshot() {
        Map<String, Long> snapshot = new LinkedHashMap<>();
        counters.forEach((event, adder) -> snapshot.put(event.metricName(), adder.sum()));
        return snapshot;
    }

    /** An exporter that a failure turns off ({@link Exporter#guarded}). */
    private static final class GuardedExporter implements Exporter {

        private static final java.util.logging.Logger LOG = java.util.logging.Logger.getLogger(IdempotencyMetrics.class.getName());

        private final Exporter exporter;
        private volatile boolean off;

        GuardedExporter(Exporter exporter) {
            this.exporter = exporter;
        }

        @Override
        public void count(Event event, String endpoint) {
            guarded(() -> exporter.count(event, endpoint));
        }

        @Override
        public void count(Event event, String endpoint, long times) {
            guarded(() -> exporter.count(event, endpoint, times));
        }

        @Override
        public void storeCall(String operation, Duration took) {
            guarded(() -> exporter.storeCall(operation, took));
        }

        @Override
        public void inFlight(java.util.function.LongSupplier executionsHoldingALease) {
            guarded(() -> exporter.inFlight(executionsHoldingALease));
        }

        private void guarded(Runnable call) {
            if (off) {
                return;
            }
            try {
                call.run();
            } catch (RuntimeException | LinkageError failed) {
                synchronized (this) {
                    if (!off) {
                        off = true;
                        LOG.log(java.util.logging.Level.WARNING, failed, () -> "Idemkey: the metrics exporter "
                                + exporter.getClass().getName() + " failed; its metrics are off from now on"
                                + " (requests are not affected)");
                    }
                }
            }
        }
    }
}
