package io.idemkey.bench;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntPredicate;
import java.util.function.ToLongFunction;
import java.util.function.Supplier;

/**
 * A closed-loop HTTP load generator on the JDK's HttpClient: {@code connections} workers, each
 * sending its next request when the last one is answered, for a warm-up and then a measured
 * period. Latencies are recorded per request in the measured period only; it stops by itself.
 */
final class LoadGenerator {

    /**
     * The figures of one run; {@code cost}: what the server and Redis spent in the measured window
     * (null where nothing was metered).
     */
    record Result(double throughput, double p50Millis, double p99Millis, long requests, long errors, Meters.Reading cost) {

        /** The window's cost per request answered in it. */
        double perRequest(ToLongFunction<Meters.Reading> figure) {
            return cost == null || requests == 0 ? Double.NaN : (double) figure.applyAsLong(cost) / requests;
        }
    }

    private final HttpClient client;
    /** Reads the meters at the edges of the measured windows: its own thread, never held up by other work. */
    private final ExecutorService meterReader = Executors.newSingleThreadExecutor(runnable -> {
        Thread thread = new Thread(runnable, "meter-reader");
        thread.setDaemon(true);
        return thread;
    });
    private volatile Meters meters;

    LoadGenerator(HttpClient client) {
        this.client = client;
    }

    /** Meters read at the start and the end of every measured window from now on (null: none). */
    void meter(Meters meters) {
        this.meters = meters;
    }

    /**
     * @param keys the Idempotency-Key of each request, or null to send none
     */
    Result run(URI uri, String body, int connections, Duration warmUp, Duration measured, Supplier<String> keys)
            throws Exception {
        return run(uri, body, connections, warmUp, measured, keys, Long.MAX_VALUE);
    }

    /** The same, stopping after {@code budget} requests if that comes first. */
    Result run(URI uri, String body, int connections, Duration warmUp, Duration measured, Supplier<String> keys,
               long budget) throws Exception {
        return run(uri, body, connections, warmUp, measured, keys, budget, status -> status < 300);
    }

    /** The same, counting the answers whose status is {@code expected} (409s, say) and the others as errors. */
    Result run(URI uri, String body, int connections, Duration warmUp, Duration measured, Supplier<String> keys,
               long budget, IntPredicate expected) throws Exception {
        AtomicLong remaining = new AtomicLong(budget);
        long start = System.nanoTime();
        long measureFrom = start + warmUp.toNanos();
        long stopAt = measureFrom + measured.toNanos();
        Meters metered = budget == Long.MAX_VALUE ? meters : null; // a run stopped by its budget may end before its window
        CompletableFuture<Meters.Reading> cost = metered == null ? CompletableFuture.completedFuture(null)
                : CompletableFuture.supplyAsync(metered::read, CompletableFuture.delayedExecutor(warmUp.toNanos(), TimeUnit.NANOSECONDS, meterReader))
                .thenCompose(before -> CompletableFuture.supplyAsync(() -> metered.read().minus(before),
                        CompletableFuture.delayedExecutor(stopAt - System.nanoTime(), TimeUnit.NANOSECONDS, meterReader)));
        List<long[]> latencies = new ArrayList<>();
        AtomicLong errors = new AtomicLong();
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        for (int i = 0; i < connections; i++) {
            Worker worker = new Worker(uri, body, keys, measureFrom, stopAt, errors, remaining, expected);
            latencies.add(null);
            int index = i;
            workers.add(worker.loop().thenRun(() -> latencies.set(index, worker.recorded())));
        }
        CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).get();
        long[] all = latencies.stream().flatMapToLong(Arrays::stream).sorted().toArray();
        double seconds = measured.toNanos() / 1e9;
        return new Result(all.length / seconds, percentile(all, 0.50), percentile(all, 0.99), all.length, errors.get(),
                cost.get());
    }

    private static double percentile(long[] sorted, double p) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1)] / 1e6;
    }

    private final class Worker {
        private final URI uri;
        private final String body;
        private final Supplier<String> keys;
        private final long measureFrom;
        private final long stopAt;
        private final AtomicLong errors;
        private final IntPredicate expected;
        private final AtomicLong remaining;
        private long[] recorded = new long[4096];
        private int count;

        Worker(URI uri, String body, Supplier<String> keys, long measureFrom, long stopAt, AtomicLong errors,
               AtomicLong remaining, IntPredicate expected) {
            this.remaining = remaining;
            this.expected = expected;
            this.uri = uri;
            this.body = body;
            this.keys = keys;
            this.measureFrom = measureFrom;
            this.stopAt = stopAt;
            this.errors = errors;
        }

        CompletableFuture<Void> loop() {
            long sentAt = System.nanoTime();
            if (sentAt >= stopAt || remaining.getAndDecrement() <= 0) {
                return CompletableFuture.completedFuture(null);
            }
            HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30))
                    .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body));
            if (keys != null) {
                request.header("Idempotency-Key", keys.get());
            }
            return client.sendAsync(request.build(), HttpResponse.BodyHandlers.discarding())
                    .handle((response, failure) -> {
                        long answeredAt = System.nanoTime();
                        if (failure != null || !expected.test(response.statusCode())) {
                            errors.incrementAndGet();
                        } else if (sentAt >= measureFrom && answeredAt <= stopAt) {
                            record(answeredAt - sentAt);
                        }
                        return null;
                    })
                    .thenCompose(ignored -> loop());
        }

        private void record(long nanos) {
            if (count == recorded.length) {
                recorded = Arrays.copyOf(recorded, count * 2);
            }
            recorded[count++] = nanos;
        }

        long[] recorded() {
            return Arrays.copyOf(recorded, count);
        }
    }
}
