package io.idemkey.metrics;

import io.idemkey.core.IdempotencyMetrics.Event;

import java.util.Set;
import java.util.TreeSet;

/**
 * The names {@link MicroProfileMetricsExporter} produces, as MicroProfile Metrics 5 writes them in
 * Prometheus text on Payara Micro and Open Liberty: dots become underscores, a counter gets
 * {@code _total}, a timer (unit nanoseconds) is written in seconds as {@code _seconds_count},
 * {@code _seconds_sum}, {@code _seconds_max} (Payara also {@code _seconds_mean}) and quantile lines of
 * {@code _seconds}; a gauge without
 * a unit keeps its name ({@code idempotency_in_flight}, which ObservabilityIT reads on both servers).
 */
public final class PrometheusNames {

    private PrometheusNames() {
    }

    /** Every series name the application scope of {@code /metrics} can carry for Idemkey. */
    public static Set<String> exported() {
        Set<String> names = new TreeSet<>();
        for (Event event : Event.values()) {
            names.add(prometheus(event.metricName()) + "_total");
        }
        String latency = prometheus(MicroProfileMetricsExporter.STORE_LATENCY) + "_seconds";
        // Payara Micro also writes _mean; its quantile lines (plain _seconds) carry nanoseconds, not
        // seconds (seen by ObservabilityIT), so the rules and the dashboard use _sum / _count and _max.
        names.addAll(Set.of(latency, latency + "_count", latency + "_sum", latency + "_max", latency + "_mean"));
        names.add(prometheus(MicroProfileMetricsExporter.IN_FLIGHT));
        return names;
    }

    private static String prometheus(String metricName) {
        return metricName.replace('.', '_');
    }
}
