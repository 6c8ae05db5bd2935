package io.idemkey.chaos;

import io.idemkey.it.Deployments;
import io.idemkey.it.ServerProcess;
import io.idemkey.testing.RedisServer;
import org.jboss.shrinkwrap.api.exporter.ZipExporter;
import redis.clients.jedis.Jedis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * The chaos run: one Payara Micro and one Open Liberty share one store (a Redis with its append-only
 * file on, as production Redis should run, or a PostgreSQL with {@code -Dchaos.store=jdbc}). Every
 * key is sent up to N times, concurrently, to random servers after random delays, while the store is
 * killed and restarted twice and one server is killed and restarted. Then every key gets retried
 * until it has an answer, and the run checks: one execution per answered key (the ledger, a Redis
 * never restarted, counts method bodies that ran to their end), byte-identical replays, every record
 * with an expiry, no unexpected 5xx.
 *
 * <p>{@code mvn -f it-tests package liberty:create exec:java@chaos -Dchaos.keys=10000}; the suite
 * runs short versions on both stores ({@code ChaosIT}).
 */
public final class ChaosRun {

    /** How much chaos. */
    public record Options(int keys, int maxSendsPerKey, int maxDelayMillis, int inFlight, String store) {
        static Options fromSystemProperties() {
            return new Options(Integer.getInteger("chaos.keys", 10_000), Integer.getInteger("chaos.sends", 5),
                    Integer.getInteger("chaos.delay-ms", 200), Integer.getInteger("chaos.in-flight", 48),
                    System.getProperty("chaos.store", "redis"));
        }
    }

    /** What one request got. */
    record Outcome(int status, String body, boolean replayed, boolean storeUnavailable, String error) {
        boolean definitive() {
            return status == 201 || status == 402;
        }
    }

    /** The figures of a run. */
    public record Report(int keys, int requests, Duration duration, Map<String, Integer> answers,
                         Map<Integer, Integer> executionsPerAnsweredKey, int answeredKeys, int keysWithoutAnswer,
                         int duplicatesAtKill, int unexplainedDuplicates, int replays, int identicalReplays,
                         int differingAnswers, int keysWithoutTtl, int recordsInProgress, int unexpected5xx,
                         List<String> events) {

        /** Whether every check holds. */
        public boolean passed() {
            return unexplainedDuplicates == 0 && differingAnswers == 0 && keysWithoutTtl == 0 && unexpected5xx == 0
                    && keysWithoutAnswer == 0 && !executionsPerAnsweredKey.containsKey(0);
        }

        public String table() {
            StringBuilder out = new StringBuilder();
            out.append(String.format("%n| figure | value |%n| --- | --- |%n"));
            row(out, "keys", keys);
            row(out, "requests", requests + String.format(" in %.1f s (%.0f/s)", duration.toMillis() / 1000.0,
                    requests * 1000.0 / Math.max(1, duration.toMillis())));
            row(out, "answers", answers.toString());
            row(out, "executions per answered key", executionsPerAnsweredKey + " (" + answeredKeys + " keys)");
            row(out, "keys run twice because their server was killed between the method and its record",
                    duplicatesAtKill);
            row(out, "keys run twice otherwise (must be 0)", unexplainedDuplicates);
            row(out, "keys never answered (must be 0)", keysWithoutAnswer);
            row(out, "replays byte-identical", identicalReplays + " / " + replays
                    + (replays == 0 ? "" : String.format(" (%.1f %%)", 100.0 * identicalReplays / replays)));
            row(out, "keys answered with differing bodies (must be 0)", differingAnswers);
            row(out, "records without an expiry (must be 0)", keysWithoutTtl);
            row(out, "records still in progress (expire by themselves)", recordsInProgress);
            row(out, "unexpected 5xx (must be 0)", unexpected5xx);
            out.append(String.format("%nevents: %s%nresult: %s%n", String.join("; ", events), passed() ? "PASSED" : "FAILED"));
            return out.toString();
        }

        private static void row(StringBuilder out, String figure, Object value) {
            out.append("| ").append(figure).append(" | ").append(value).append(" |\n");
        }
    }

    /**
     * How long before the kill a body may have ended and still be excused: the completion is one
     * round trip, or a few retries in the background while the store restarts; far less than this.
     */
    private static final Duration KILL_WINDOW = Duration.ofSeconds(3);

    private final Options options;
    private final String run = UUID.randomUUID().toString().substring(0, 8);
    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2)).build();
    private final Map<Integer, List<Outcome>> outcomes = new ConcurrentHashMap<>();
    private final List<String> events = new CopyOnWriteArrayList<>();
    private final AtomicInteger requests = new AtomicInteger();
    private final Set<String> killedInstances = ConcurrentHashMap.newKeySet();
    private volatile Instant killedAt = Instant.MAX;
    private volatile Instant start = Instant.now();
    private URI[] servers;

    private ChaosRun(Options options) {
        this.options = options;
    }

    public static void main(String[] args) throws Exception {
        if ("messages".equals(System.getProperty("chaos.mode"))) {
            MessageChaosRun.main(args); // -Dchaos.mode=messages: the payment consumers instead of HTTP
            return;
        }
        Options options = Options.fromSystemProperties();
        System.out.printf("Chaos run: %d keys, up to %d sends each, Payara Micro + Open Liberty, store %s%n",
                options.keys(), options.maxSendsPerKey(), options.store()
                        + System.getProperty("chaos.redis", "").transform(redis -> redis.isEmpty() ? "" : " (" + redis + ")"));
        Report report = run(options);
        System.out.println(report.table());
        System.exit(report.passed() ? 0 : 1);
    }

    public static Report run(Options options) throws Exception {
        return new ChaosRun(options).execute();
    }

    private Report execute() throws Exception {
        try (ChaosStore store = ChaosStore.start(options.store());
             RedisServer ledger = RedisServer.start()) {
            Path war = Files.createTempDirectory("idemkey-chaos").resolve("chaos.war");
            Map<String, String> config = new HashMap<>(store.config());
            config.put("chaos.ledger.url", ledger.url());
            Deployments.guardedApp("chaos", config).as(ZipExporter.class).exportTo(war.toFile(), true);
            int[] ports = {ServerProcess.freePort(), ServerProcess.freePort()};
            ServerProcess.Kind[] kinds = {ServerProcess.Kind.PAYARA, ServerProcess.Kind.LIBERTY};
            ServerProcess[] running = ChaosStore.startBoth(() -> store.startServer(kinds[0], war, ports[0]),
                    () -> store.startServer(kinds[1], war, ports[1]));
            servers = new URI[]{running[0].uri("chaos"), running[1].uri("chaos")};
            try {
                start = Instant.now();
                sendEverything(store, war, kinds, ports, running);
                settle();
                Duration duration = Duration.between(start, Instant.now());
                return report(store, ledger, duration);
            } finally {
                for (ServerProcess server : running) {
                    server.close();
                }
            }
        }
    }

    /** The load, with the store restarted at 20 % and 70 % of the keys and a server killed at 40 %. */
    private void sendEverything(ChaosStore store, Path war, ServerProcess.Kind[] kinds, int[] ports,
                                ServerProcess[] running) throws Exception {
        ScheduledExecutorService timer = Executors.newScheduledThreadPool(8);
        Semaphore inFlight = new Semaphore(options.inFlight());
        AtomicInteger keysDone = new AtomicInteger();
        List<CompletableFuture<Void>> all = new ArrayList<>();
        CompletableFuture<Void> serverRestart = CompletableFuture.completedFuture(null);
        try {
            for (int n = 1; n <= options.keys(); n++) {
                int progress = n * 100 / options.keys();
                if (n == Math.max(1, options.keys() / 5) || n == options.keys() * 7 / 10) {
                    restartStore(store);
                } else if (n == options.keys() * 2 / 5) {
                    int victim = ThreadLocalRandom.current().nextInt(2);
                    killedInstances.add(instance(servers[victim]));
                    running[victim].kill();
                    killedAt = Instant.now();
                    events.add(String.format("%.1f s: %s killed (kill -9)", seconds(), kinds[victim]));
                    serverRestart = CompletableFuture.runAsync(() -> {
                        running[victim] = store.startServer(kinds[victim], war, ports[victim]);
                        events.add(String.format("%.1f s: %s back", seconds(), kinds[victim]));
                    });
                }
                int key = n;
                int sends = 1 + ThreadLocalRandom.current().nextInt(options.maxSendsPerKey());
                List<CompletableFuture<Void>> sendsOfKey = new ArrayList<>();
                for (int attempt = 0; attempt < sends; attempt++) {
                    int server = ThreadLocalRandom.current().nextInt(2);
                    int delay = ThreadLocalRandom.current().nextInt(options.maxDelayMillis() + 1);
                    int attemptNumber = attempt;
                    inFlight.acquire();
                    CompletableFuture<Void> send = new CompletableFuture<>();
                    timer.schedule(() -> send(key, attemptNumber, server).whenComplete((outcome, failure) -> {
                        inFlight.release();
                        send.complete(null);
                    }), delay, TimeUnit.MILLISECONDS);
                    sendsOfKey.add(send);
                }
                all.add(CompletableFuture.allOf(sendsOfKey.toArray(CompletableFuture[]::new))
                        .thenRun(keysDone::incrementAndGet));
                if (progress == 100) {
                    break;
                }
            }
            CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(30, TimeUnit.MINUTES);
            serverRestart.get(5, TimeUnit.MINUTES);
        } finally {
            timer.shutdownNow();
        }
    }

    private void restartStore(ChaosStore store) {
        store.restart();
        events.add(String.format("%.1f s: %s", seconds(), store.restartEvent()));
    }

    /** Retries every key that has no answer yet (409, 503, the killed server) until it has one. */
    private void settle() throws Exception {
        List<CompletableFuture<Void>> pending = new ArrayList<>();
        Semaphore inFlight = new Semaphore(options.inFlight());
        for (int key = 1; key <= options.keys(); key++) {
            if (outcomes.getOrDefault(key, List.of()).stream().noneMatch(Outcome::definitive)) {
                int k = key;
                inFlight.acquire();
                pending.add(CompletableFuture.runAsync(() -> {
                    try {
                        for (int attempt = 0; attempt < 80; attempt++) {
                            Outcome outcome = send(k, 100 + attempt, attempt % 2).join();
                            if (outcome.definitive()) {
                                return;
                            }
                            sleep(250);
                        }
                    } finally {
                        inFlight.release();
                    }
                }));
            }
        }
        CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).get(10, TimeUnit.MINUTES);
    }

    private CompletableFuture<Outcome> send(int n, int attempt, int server) {
        requests.incrementAndGet();
        HttpRequest request = HttpRequest.newBuilder(servers[server].resolve("chaos/" + n))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .header("Idempotency-Key", "\"chaos-" + run + "-" + n + "\"")
                .POST(HttpRequest.BodyPublishers.ofString("{\"amount\":" + n + ",\"attempt\":" + attempt + "}"))
                .build();
        return client.sendAsync(request, HttpResponse.BodyHandlers.ofString())
                .thenApply(response -> new Outcome(response.statusCode(), response.body(),
                        response.headers().firstValue("Idempotent-Replayed").isPresent(),
                        response.statusCode() == 503 && response.body().contains("/problems/store-unavailable"), null))
                .exceptionally(failure -> new Outcome(0, "", false, false, failure.getClass().getSimpleName()))
                .thenApply(outcome -> {
                    outcomes.computeIfAbsent(n, k -> Collections.synchronizedList(new ArrayList<>())).add(outcome);
                    return outcome;
                });
    }

    private Report report(ChaosStore store, RedisServer ledger, Duration duration) {
        Map<String, Integer> answers = new TreeMap<>();
        Map<Integer, Integer> executionsPerKey = new TreeMap<>();
        int answered = 0;
        int unanswered = 0;
        int duplicatesAtKill = 0;
        int unexplained = 0;
        int replays = 0;
        int identical = 0;
        int differing = 0;
        int unexpected5xx = 0;
        try (Jedis jedis = ledger.client()) {
            for (int n = 1; n <= options.keys(); n++) {
                List<Outcome> got = new ArrayList<>(outcomes.getOrDefault(n, List.of()));
                for (Outcome outcome : got) {
                    String label = outcome.error() != null ? "connection lost"
                            : outcome.status() == 404 ? "404 (server restarting, application not deployed yet)"
                            : Integer.toString(outcome.status());
                    answers.merge(label, 1, Integer::sum);
                    if (outcome.status() >= 500 && !outcome.storeUnavailable()) {
                        unexpected5xx++;
                    }
                }
                List<Outcome> definitive = got.stream().filter(Outcome::definitive).toList();
                if (definitive.isEmpty()) {
                    unanswered++;
                    continue;
                }
                answered++;
                List<String> executions = jedis.lrange("chaos:executions:chaos-" + run + "-" + n, 0, -1);
                executionsPerKey.merge(executions.size(), 1, Integer::sum);
                if (executions.size() > 1) {
                    if (allButLastDiedWithTheKilledServer(executions)) {
                        duplicatesAtKill++;
                    } else {
                        unexplained++;
                    }
                }
                Set<String> bodies = definitive.stream().map(Outcome::body).collect(Collectors.toSet());
                if (bodies.size() > 1) {
                    differing++;
                }
                String first = definitive.stream().filter(o -> !o.replayed()).map(Outcome::body).findFirst()
                        .orElse(definitive.get(0).body());
                for (Outcome outcome : definitive) {
                    if (outcome.replayed()) {
                        replays++;
                        identical += outcome.body().equals(first) ? 1 : 0;
                    }
                }
            }
        }
        int[] records = store.scan();
        return new Report(options.keys(), requests.get(), duration, answers, executionsPerKey, answered, unanswered,
                duplicatesAtKill, unexplained, replays, identical, differing, records[0], records[1], unexpected5xx,
                events);
    }

    /**
     * A body that ran on the killed server within {@link #KILL_WINDOW} before it died, and whose
     * record it never wrote. Any other second execution is a defect.
     */
    private boolean allButLastDiedWithTheKilledServer(List<String> executions) {
        long kill = killedAt.toEpochMilli();
        for (String execution : executions.subList(0, executions.size() - 1)) {
            String[] parts = execution.split("\\|");
            long ranAt = Long.parseLong(parts[1]);
            boolean onKilledServer = killedInstances.contains(parts[0]);
            boolean justBeforeTheKill = ranAt <= kill && kill - ranAt <= KILL_WINDOW.toMillis();
            if (!onKilledServer || !justBeforeTheKill) {
                return false;
            }
        }
        return true;
    }

    private String instance(URI server) {
        try {
            return client.send(HttpRequest.newBuilder(server.resolve("chaos/instance")).GET().build(),
                    HttpResponse.BodyHandlers.ofString()).body().trim();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private double seconds() {
        return Duration.between(start, Instant.now()).toMillis() / 1000.0;
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
