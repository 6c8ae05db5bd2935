package io.idemkey.metrics;

import io.idemkey.core.IdempotencyMetrics;
import io.idemkey.core.IdempotencyMetrics.Event;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import jakarta.enterprise.context.Dependent;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Idemkey's figures in the server's Micrometer {@link MeterRegistry}, where the server gives its
 * applications one as a CDI bean (WildFly with its {@code micrometer} subsystem, whose Prometheus
 * registry serves them on the management port): the same names and tags as with MicroProfile
 * Metrics ({@code idempotency.acquired{endpoint="POST /orders"}}, in Prometheus
 * {@code idempotency_acquired_total}; the store's latency as a timer per operation,
 * {@code idempotency.store.latency}; {@code idempotency.in.flight}).
 *
 * <p>Meters are made through the registry's {@code counter(name, tags)}, {@code timer(name, tags)}
 * and {@code gauge(name, tags, ...)}: WildFly's registry for a deployment exports only those (a
 * meter registered through a builder stays in the deployment's own registry and is never served,
 * with a warning "MeterRegistry.Config is not supported"); they carry no description.
 *
 * <p>Where the Micrometer API is not visible to the application the container skips this bean,
 * whose types it cannot load; where it is visible but no {@code MeterRegistry} bean exists, the
 * constructor fails where Idemkey's start-up sees it and says so in one line.
 */
@Dependent
public class MicrometerExporter implements IdempotencyMetrics.Exporter {

    private final MeterRegistry registry;
    private final Map<Event, Map<String, Counter>> counters = new EnumMap<>(Event.class);
    private final Map<String, Timer> timers = new ConcurrentHashMap<>();
    private volatile LongSupplier executionsHoldingALease = () -> 0;

    /**
     * Looks up the server's registry.
     *
     * @param beans the application's beans
     * @throws IllegalStateException if the server offers no {@code MeterRegistry} bean
     */
    @Inject
    public MicrometerExporter(Instance<Object> beans) {
        Instance<MeterRegistry> registries = beans.select(MeterRegistry.class);
        if (!registries.isResolvable()) {
            throw new IllegalStateException("the Micrometer API is visible but the server offers no MeterRegistry bean");
        }
        this.registry = registries.get();
        for (Event event : Event.values()) {
            counters.put(event, new ConcurrentHashMap<>());
        }
    }

    @Override
    public void count(Event event, String endpoint) {
        count(event, endpoint, 1);
    }

    @Override
    public void count(Event event, String endpoint, long times) {
        counters.get(event).computeIfAbsent(endpoint, e -> registry.counter(event.metricName(), Tags.of("endpoint", e)))
                .increment(times);
    }

    @Override
    public void storeCall(String operation, Duration took) {
        timers.computeIfAbsent(operation, o -> registry.timer(MicroProfileMetricsExporter.STORE_LATENCY, Tags.of("operation", o)))
                .record(took);
    }

    @Override
    public void inFlight(LongSupplier executionsHoldingALease) {
        // held here: Micrometer keeps only a weak reference to what a gauge reads
        this.executionsHoldingALease = executionsHoldingALease;
        registry.gauge(MicroProfileMetricsExporter.IN_FLIGHT, Tags.empty(), this,
                exporter -> exporter.executionsHoldingALease.getAsLong());
    }
}
