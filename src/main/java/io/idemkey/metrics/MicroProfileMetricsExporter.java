package io.idemkey.metrics;

import io.idemkey.core.IdempotencyMetrics;
import io.idemkey.core.IdempotencyMetrics.Event;
import jakarta.enterprise.context.Dependent;
import jakarta.inject.Inject;
import org.eclipse.microprofile.metrics.Counter;
import org.eclipse.microprofile.metrics.Metadata;
import org.eclipse.microprofile.metrics.MetricRegistry;
import org.eclipse.microprofile.metrics.MetricUnits;
import org.eclipse.microprofile.metrics.Tag;
import org.eclipse.microprofile.metrics.Timer;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Idemkey's figures in MicroProfile Metrics 5 (the application registry, {@code /metrics}): a
 * counter per event with an {@code endpoint} tag ({@code idempotency.acquired{endpoint="POST
 * /orders"}}), the store's latency as a timer per operation ({@code idempotency.store.latency}), and
 * the executions holding a lease ({@code idempotency.in.flight}).
 *
 * <p>Active where the server provides MicroProfile Metrics (Payara Micro; Open Liberty with
 * {@code mpMetrics-5.x}); elsewhere the container skips this bean, whose types it cannot load, or
 * its constructor (which builds the metadata) fails where Idemkey's start-up sees it.
 */
@Dependent
public class MicroProfileMetricsExporter implements IdempotencyMetrics.Exporter {

    static final String STORE_LATENCY = "idempotency.store.latency";
    static final String IN_FLIGHT = "idempotency.in.flight";

    @Inject
    MetricRegistry registry;

    private final Map<Event, Metadata> metadata = new EnumMap<>(Event.class);
    private final Map<Event, Map<String, Counter>> counters = new EnumMap<>(Event.class);
    private final Map<String, Timer> timers = new ConcurrentHashMap<>();
    private volatile LongSupplier executionsHoldingALease = () -> 0;

    public MicroProfileMetricsExporter() {
        for (Event event : Event.values()) {
            metadata.put(event, Metadata.builder().withName(event.metricName())
                    .withDescription(description(event)).withUnit(MetricUnits.NONE).build());
            counters.put(event, new ConcurrentHashMap<>());
        }
    }

    @Override
    public void count(Event event, String endpoint) {
        count(event, endpoint, 1);
    }

    @Override
    public void count(Event event, String endpoint, long times) {
        counters.get(event).computeIfAbsent(endpoint,
                e -> registry.counter(metadata.get(event), new Tag("endpoint", e))).inc(times);
    }

    @Override
    public void storeCall(String operation, Duration took) {
        timers.computeIfAbsent(operation, o -> registry.timer(Metadata.builder().withName(STORE_LATENCY)
                .withDescription("How long Idemkey's calls to its store take, by operation")
                .withUnit(MetricUnits.NANOSECONDS).build(), new Tag("operation", o))).update(took);
    }

    @Override
    public void inFlight(LongSupplier executionsHoldingALease) {
        // held here: a gauge may keep only a weak reference to what it reads (Micrometer on Open Liberty does)
        this.executionsHoldingALease = executionsHoldingALease;
        registry.gauge(Metadata.builder().withName(IN_FLIGHT)
                        .withDescription("Guarded requests running right now, holding their key's lease").build(),
                this, exporter -> exporter.executionsHoldingALease.getAsLong());
    }

    private static String description(Event event) {
        return switch (event) {
            case ACQUIRED -> "First requests that acquired their key and ran";
            case REPLAYED -> "Retries answered with the recorded response";
            case CONFLICT -> "Retries refused with 409 while the first request ran";
            case MISMATCH -> "Keys reused with a different request (422)";
            case COMPLETED -> "Responses recorded for replay";
            case RELEASED -> "Keys released so that a retry runs again";
            case STORE_ERROR -> "Store calls that failed";
            case STORE_ACCESS_DENIED -> "Requests refused with 503 because the store refused Idemkey's credentials or"
                    + " permissions (a configuration error)";
            case LOST_LEASE -> "Leases lost: the record expired or another request took it over";
            case FAIL_OPEN -> "Requests run unprotected because the store was unreachable (fail-open)";
            case NOT_RECORDED -> "Responses delivered but not recorded";
            case RATE_LIMITED -> "Requests refused with 429 by the per-key rate limit";
            case EXPIRED_DELETED -> "Expired records deleted by the JDBC store's cleanup";
            case NOT_REPLICATED -> "Completions fewer replicas acknowledged in time than idempotency.redis.wait-replicas asks";
            case DROPPED_AT_SHUTDOWN -> "Completions and releases not sent because the application was stopping";
        };
    }
}
