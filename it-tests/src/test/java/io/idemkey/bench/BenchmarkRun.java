package io.idemkey.bench;

import io.idemkey.core.Fingerprint;
import io.idemkey.core.FingerprintBenchmarkBodies;
import io.idemkey.it.Deployments;
import io.idemkey.it.DatabaseStatements;
import io.idemkey.it.ServerProcess;
import io.idemkey.it.app.CheckThenLockStore;
import io.idemkey.store.redis.RedisStoreOptions;
import io.idemkey.testing.Host;
import io.idemkey.testing.MariaDbServer;
import io.idemkey.testing.PostgresServer;
import io.idemkey.testing.RedisCluster;
import io.idemkey.testing.RedisMonitor;
import io.idemkey.testing.RedisServer;
import io.idemkey.testing.TestDatabase;
import org.jboss.shrinkwrap.api.exporter.ZipExporter;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import jakarta.json.spi.JsonProvider;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.args.FlushMode;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;
import java.util.function.ToLongFunction;
import java.util.stream.Collectors;

/**
 * What idempotency costs, side by side, in one run of at most 15 minutes (docs/performance.md): the
 * no-op endpoint bare, guarded with a unique key per request on the Redis store's two call paths (each
 * call alone, the baseline, and coalesced, issue 30) at 1, 8, 32 and 256 connections, replayed, in
 * conflict, and guarded by the seeds' check-then-lock pattern; the floor under them (the no-op with
 * its round trips alone); throughput and latency on loopback, and
 * what each request costs the server and Redis (CPU time, allocations, Redis command time, socket
 * reads); a Redis Cluster; Redis round trips per request and memory per record; the JDBC store against
 * seed 003's SQL pattern on PostgreSQL; the same behind a network hop of 0, 0.25 and 1 ms one way
 * (Redis and PostgreSQL in a network namespace of the benchmark's); the fingerprint (JMH); issue 30's
 * targets; on demand, MariaDB and the cost of encryption at rest. Payara Micro, the JDK's HttpClient as
 * the load generator. Every loopback figure is the median of {@code bench.repeats} runs, with their
 * spread; the end prints each part's duration and the total.
 */
public final class BenchmarkRun {

    private static final int REPEATS = Integer.getInteger("bench.repeats", 3);
    /**
     * Each measured run's own warm-up on loopback and against the database, not counted, as long as
     * an alternating window's (the uncounted passes before the repeats compile the code; this only
     * brings the connections' loop to its pace); at least a second at 256 connections, whose
     * requests take about a tenth of a second each. The network rows, which have no passes and run
     * again after each change of the delay, keep half a second.
     */
    private static final Duration WARM_UP = Duration.ofMillis(250);
    private static final Duration WARM_UP_AT_256 = Duration.ofSeconds(1);
    private static final Duration NETWORK_WARM_UP = Duration.ofMillis(500);
    private static final Duration MEASURED = Duration.ofSeconds(Integer.getInteger("bench.seconds", 3));
    /**
     * The uncounted pass of every scenario before the repeats, each this long; where the server is
     * metered, passes follow until its JIT compilers took at most {@link #QUIET_JIT} of its CPU in
     * one (at most {@link #MAX_PASSES}). Without them the first repeat timed a server still
     * compiling: on a 2-core VM its compiler threads took 40-66 % of its CPU in the first minute
     * after the deployments' own warm-up, and a bare request at one connection cost 3,438-4,385 µs
     * of server CPU in that repeat against 350-620 µs later (2026-11-29). An unmetered part (JDBC)
     * gets one pass.
     */
    private static final Duration PASS = Duration.ofSeconds(1);
    private static final double QUIET_JIT = 0.10;
    private static final int MAX_PASSES = 4;
    /**
     * Issue 30's ratio targets at 32 connections are measured a second time in alternating windows
     * (base, scenario, base, another, base, ...; {@link #alternate}): each window's figure ÷ the mean
     * of the base windows on either side of it, this many rounds (the median and the range). The
     * repeats compare windows up to half a minute apart, and on a shared VM one slow window moved a
     * repeat's ratio by half; here the windows compared are a second apart and one slow window moves
     * one ratio of six.
     */
    private static final int ALTERNATING_ROUNDS = Math.max(1, Integer.getInteger("bench.alternatingRounds", 6));
    private static final Duration ALTERNATING_WINDOW = Duration.ofSeconds(1);
    private static final Duration ALTERNATING_WARM_UP = Duration.ofMillis(250);
    /** The network rows: one run of each (one connection: latency is the figure, no target asks its spread). */
    private static final int NETWORK_REPEATS = Integer.getInteger("bench.networkRepeats", 1);
    private static final Duration NETWORK_MEASURED = Duration.ofSeconds(3);
    private static final List<Duration> ONE_WAY_DELAYS = List.of(Duration.ZERO, Duration.ofNanos(250_000), Duration.ofMillis(1));
    /**
     * Which parts to run: {@code -Dbench.only=throughput,coalesce,errors,roundtrips,memory,cluster,jdbc,network,fingerprint}
     * (the default; {@code throughput}, {@code coalesce} and {@code errors} name one part, the loopback
     * scenarios of both call paths), plus {@code mariadb} (the JDBC and network rows on MariaDB too) and
     * {@code encryption}, which are not in the default run.
     */
    private static final String ONLY = System.getProperty("bench.only",
            "throughput,coalesce,errors,roundtrips,memory,cluster,jdbc,network,fingerprint");
    /**
     * Where to write CPU profiles of the server ({@code -Dbench.profile=<directory>}): after the loopback
     * scenarios, each of the main ones runs alone for a while under async-profiler (one flame graph
     * and one collapsed-stacks file each); after the JDBC scenarios, flight recordings of first
     * executions at one connection on either JDBC side; nothing without it.
     */
    private static final String PROFILE = System.getProperty("bench.profile", "");
    /**
     * The coalesced path's {@code idempotency.redis.coalesce-linger-us} ({@code -Dbench.coalesce-linger-us=<µs>},
     * 0 to 10000); the library's default without it or when blank. Printed with the targets.
     */
    private static final String LINGER_US = lingerMicros(System.getProperty("bench.coalesce-linger-us", ""));
    /** Linux's {@code /proc/cpuinfo}, read once; empty elsewhere. */
    private static final List<String> CPU_INFO = cpuInfo();
    /**
     * Whether the processor hashes SHA-256 in hardware, which the JVM uses (several times faster than
     * without): x86's {@code sha_ni} or ARM's {@code sha2} in {@link #CPU_INFO}; null where that does not say.
     */
    private static final Boolean SHA_EXTENSIONS = shaExtensions();
    private static final String BODY = "{\"amount\":1999,\"currency\":\"EUR\",\"clientTimestamp\":\"2026-11-22T10:15:30Z\"}";
    /** The slow request a conflict meets holds its lease without a renewal (a script) while anything is measured. */
    private static final long HOLD_MILLIS = 3_600_000;

    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private final LoadGenerator load = new LoadGenerator(client);
    private final String run = UUID.randomUUID().toString().substring(0, 8);
    private final AtomicInteger keys = new AtomicInteger();
    private final Map<String, List<LoadGenerator.Result>> results = new LinkedHashMap<>();
    private final Map<String, String> table = new LinkedHashMap<>();
    private final Map<String, String> goals = new LinkedHashMap<>();
    /** Each part's duration: {all of it, its windows of fixed length}. */
    private final Map<String, Duration[]> parts = new LinkedHashMap<>();
    /**
     * The time spent so far in windows of fixed length (warm-ups and measured runs, which last as long
     * however busy the machine is); the rest of a part (server starts, keys prepared one request at a
     * time, memory's 10,000 records) takes longer on a busy machine.
     */
    private Duration windows = Duration.ZERO;
    /** The alternating windows' ratios ({@link #alternate}): "scenario ÷ base figure" to each round's. */
    private final Map<String, List<Double>> alternated = new LinkedHashMap<>();

    /** A window's figures that issue 30's ratio targets compare: per request (CPU) or per second. */
    private enum Figure {
        SERVER_CPU(r -> r.perRequest(Meters.Reading::serverCpuNanos)),
        REDIS_CPU(r -> r.perRequest(Meters.Reading::redisCpuNanos)),
        THROUGHPUT(LoadGenerator.Result::throughput);

        final ToDoubleFunction<LoadGenerator.Result> of;

        Figure(ToDoubleFunction<LoadGenerator.Result> of) {
            this.of = of;
        }
    }
    private final List<CompletableFuture<?>> holders = new ArrayList<>();

    private URI idemkey;
    private URI seeds;
    private URI uncached;
    private URI coalesced;

    private static String lingerMicros(String property) {
        if (property.isBlank()) {
            return String.valueOf(RedisStoreOptions.DEFAULT_COALESCE_LINGER.toNanos() / 1000);
        }
        long most = RedisStoreOptions.MAX_COALESCE_LINGER.toNanos() / 1000;
        String digits = property.strip();
        int micros = digits.matches("\\d{1,5}") ? Integer.parseInt(digits) : -1;
        if (micros < 0 || micros > most) {
            throw new IllegalArgumentException("-Dbench.coalesce-linger-us must be a whole number of microseconds from 0 to "
                    + most + ": " + property);
        }
        return String.valueOf(micros);
    }

    public static void main(String[] args) throws Exception {
        new BenchmarkRun().execute();
        System.exit(0);
    }

    private void execute() throws Exception {
        long started = System.nanoTime();
        String loadBefore = loadAverage();
        System.out.println("Idemkey benchmark: " + machine() + "; load average " + loadBefore);
        if (List.of("throughput", "coalesce", "errors", "roundtrips", "memory", "cluster").stream().anyMatch(ONLY::contains)) {
            part("loopback (both call paths, 1 / 8 / 32 / 256 connections; round trips, memory, cluster)", this::loopback);
        }
        if (ONLY.contains("jdbc")) {
            part("JDBC vs seed 003, 32 connections", this::jdbc);
        }
        if (ONLY.contains("network")) {
            part("network hop, one connection", this::network);
        }
        if (ONLY.contains("encryption")) {
            part("encryption at rest", this::encryption);
        }
        if (ONLY.contains("fingerprint")) {
            part("fingerprint", this::fingerprints);
        }
        print(Duration.ofNanos(System.nanoTime() - started), loadBefore);
    }

    /** One part of the run, timed: the end prints each part's duration beside the total. */
    private void part(String name, Part part) throws Exception {
        long started = System.nanoTime();
        Duration windowsBefore = windows;
        part.run();
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        Duration fixed = windows.minus(windowsBefore);
        parts.put(name, new Duration[] {took, fixed});
        System.out.printf("%s: took %s, of which %s in windows of fixed length (load average now %s)%n", name, minutes(took),
                minutes(fixed), loadAverage());
    }

    @FunctionalInterface
    private interface Part {
        void run() throws Exception;
    }

    /** Connections at which every loopback scenario of both call paths runs. */
    private static final List<Integer> PATH_CONNECTIONS = List.of(1, 8, 32, 256);

    /**
     * The parts on one Payara Micro and one private Redis on loopback, in one server start: the Redis
     * store's two call paths (each call on a pooled connection of its own, the old path and the
     * baseline; the calls ready together sent as one pipeline, {@code idempotency.redis.coalesce},
     * the new path; issue 30) at 1, 8, 32 and 256 connections, with a bare request at each count as
     * the base, replay caches off (a replay is read from Redis); at 32 connections also a replay
     * from this instance's cache, a conflict and check-then-lock (the base of Redis's CPU); a Redis
     * Cluster deployment on the same server; then round trips and memory. Every measured scenario
     * runs {@code REPEATS} times in a different order each time, with the per-request cost of server
     * and Redis.
     */
    private void loopback() throws Exception {
        boolean withCluster = ONLY.contains("cluster");
        try (RedisServer redis = RedisServer.start(); RedisCluster cluster = withCluster ? RedisCluster.start(3) : null) {
            Path directory = Files.createTempDirectory("idemkey-bench");
            Map<String, String> onRedis = Map.of("idempotency.redis.url", redis.url(), Deployments.SLOW_LEASE, "3600");
            Map<String, String> oldPath = merged(onRedis, Map.of("idempotency.redis.coalesce", "false"));
            List<Path> wars = new ArrayList<>(List.of(
                    war(directory, "bench", oldPath),
                    war(directory, "bench-seeds", Map.of("idempotency.redis.url", redis.url(), "idempotency.store", "custom")),
                    war(directory, "bench-uncached", merged(oldPath, Map.of("idempotency.replay-cache-bytes", "0"))),
                    war(directory, "bench-coalesced", merged(onRedis, Map.of("idempotency.replay-cache-bytes", "0",
                            "idempotency.redis.coalesce", "true", "idempotency.redis.coalesce-linger-us", LINGER_US)))));
            if (withCluster) {
                wars.add(war(directory, "bench-cluster", Map.of("idempotency.redis.mode", "cluster",
                        "idempotency.redis.nodes", cluster.nodesProperty(), "idempotency.replay-cache-bytes", "0")));
            }
            try (ServerProcess server = ServerProcess.startForTests(ServerProcess.Kind.PAYARA, wars)) {
                idemkey = server.uri("bench");
                seeds = server.uri("bench-seeds");
                uncached = server.uri("bench-uncached");
                coalesced = server.uri("bench-coalesced");
                URI onCluster = withCluster ? server.uri("bench-cluster") : null;
                warmUp(Duration.ofSeconds(2), withCluster ? new URI[] {idemkey, seeds, uncached, coalesced, onCluster}
                        : new URI[] {idemkey, seeds, uncached, coalesced});
                if (List.of("throughput", "coalesce", "errors").stream().anyMatch(ONLY::contains)) {
                    try (Meters meters = new Meters(server.pid(), redis.pid(), redis.client())) {
                        load.meter(meters);
                        throughputLatencyAndCost(onCluster);
                    } finally {
                        load.meter(null);
                    }
                    if (!PROFILE.isEmpty()) {
                        profile(server.pid(), Path.of(PROFILE));
                    }
                }
                if (ONLY.contains("roundtrips")) {
                    roundTrips(redis);
                }
                if (withCluster) {
                    clusterRoundTrips(cluster, onCluster);
                }
                if (ONLY.contains("memory")) {
                    memory(redis);
                }
                releaseHolders();
            }
        }
    }

    /**
     * Runs each deployment's guarded endpoint for {@code each} (JIT, pools), not measured, and the
     * first's bare one: the bare requests measured are the first deployment's (each deployment's
     * classes are its own, compiled apart).
     */
    private void warmUp(Duration each, URI... deployments) throws Exception {
        System.out.println("warming up (JIT, pools) ...");
        load.run(deployments[0].resolve("bench/bare"), BODY, 16, Duration.ZERO, each, null);
        windows = windows.plus(each);
        for (URI base : deployments) {
            load.run(base.resolve("bench/guarded"), BODY, 16, Duration.ZERO, each, this::uniqueKey);
            windows = windows.plus(each);
        }
    }

    /** One measured scenario: where, how many connections, which keys, which answers count as success. */
    private record Scenario(String name, URI uri, int connections, Supplier<String> keys, int expectedStatus) {

        static Scenario of(String name, URI uri, int connections, Supplier<String> keys) {
            return new Scenario(name, uri, connections, keys, 0);
        }

        static Scenario conflict(String name, URI uri, int connections, String key) {
            return new Scenario(name, uri, connections, () -> key, 409);
        }
    }

    /** The old call path's name of a request at a connection count, and the new path's. */
    private static String first(int connections) {
        return "first execution, " + connections;
    }

    private static String coalescedFirst(int connections) {
        return "first execution, coalesced, " + connections;
    }

    private static String fromRedis(int connections) {
        return "replay from Redis, " + connections;
    }

    private static String coalescedFromRedis(int connections) {
        return "replay from Redis, coalesced, " + connections;
    }

    private static String bare(int connections) {
        return "bare, " + connections;
    }

    private static final String CACHED_REPLAY = "replay from this instance's cache, 32";
    private static final String CONFLICT = "conflict, 32";
    private static final String CHECK_THEN_LOCK = "check-then-lock first execution, 32";
    private static final String CLUSTER_FIRST = "Redis Cluster: first execution, 32";
    private static final String CLUSTER_REPLAY = "Redis Cluster: replay from Redis, 32";
    /**
     * The floor, in the alternating windows only: the bare no-op with the round trips of a first
     * execution (two) or of a replay from Redis (one) and nothing of Idemkey's, each a GET on a
     * pooled Jedis connection set up as the store's ({@code PlainRedis}).
     */
    private static final String TWO_ROUND_TRIPS = "two Redis round trips alone (no Idemkey), 32";
    private static final String ONE_ROUND_TRIP = "one Redis round trip alone (no Idemkey), 32";

    /**
     * The loopback scenarios, each run {@code REPEATS} times in a different order (drift hits all of
     * them): throughput and latency, what each request cost the server and Redis, the two call
     * paths side by side, and issue 30's targets (point 3), each with the spread of its repeats.
     */
    private void throughputLatencyAndCost(URI onCluster) throws Exception {
        Supplier<String> oldReplays = completedKeys(uncached);
        Supplier<String> newReplays = completedKeys(coalesced);
        String inProgress = holdInProgress(uncached);
        List<Scenario> scenarios = new ArrayList<>();
        for (int connections : PATH_CONNECTIONS) {
            scenarios.add(Scenario.of(bare(connections), idemkey.resolve("bench/bare"), connections, null));
            scenarios.add(Scenario.of(first(connections), uncached.resolve("bench/guarded"), connections, this::uniqueKey));
            scenarios.add(Scenario.of(coalescedFirst(connections), coalesced.resolve("bench/guarded"), connections, this::uniqueKey));
            scenarios.add(Scenario.of(fromRedis(connections), uncached.resolve("bench/guarded"), connections, oldReplays));
            scenarios.add(Scenario.of(coalescedFromRedis(connections), coalesced.resolve("bench/guarded"), connections, newReplays));
            if (connections == 32) {
                scenarios.add(Scenario.of(CACHED_REPLAY, idemkey.resolve("bench/guarded"), 32, completedKeys(idemkey)));
                scenarios.add(Scenario.conflict(CONFLICT, uncached.resolve("guarded/slow?millis=" + HOLD_MILLIS), 32, inProgress));
                scenarios.add(Scenario.of(CHECK_THEN_LOCK, seeds.resolve("bench/guarded"), 32, this::uniqueKey));
            }
        }
        if (onCluster != null) {
            scenarios.add(Scenario.of(CLUSTER_FIRST, onCluster.resolve("bench/guarded"), 32, this::uniqueKey));
            scenarios.add(Scenario.of(CLUSTER_REPLAY, onCluster.resolve("bench/guarded"), 32, completedKeys(onCluster)));
        }
        runRepeatedly("loopback", scenarios, REPEATS, PASS, WARM_UP, MEASURED);
        Map<String, Scenario> named = scenarios.stream().collect(Collectors.toMap(Scenario::name, scenario -> scenario));
        List<Scenario> floor = List.of(Scenario.of(TWO_ROUND_TRIPS, idemkey.resolve("bench/two-round-trips"), 32, null),
                Scenario.of(ONE_ROUND_TRIP, idemkey.resolve("bench/one-round-trip"), 32, null));
        runRepeatedly("floor", floor, 0, PASS, WARM_UP, MEASURED); // in no repeat: its passes alone
        List<Scenario> againstBare = new ArrayList<>(List.of(named.get(coalescedFirst(32)), named.get(coalescedFromRedis(32)),
                named.get(first(32)), named.get(fromRedis(32))));
        againstBare.addAll(floor);
        alternate(named.get(bare(32)), againstBare);
        alternate(named.get(CHECK_THEN_LOCK), List.of(named.get(coalescedFirst(32)), named.get(first(32))));

        System.out.printf("%n| scenario (connections; old call path unless \"coalesced\") | throughput (req/s) | p50 (ms) | p99 (ms)"
                + " | ÷ bare |%n| --- | --- | --- | --- | --- |%n");
        for (Scenario scenario : scenarios) {
            String name = scenario.name();
            System.out.printf("| %s | %s | %s | %s | %s |%n", name, spread(name, LoadGenerator.Result::throughput, "%.0f"),
                    spread(name, LoadGenerator.Result::p50Millis, "%.3f"), spread(name, LoadGenerator.Result::p99Millis, "%.3f"),
                    ratioSpread(name, bare(scenario.connections()), LoadGenerator.Result::throughput));
        }
        ToDoubleFunction<LoadGenerator.Result> serverCpu = Figure.SERVER_CPU.of;
        System.out.printf("%n| per request (connections) | server CPU (µs) | ÷ bare | server allocations (KB) | Redis CPU (µs)"
                + " | Redis command time (µs) | Redis socket reads |%n| --- | --- | --- | --- | --- | --- | --- |%n");
        for (Scenario scenario : scenarios) {
            String name = scenario.name();
            if (name.startsWith("Redis Cluster")) {
                continue; // its Redis processes are not the one measured
            }
            System.out.printf("| %s | %s | %s | %s | %s | %s | %s |%n", name, spread(name, r -> micros(r, Meters.Reading::serverCpuNanos), "%.0f"),
                    ratioSpread(name, bare(scenario.connections()), serverCpu),
                    spread(name, r -> r.perRequest(Meters.Reading::serverAllocatedBytes) / 1024, "%.1f"),
                    spread(name, r -> micros(r, Meters.Reading::redisCpuNanos), "%.1f"),
                    spread(name, r -> r.perRequest(Meters.Reading::redisCommandMicros), "%.2f"),
                    spread(name, r -> r.perRequest(Meters.Reading::redisSocketReads), "%.2f"));
        }
        printPaths();
        printFloor();
        pathTargets();

        note("replay from this instance's cache, 32 connections: server CPU and throughput ÷ a bare request's",
                ratioSpread(CACHED_REPLAY, bare(32), serverCpu) + " / " + ratioSpread(CACHED_REPLAY, bare(32), LoadGenerator.Result::throughput));
        note("Idemkey ahead of check-then-lock: first executions per second, 32 connections, old / new path vs check-then-lock",
                String.format("%.0f / %.0f vs %.0f req/s; Redis command time %.2f / %.2f vs %.2f µs", throughput(first(32)),
                        throughput(coalescedFirst(32)), throughput(CHECK_THEN_LOCK), cost(first(32), Meters.Reading::redisCommandMicros),
                        cost(coalescedFirst(32), Meters.Reading::redisCommandMicros), cost(CHECK_THEN_LOCK, Meters.Reading::redisCommandMicros)));
        if (onCluster != null) {
            note("Redis Cluster (3 + 3 on this machine): first execution / replay from Redis, 32 connections",
                    String.format("%s / %s req/s, p99 %.3f / %.3f ms; one Redis, same run: %.0f / %.0f req/s",
                            spread(CLUSTER_FIRST, LoadGenerator.Result::throughput, "%.0f"),
                            spread(CLUSTER_REPLAY, LoadGenerator.Result::throughput, "%.0f"), p99(CLUSTER_FIRST), p99(CLUSTER_REPLAY),
                            throughput(first(32)), throughput(fromRedis(32))));
        }
    }

    /**
     * The floor beside the two call paths, at 32 connections in the alternating windows: the no-op
     * with the round trips alone, which no store that waits for its replies on the request's thread
     * can cost less than.
     */
    private void printFloor() {
        System.out.printf("%n| 32 connections, ÷ a bare request's, %d rounds of alternating windows: median (range) | server CPU"
                + " | throughput |%n| --- | --- | --- |%n", ALTERNATING_ROUNDS);
        for (String scenario : List.of(TWO_ROUND_TRIPS, first(32), coalescedFirst(32), ONE_ROUND_TRIP,
                fromRedis(32), coalescedFromRedis(32))) {
            System.out.printf("| %s | %s | %s |%n", scenario, alternatingSpread(scenario, bare(32), Figure.SERVER_CPU),
                    alternatingSpread(scenario, bare(32), Figure.THROUGHPUT));
        }
    }

    /** The two call paths side by side at each connection count: the old path is the baseline, in the same run. */
    private void printPaths() {
        System.out.printf("%n| connections | request | old path: req/s, p50 / p99 ms | new path (coalesced): req/s, p50 / p99 ms"
                + " | new ÷ old: throughput / p50 / p99 | ÷ bare throughput, old / new |%n| --- | --- | --- | --- | --- | --- |%n");
        for (int connections : PATH_CONNECTIONS) {
            for (String request : List.of("first execution", "replay from Redis")) {
                String old = request.equals("first execution") ? first(connections) : fromRedis(connections);
                String neu = request.equals("first execution") ? coalescedFirst(connections) : coalescedFromRedis(connections);
                System.out.printf("| %d | %s | %s, %.3f / %.3f | %s, %.3f / %.3f | %s / %s / %s | %s / %s |%n", connections, request,
                        spread(old, LoadGenerator.Result::throughput, "%.0f"), p50(old), p99(old),
                        spread(neu, LoadGenerator.Result::throughput, "%.0f"), p50(neu), p99(neu),
                        ratioSpread(neu, old, LoadGenerator.Result::throughput), ratioSpread(neu, old, LoadGenerator.Result::p50Millis),
                        ratioSpread(neu, old, LoadGenerator.Result::p99Millis),
                        ratioSpread(old, bare(connections), LoadGenerator.Result::throughput),
                        ratioSpread(neu, bare(connections), LoadGenerator.Result::throughput));
            }
        }
    }

    /**
     * Issue 30's targets (point 3), each on the new path with its spread and the old path's figure,
     * same run, beside it. The ratios at 32 connections are judged on the alternating windows
     * ({@link #alternate}: median and range of the rounds), the repeats' figure (every ratio taken
     * within a repeat, then the median and range of the three) printed after them.
     */
    private void pathTargets() {
        ToDoubleFunction<LoadGenerator.Result> redisCpu = Figure.REDIS_CPU.of;
        floorGoal("server CPU of a first execution ÷ a bare request's, 32 connections (≤ 1.25: ≤ 25 % added)",
                coalescedFirst(32), first(32), TWO_ROUND_TRIPS, "two round trips", Figure.SERVER_CPU,
                String.format(", %.0f vs %.0f µs", cost(coalescedFirst(32), Meters.Reading::serverCpuNanos) / 1000,
                        cost(bare(32), Meters.Reading::serverCpuNanos) / 1000), 1.25);
        floorGoal("server CPU of a replay from Redis ÷ a bare request's, 32 connections (≤ 1.05)",
                coalescedFromRedis(32), fromRedis(32), ONE_ROUND_TRIP, "one round trip", Figure.SERVER_CPU, "", 1.05);
        goal("Redis process CPU per first execution ÷ check-then-lock's, 32 connections (≤ 0.5)",
                String.format("%s (repeats: %s, %.1f vs %.1f µs); old path %s (repeats: %s, %.1f µs)",
                        alternatingSpread(coalescedFirst(32), CHECK_THEN_LOCK, Figure.REDIS_CPU), ratioSpread(coalescedFirst(32), CHECK_THEN_LOCK, redisCpu),
                        cost(coalescedFirst(32), Meters.Reading::redisCpuNanos) / 1000, cost(CHECK_THEN_LOCK, Meters.Reading::redisCpuNanos) / 1000,
                        alternatingSpread(first(32), CHECK_THEN_LOCK, Figure.REDIS_CPU), ratioSpread(first(32), CHECK_THEN_LOCK, redisCpu),
                        cost(first(32), Meters.Reading::redisCpuNanos) / 1000),
                alternatingRatio(coalescedFirst(32), CHECK_THEN_LOCK, Figure.REDIS_CPU) <= 0.5);
        floorGoal("first execution ÷ bare throughput, 32 connections (≥ 0.9)",
                coalescedFirst(32), first(32), TWO_ROUND_TRIPS, "two round trips", Figure.THROUGHPUT,
                String.format(", %.0f vs %.0f req/s", throughput(coalescedFirst(32)), throughput(bare(32))), 0.9);
        floorGoal("replay from Redis ÷ bare throughput, 32 connections (≥ 0.95)",
                coalescedFromRedis(32), fromRedis(32), ONE_ROUND_TRIP, "one round trip", Figure.THROUGHPUT, "", 0.95);
        for (String request : List.of("first execution", "replay from Redis")) {
            String old = request.equals("first execution") ? first(1) : fromRedis(1);
            String neu = request.equals("first execution") ? coalescedFirst(1) : coalescedFromRedis(1);
            double p50 = pairedRatio(neu, old, LoadGenerator.Result::p50Millis);
            double p99 = pairedRatio(neu, old, LoadGenerator.Result::p99Millis);
            goal(request + " at 1 connection, new ÷ old path p50 / p99 (≤ 1: no worse than the old path, same run)",
                    String.format("%s / %s (%.3f / %.3f vs %.3f / %.3f ms)", ratioSpread(neu, old, LoadGenerator.Result::p50Millis),
                            ratioSpread(neu, old, LoadGenerator.Result::p99Millis), p50(neu), p99(neu), p50(old), p99(old)),
                    p50 <= 1 && p99 <= 1);
        }
        long[] newErrors = errors(coalescedFirst(256), coalescedFromRedis(256));
        long[] oldErrors = errors(first(256), fromRedis(256));
        goal("errors at 256 connections, first executions and replays from Redis (0)",
                String.format("%d of %d requests (per repeat: %s); old path %d of %d", newErrors[0], newErrors[1],
                        perRepeat(coalescedFirst(256), coalescedFromRedis(256)), oldErrors[0], oldErrors[1]),
                newErrors[0] == 0);
    }

    /** {errors, requests} over every repeat of the scenarios. */
    private long[] errors(String... scenarios) {
        long[] counts = new long[2];
        for (String scenario : scenarios) {
            for (LoadGenerator.Result result : results.get(scenario)) {
                counts[0] += result.errors();
                counts[1] += result.requests() + result.errors();
            }
        }
        return counts;
    }

    /** Errors of each repeat of the scenarios together: {@code 0, 0, 0}. */
    private String perRepeat(String... scenarios) {
        List<String> counts = new ArrayList<>();
        for (int repeat = 0; repeat < results.get(scenarios[0]).size(); repeat++) {
            long errors = 0;
            for (String scenario : scenarios) {
                errors += results.get(scenario).get(repeat).errors();
            }
            counts.add(Long.toString(errors));
        }
        return String.join(", ", counts);
    }

    /**
     * CPU profiles of the server, one per scenario, each run alone at 32 connections for 20 s under
     * async-profiler (its agent loaded into the server's JVM): where the time of a first execution,
     * a replay and a bare request goes, to compare.
     */
    private void profile(long serverPid, Path directory) throws Exception {
        Files.createDirectories(directory);
        Path agent = AsyncProfiler.extract(directory);
        Supplier<String> replayed = completedKeys(idemkey);
        List<Scenario> scenarios = List.of(
                Scenario.of("bare", idemkey.resolve("bench/bare"), 32, null),
                Scenario.of("idempotent", idemkey.resolve("bench/guarded"), 32, this::uniqueKey),
                Scenario.of("replay", idemkey.resolve("bench/guarded"), 32, replayed),
                Scenario.of("replay-from-redis", uncached.resolve("bench/guarded"), 32, completedKeys(uncached)));
        for (Scenario scenario : scenarios) {
            load.run(scenario.uri(), BODY, 32, Duration.ZERO, Duration.ofSeconds(3), scenario.keys());
            try (AsyncProfiler profiler = AsyncProfiler.start(agent, serverPid, directory.resolve(scenario.name()))) {
                load.run(scenario.uri(), BODY, 32, Duration.ZERO, Duration.ofSeconds(20), scenario.keys());
            }
            System.out.println("profile: " + directory.resolve(scenario.name() + ".html"));
        }
    }

    /**
     * Runs the scenarios {@code repeats} times, in a different order each time, after an uncounted
     * pass of {@code pass} each (none: zero), and more such passes while the server, where it is
     * metered, is still compiling ({@link #PASS}).
     */
    private void runRepeatedly(String label, List<Scenario> scenarios, int repeats, Duration pass, Duration warmUp,
                               Duration measured) {
        for (int passes = 1; !pass.isZero(); passes++) {
            System.out.println(label + ": a pass not counted ...");
            for (Scenario scenario : scenarios) {
                measure(scenario, Duration.ZERO, pass);
            }
            double compiling = compilingShare(scenarios);
            scenarios.forEach(scenario -> results.remove(scenario.name()));
            if (Double.isNaN(compiling) || compiling <= QUIET_JIT) {
                break;
            }
            if (passes == MAX_PASSES) {
                System.out.printf("%s: the server's JIT compilers still took %.0f %% of its CPU after %d passes; measuring anyway%n",
                        label, compiling * 100, passes);
                break;
            }
        }
        for (int repeat = 1; repeat <= repeats; repeat++) {
            System.out.printf("%s: run %d of %d ...%n", label, repeat, repeats);
            for (int i = 0; i < scenarios.size(); i++) {
                measure(scenarios.get((i + repeat - 1) % scenarios.size()), warmUp, measured);
            }
        }
    }

    /**
     * {@link #ALTERNATING_ROUNDS} rounds of {@code base} and each of {@code others} in turn, a base
     * window between any two others (and first and last), each window {@link #ALTERNATING_WINDOW}
     * after {@link #ALTERNATING_WARM_UP} of its own: per other window, its server CPU and Redis CPU
     * per request and its throughput, each ÷ the mean of the two base windows around it.
     */
    private void alternate(Scenario base, List<Scenario> others) {
        System.out.printf("alternating windows: %s, then each of %s, %d rounds ...%n", base.name(),
                others.stream().map(Scenario::name).toList(), ALTERNATING_ROUNDS);
        LoadGenerator.Result before = window(base);
        for (int round = 0; round < ALTERNATING_ROUNDS; round++) {
            for (Scenario other : others) {
                LoadGenerator.Result measured = window(other);
                LoadGenerator.Result after = window(base);
                for (Figure figure : Figure.values()) {
                    double around = (figure.of.applyAsDouble(before) + figure.of.applyAsDouble(after)) / 2;
                    alternated.computeIfAbsent(other.name() + " ÷ " + base.name() + " " + figure, k -> new ArrayList<>())
                            .add(figure.of.applyAsDouble(measured) / around);
                }
                before = after;
            }
        }
    }

    private LoadGenerator.Result window(Scenario scenario) {
        windows = windows.plus(ALTERNATING_WARM_UP).plus(ALTERNATING_WINDOW);
        try {
            LoadGenerator.Result result = load.run(scenario.uri(), BODY, scenario.connections(), ALTERNATING_WARM_UP,
                    ALTERNATING_WINDOW, scenario.keys());
            if (result.errors() > 0) { // counted as in the repeats (the errors target is the repeats'), and shown
                System.out.printf("  %s: %d errors in an alternating window%n", scenario.name(), result.errors());
            }
            return result;
        } catch (Exception e) {
            throw new IllegalStateException(scenario.name(), e);
        }
    }

    /**
     * The alternating windows' ratio of a figure of {@code scenario} to {@code base}'s, the median of
     * the rounds ({@link #alternatingSpread}: with their range).
     */
    private double alternatingRatio(String scenario, String base, Figure figure) {
        return median(alternatingRatios(scenario, base, figure));
    }

    private List<Double> alternatingRatios(String scenario, String base, Figure figure) {
        return alternated.getOrDefault(scenario + " ÷ " + base + " " + figure, List.of()).stream().sorted().toList();
    }

    private String alternatingSpread(String scenario, String base, Figure figure) {
        List<Double> ratios = alternatingRatios(scenario, base, figure);
        return String.format("%.2f (%.2f–%.2f)", median(ratios), ratios.get(0), ratios.get(ratios.size() - 1));
    }

    /** The share of the server's CPU its JIT compilers took in the scenarios' last runs (NaN: not metered). */
    private double compilingShare(List<Scenario> scenarios) {
        long compiling = 0;
        long all = 0;
        for (Scenario scenario : scenarios) {
            List<LoadGenerator.Result> runs = results.get(scenario.name());
            Meters.Reading cost = runs == null ? null : runs.get(runs.size() - 1).cost();
            if (cost != null) {
                compiling += cost.serverCompilerCpuNanos();
                all += cost.serverCpuNanos();
            }
        }
        return all == 0 ? Double.NaN : (double) compiling / all;
    }

    private void measure(Scenario scenario, Duration warmUp, Duration measured) {
        if (scenario.connections() >= 256 && !warmUp.isZero() && warmUp.compareTo(WARM_UP_AT_256) < 0) {
            warmUp = WARM_UP_AT_256;
        }
        windows = windows.plus(warmUp).plus(measured);
        LoadGenerator.Result result;
        try {
            result = scenario.expectedStatus() == 0
                    ? load.run(scenario.uri(), BODY, scenario.connections(), warmUp, measured, scenario.keys())
                    : load.run(scenario.uri(), BODY, scenario.connections(), warmUp, measured, scenario.keys(), Long.MAX_VALUE,
                            status -> status == scenario.expectedStatus());
        } catch (Exception e) {
            throw new IllegalStateException(scenario.name(), e);
        }
        System.out.printf("  %-44s %7.0f req/s  p50 %.3f ms  p99 %.3f ms  errors %d%s%n", scenario.name(), result.throughput(),
                result.p50Millis(), result.p99Millis(), result.errors(), result.cost() == null ? ""
                        : String.format("  server %.0f µs (JIT %.0f %%), %.1f KB; Redis %.1f µs", micros(result, Meters.Reading::serverCpuNanos),
                        100.0 * result.cost().serverCompilerCpuNanos() / Math.max(1, result.cost().serverCpuNanos()),
                        result.perRequest(Meters.Reading::serverAllocatedBytes) / 1024, micros(result, Meters.Reading::redisCpuNanos)));
        results.computeIfAbsent(scenario.name(), s -> new ArrayList<>()).add(result);
    }

    /**
     * 1,000 keys completed on this deployment (sent on 8 connections at once, each key once), handed
     * out in turn, round and round.
     */
    private Supplier<String> completedKeys(URI deployment) throws Exception {
        List<String> completed = Collections.synchronizedList(new ArrayList<>());
        LoadGenerator.Result sent = load.run(deployment.resolve("bench/guarded"), BODY, 8, Duration.ZERO, Duration.ofMinutes(5), () -> {
            String key = uniqueKey();
            completed.add(key);
            return key;
        }, 1000);
        if (sent.errors() > 0) {
            throw new IllegalStateException(sent.errors() + " of 1,000 keys not completed on " + deployment);
        }
        AtomicInteger next = new AtomicInteger();
        return () -> completed.get(Math.floorMod(next.getAndIncrement(), completed.size()));
    }

    /** A key held in progress on this deployment, by a request that runs until its server stops. */
    private String holdInProgress(URI deployment) throws InterruptedException {
        String key = uniqueKey();
        holders.add(client.sendAsync(HttpRequest.newBuilder(deployment.resolve("guarded/slow?millis=" + HOLD_MILLIS))
                .header("Content-Type", "application/json").header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.ofString(BODY)).build(), HttpResponse.BodyHandlers.discarding()));
        Thread.sleep(500);
        return key;
    }

    private void releaseHolders() {
        holders.forEach(holder -> holder.cancel(true));
        holders.clear();
    }

    private double throughput(String scenario) {
        return median(results.get(scenario).stream().map(LoadGenerator.Result::throughput).toList());
    }

    private double p50(String scenario) {
        return median(results.get(scenario).stream().map(LoadGenerator.Result::p50Millis).toList());
    }

    private double p99(String scenario) {
        return median(results.get(scenario).stream().map(LoadGenerator.Result::p99Millis).toList());
    }

    /** The median cost per request of a scenario: nanoseconds, bytes or microseconds, as the figure is. */
    private double cost(String scenario, ToLongFunction<Meters.Reading> figure) {
        return median(results.get(scenario).stream().map(r -> r.perRequest(figure)).toList());
    }

    private static double micros(LoadGenerator.Result result, ToLongFunction<Meters.Reading> nanos) {
        return result.perRequest(nanos) / 1000;
    }

    /**
     * The median over the repeats of {@code scenario}'s figure ÷ {@code base}'s in the same repeat:
     * steadier than a ratio of medians on a machine whose speed drifts between repeats.
     */
    private double pairedRatio(String scenario, String base, ToDoubleFunction<LoadGenerator.Result> figure) {
        return median(pairedRatios(scenario, base, figure));
    }

    private List<Double> pairedRatios(String scenario, String base, ToDoubleFunction<LoadGenerator.Result> figure) {
        List<LoadGenerator.Result> of = results.get(scenario);
        List<LoadGenerator.Result> baseline = results.get(base);
        List<Double> ratios = new ArrayList<>();
        for (int i = 0; i < Math.min(of.size(), baseline.size()); i++) {
            ratios.add(figure.applyAsDouble(of.get(i)) / figure.applyAsDouble(baseline.get(i)));
        }
        return ratios;
    }

    /** {@link #pairedRatio} with the range of the repeats' ratios: {@code 0.81 (0.78–0.86)}. */
    private String ratioSpread(String scenario, String base, ToDoubleFunction<LoadGenerator.Result> figure) {
        List<Double> ratios = pairedRatios(scenario, base, figure).stream().sorted().toList();
        String median = String.format("%.2f", median(ratios));
        return ratios.size() < 2 ? median
                : median + " (" + String.format("%.2f", ratios.get(0)) + "–" + String.format("%.2f", ratios.get(ratios.size() - 1)) + ")";
    }

    /** The median of a figure over the repeats, with their range: {@code 2893 (2810–2950)}. */
    private String spread(String scenario, ToDoubleFunction<LoadGenerator.Result> figure, String format) {
        List<Double> values = results.get(scenario).stream().map(figure::applyAsDouble).sorted().toList();
        String median = String.format(format, median(values));
        return values.size() < 2 ? median
                : median + " (" + String.format(format, values.get(0)) + "–" + String.format(format, values.get(values.size() - 1)) + ")";
    }

    private void target(String figure, String measured, boolean met) {
        table.put(figure, measured + " | " + (met ? "yes" : "no"));
    }

    private void note(String figure, String measured) {
        table.put(figure, measured + " | –");
    }

    /** An issue 30 target (point 3): its own table, printed last. */
    private void goal(String figure, String measured, boolean met) {
        goals.put(figure, measured + " | " + (met ? "met" : "not met"));
    }

    /**
     * A target on a ratio to a bare request's at 32 connections (server CPU: at most {@code target};
     * throughput: at least), judged on the new path's alternating windows ({@code scenario}) and
     * said beside its repeats' figure (then {@code detail}), the old path's ({@code oldPath}) and its
     * floor's, the round trips alone ({@code floor}, named {@code floorName}): where even they miss
     * the target, no change to Idemkey's code or call path meets it on this machine while the
     * request's thread waits for its replies.
     */
    private void floorGoal(String figure, String scenario, String oldPath, String floor, String floorName, Figure ratio,
                           String detail, double target) {
        if (ratio == Figure.REDIS_CPU) {
            throw new IllegalArgumentException("Redis's CPU is judged against check-then-lock's, not a bare request's");
        }
        String measured = String.format("%s (repeats: %s%s); old path %s (repeats: %s); %s alone %s",
                alternatingSpread(scenario, bare(32), ratio), ratioSpread(scenario, bare(32), ratio.of), detail,
                alternatingSpread(oldPath, bare(32), ratio), ratioSpread(oldPath, bare(32), ratio.of), floorName,
                alternatingSpread(floor, bare(32), ratio));
        boolean atMost = ratio == Figure.SERVER_CPU; // throughput: at least
        double value = alternatingRatio(scenario, bare(32), ratio);
        double floorValue = alternatingRatio(floor, bare(32), ratio);
        boolean met = atMost ? value <= target : value >= target;
        boolean floorMet = atMost ? floorValue <= target : floorValue >= target;
        goals.put(figure, measured + " | " + (met ? "met" : floorMet ? "not met"
                : String.format("not met; the round trips alone miss it too (%.2f)", floorValue)));
    }

    /**
     * Logical round trips (client commands Redis received: MONITOR, not those the Lua scripts run
     * inside; an acquire's {@code SET} and {@code PTTL}, written together, one), on both call paths.
     */
    private void roundTrips(RedisServer redis) throws Exception {
        try (RedisMonitor monitor = RedisMonitor.start(redis)) {
            int[] old = roundTrips(monitor, uncached);
            int[] neu = roundTrips(monitor, coalesced);
            String cachedKey = uniqueKey();
            post(idemkey.resolve("bench/guarded"), cachedKey);
            monitor.takeClientCommands();
            post(idemkey.resolve("bench/guarded"), cachedKey);
            int cachedReplay = logicalRoundTrips(monitor);
            String seedKey = uniqueKey();
            monitor.takeClientCommands();
            post(seeds.resolve("bench/guarded"), seedKey);
            int seedFirst = monitor.takeClientCommands().size();
            goal("logical round trips per request: first / replay / conflict (2 / 1 / 1)",
                    String.format("%d / %d / %d; old path %d / %d / %d (a replay this instance has seen: %d;"
                            + " check-then-lock's first execution: %d)", neu[0], neu[1], neu[2], old[0], old[1], old[2], cachedReplay, seedFirst),
                    neu[0] == 2 && neu[1] == 1 && neu[2] == 1 && old[0] == 2 && old[1] == 1 && old[2] == 1);
        }
    }

    /** {first execution, replay, conflict}: client commands each sent to Redis through this deployment. */
    private int[] roundTrips(RedisMonitor monitor, URI deployment) throws Exception {
        monitor.takeClientCommands();
        String key = uniqueKey();
        post(deployment.resolve("bench/guarded"), key);
        int first = logicalRoundTrips(monitor);
        post(deployment.resolve("bench/guarded"), key);
        int replay = logicalRoundTrips(monitor);
        String slow = uniqueKey();
        CompletableFuture<Void> running = CompletableFuture.runAsync(() -> post(deployment.resolve("guarded/slow?millis=500"), slow));
        Thread.sleep(200);
        monitor.takeClientCommands();
        post(deployment.resolve("guarded/slow?millis=500"), slow);
        int conflict = logicalRoundTrips(monitor);
        running.get();
        return new int[] {first, replay, conflict};
    }

    /**
     * Idemkey's client commands since the last look, an acquire's {@code PTTL} (sent with its {@code SET}) not counted apart.
     * MONITOR does not show which commands shared a round trip, so a {@code PTTL} sent alone would not be counted either;
     * {@code RedisIdempotencyStoreTest}'s round-trip tests count socket reads, which would.
     */
    private static int logicalRoundTrips(RedisMonitor monitor) {
        return (int) monitor.takeClientCommands().stream().filter(command -> !command.equals("pttl")).count();
    }

    /**
     * The same scenarios at one connection with Redis and PostgreSQL (and with {@code mariadb} in
     * {@code bench.only}, MariaDB) one network hop away (a network namespace of the benchmark's own,
     * {@link DelayedLink}), at 0, 0.25 and 1 ms one way: what a round trip costs each pattern. Seed
     * 003's SQL pattern beside Idemkey's JDBC store (MariaDB's through a second Payara Micro, whose
     * DataSource leads there). No row for a replay from the instance's cache (no round trip: the
     * bare row) nor for a conflict (one round trip, as a replay from Redis: that row).
     */
    private void network() throws Exception {
        Path directory = Files.createTempDirectory("idemkey-bench-network");
        boolean withMariaDb = ONLY.contains("mariadb");
        try (DelayedLink link = DelayedLink.open(directory)) {
            System.out.println("network: " + link.description());
            if (!link.available()) {
                note("network rows (0 / 0.25 / 1 ms one way)", "not measured here: " + link.description());
                return;
            }
            Host far = link.far();
            try (RedisServer redis = RedisServer.startOn(far); PostgresServer postgres = PostgresServer.startDurableOn(far);
                 MariaDbServer mariadb = withMariaDb ? MariaDbServer.startDurableOn(far) : null) {
                Map<String, String> onRedis = Map.of("idempotency.redis.url", redis.url(), Deployments.SLOW_LEASE, "3600");
                Map<String, String> onJdbc = Map.of("idempotency.store", "jdbc", "idempotency.jdbc.datasource", "jdbc/idemkey",
                        "idempotency.replay-cache-bytes", "0");
                List<Path> wars = List.of(war(directory, "net-uncached", merged(onRedis, Map.of("idempotency.replay-cache-bytes", "0"))),
                        war(directory, "net-seeds", merged(onRedis, Map.of("idempotency.store", "custom"))),
                        war(directory, "net-jdbc", onJdbc), seed003War(directory, "net-seed003"));
                List<Path> onMariaDb = List.of(war(directory, "net-jdbc-mariadb", onJdbc), seed003War(directory, "net-seed003-mariadb"));
                try (ServerProcess server = ServerProcess.startForTestsWithPostgres(ServerProcess.Kind.PAYARA, wars,
                        ServerProcess.freePort(), postgres);
                     ServerProcess second = withMariaDb ? ServerProcess.startForTestsWithDatabase(ServerProcess.Kind.PAYARA, onMariaDb,
                             ServerProcess.freePort(), mariadb) : null) {
                    URI netUncached = server.uri("net-uncached");
                    URI netSeeds = server.uri("net-seeds");
                    URI netJdbc = server.uri("net-jdbc");
                    URI netSeed003 = server.uri("net-seed003");
                    List<URI> deployments = new ArrayList<>(List.of(netUncached, netSeeds, netJdbc, netSeed003));
                    if (second != null) {
                        deployments.add(second.uri("net-jdbc-mariadb"));
                        deployments.add(second.uri("net-seed003-mariadb"));
                    }
                    warmUp(Duration.ofSeconds(2), deployments.toArray(URI[]::new));
                    Map<String, Function<String, Scenario>> rows = new LinkedHashMap<>();
                    rows.put("bare", name -> Scenario.of(name, netUncached.resolve("bench/bare"), 1, null));
                    rows.put("Idemkey first execution", name -> Scenario.of(name, netUncached.resolve("bench/guarded"), 1, this::uniqueKey));
                    Supplier<String> fromRedis = completedKeys(netUncached);
                    rows.put("Idemkey replay from Redis", name -> Scenario.of(name, netUncached.resolve("bench/guarded"), 1, fromRedis));
                    rows.put("check-then-lock first execution", name -> Scenario.of(name, netSeeds.resolve("bench/guarded"), 1, this::uniqueKey));
                    List<String> databases = second == null ? List.of("") : List.of("", ", MariaDB");
                    for (String on : databases) {
                        URI jdbc = on.isEmpty() ? netJdbc : second.uri("net-jdbc-mariadb");
                        URI seed = on.isEmpty() ? netSeed003 : second.uri("net-seed003-mariadb");
                        Supplier<String> fromJdbc = completedKeys(jdbc);
                        Supplier<String> fromSeed003 = completedKeys(seed);
                        rows.put("Idemkey JDBC first execution" + on, name -> Scenario.of(name, jdbc.resolve("bench/guarded"), 1, this::uniqueKey));
                        rows.put("Idemkey JDBC replay" + on, name -> Scenario.of(name, jdbc.resolve("bench/guarded"), 1, fromJdbc));
                        rows.put("seed 003 first execution" + on, name -> Scenario.of(name, seed.resolve("bench/guarded"), 1, this::uniqueKey));
                        rows.put("seed 003 replay" + on, name -> Scenario.of(name, seed.resolve("bench/guarded"), 1, fromSeed003));
                    }
                    Map<Duration, Double> roundTrips = new LinkedHashMap<>();
                    for (Duration delay : ONE_WAY_DELAYS) {
                        link.delay(delay);
                        roundTrips.put(delay, redisRoundTripMillis(redis));
                        String at = " @" + label(delay);
                        List<Scenario> scenarios = rows.entrySet().stream().map(row -> row.getValue().apply(row.getKey() + at)).toList();
                        runRepeatedly("network " + label(delay) + " one way", scenarios, NETWORK_REPEATS, Duration.ZERO, NETWORK_WARM_UP,
                                NETWORK_MEASURED);
                    }
                    releaseHolders();
                    printNetworkTable(link, List.copyOf(rows.keySet()), roundTrips);
                }
            }
        }
    }

    /** A deployment whose store is seed 003's SQL pattern ({@link Seed003Store}) on {@code jdbc/idemkey}, replay cache off. */
    private static Path seed003War(Path directory, String name) {
        Path file = directory.resolve(name + ".war");
        Deployments.guardedApp(name, Map.of("idempotency.store", "custom", "bench.seed003.datasource", "jdbc/idemkey",
                        "idempotency.replay-cache-bytes", "0"))
                .deleteClass(CheckThenLockStore.class).addClass(Seed003Store.class)
                .as(ZipExporter.class).exportTo(file.toFile(), true);
        return file;
    }

    private void printNetworkTable(DelayedLink link, List<String> names, Map<Duration, Double> roundTrips) {
        StringBuilder header = new StringBuilder("| one connection, p50 (p99) ms |");
        StringBuilder rule = new StringBuilder("| --- |");
        for (Map.Entry<Duration, Double> delay : roundTrips.entrySet()) {
            header.append(String.format(" %s one way (Redis round trip %.3f ms) |", label(delay.getKey()), delay.getValue()));
            rule.append(" --- |");
        }
        System.out.printf("%nBehind %s:%n%s%n%s%n", link.description(), header, rule);
        for (String name : names) {
            StringBuilder row = new StringBuilder("| " + name + " |");
            for (Duration delay : roundTrips.keySet()) {
                String scenario = name + " @" + label(delay);
                row.append(String.format(" %.3f (%.3f) |", p50(scenario), p99(scenario)));
            }
            System.out.println(row);
        }
        Duration half = ONE_WAY_DELAYS.get(1);
        String at = " @" + label(half);
        double roundTrip = roundTrips.get(half);
        double bare = p50("bare" + at);
        double first = p50("Idemkey first execution" + at);
        double seed = p50("check-then-lock first execution" + at);
        target(String.format("first execution p50 with a %.3f ms round trip to Redis (≤ bare + 2 round trips + 0.2 ms)", roundTrip),
                String.format("%.3f ms (bare %.3f ms, limit %.3f ms)", first, bare, bare + 2 * roundTrip + 0.2),
                first <= bare + 2 * roundTrip + 0.2);
        target("check-then-lock's first execution p50, same round trip (≥ 1 round trip slower than Idemkey's)",
                String.format("%.3f ms, %.3f ms slower", seed, seed - first), seed - first >= roundTrip);
        for (String request : List.of("first execution", "replay")) {
            StringBuilder cells = new StringBuilder();
            boolean ahead = true;
            for (Duration delay : roundTrips.keySet()) {
                String idemkeyJdbc = "Idemkey JDBC " + request + " @" + label(delay);
                String seed003 = "seed 003 " + request + " @" + label(delay);
                cells.append(cells.length() == 0 ? "" : "; ").append(String.format("%s: %.3f vs %.3f ms", label(delay), p50(idemkeyJdbc),
                        p50(seed003)));
                ahead &= p50(idemkeyJdbc) <= p50(seed003);
            }
            target("JDBC " + request + " p50 at one connection, Idemkey vs seed 003, 0 / 0.25 / 1 ms one way (Idemkey ahead)",
                    cells.toString(), ahead);
        }
    }

    /**
     * The median time of a Redis command from here, over the link (the server's path to Redis), one
     * every millisecond: as a server sends them, not back to back (which keeps every process on the
     * way awake and makes the link look faster than it is).
     */
    private static double redisRoundTripMillis(RedisServer redis) throws InterruptedException {
        try (Jedis jedis = redis.client()) {
            List<Double> times = new ArrayList<>();
            for (int i = 0; i < 400; i++) {
                Thread.sleep(1);
                long start = System.nanoTime();
                jedis.get("round-trip");
                times.add((System.nanoTime() - start) / 1e6);
            }
            return median(times.subList(100, 400));
        }
    }

    private static String label(Duration oneWay) {
        return oneWay.isZero() ? "0 ms" : oneWay.toNanos() % 1_000_000 == 0 ? oneWay.toMillis() + " ms"
                : String.format("%.2f ms", oneWay.toNanos() / 1e6);
    }

    /**
     * Round trips on a Redis Cluster of 3 masters + 3 replicas on the same loopback (its throughput
     * rows are loopback scenarios), counted on every master as {@link #logicalRoundTrips} counts them.
     */
    private void clusterRoundTrips(RedisCluster cluster, URI onCluster) {
        List<RedisMonitor> monitors = cluster.masters().stream().map(RedisMonitor::start).toList();
        try {
            String key = uniqueKey();
            post(onCluster.resolve("bench/guarded"), key);
            int first = monitors.stream().mapToInt(BenchmarkRun::logicalRoundTrips).sum();
            post(onCluster.resolve("bench/guarded"), key);
            int replay = monitors.stream().mapToInt(BenchmarkRun::logicalRoundTrips).sum();
            target("Redis Cluster round trips, all masters: first / replay (2 / 1)", first + " / " + replay,
                    first == 2 && replay == 1);
        } finally {
            monitors.forEach(RedisMonitor::close);
        }
    }

    /**
     * The JDBC store against seed 003's pattern (INSERT ... ON CONFLICT DO NOTHING, or INSERT IGNORE
     * on MariaDB, then SELECT, then UPDATE) on a private PostgreSQL (and with {@code mariadb} in
     * {@code bench.only}, a private MariaDB) that flush
     * their commits to disk, as production does, each through Payara Micro's JDBC pool, on loopback:
     * throughput of first executions (a no-op, and a {@code @Transactional} method that writes one
     * row: Idemkey records in that transaction, the seed around it), replays and conflicts at 32
     * connections, and statements per request (pg_stat_statements; MariaDB's performance schema).
     * Replays are read from the table (in-process caches off on both), as the seed reads them;
     * Idemkey's cached figure is shown apart.
     */
    private void jdbc() throws Exception {
        System.out.println("JDBC: a private PostgreSQL, Payara Micro with a JDBC pool ...");
        try (PostgresServer postgres = PostgresServer.startDurable()) {
            jdbc(postgres, "");
        }
        if (ONLY.contains("mariadb")) {
            System.out.println("JDBC: a private MariaDB, Payara Micro with a JDBC pool ...");
            try (MariaDbServer mariadb = MariaDbServer.startDurableOn(Host.LOOPBACK)) {
                jdbc(mariadb, " on MariaDB");
            }
        }
    }

    private void jdbc(TestDatabase database, String on) throws Exception {
        DatabaseStatements.enable(database);
        database.execute(database.name().equals("MariaDB")
                ? "CREATE TABLE bench_effects (id BIGINT AUTO_INCREMENT PRIMARY KEY, body TEXT NOT NULL)"
                : "CREATE TABLE bench_effects (id BIGSERIAL PRIMARY KEY, body TEXT NOT NULL)");
        Path directory = Files.createTempDirectory("idemkey-bench-jdbc");
        Map<String, String> jdbc = Map.of("idempotency.store", "jdbc", "idempotency.jdbc.datasource", "jdbc/idemkey",
                "idempotency.replay-cache-bytes", "0", Deployments.SLOW_LEASE, "3600");
        Path seed003 = directory.resolve("bench-seed003.war");
        Deployments.guardedApp("bench-seed003", Map.of("idempotency.store", "custom",
                        "bench.seed003.datasource", "jdbc/idemkey", "idempotency.replay-cache-bytes", "0", Deployments.SLOW_LEASE, "3600"))
                .deleteClass(CheckThenLockStore.class).addClass(Seed003Store.class)
                .as(ZipExporter.class).exportTo(seed003.toFile(), true);
        List<Path> wars = List.of(war(directory, "bench-jdbc", jdbc), seed003,
                war(directory, "bench-jdbc-cached", Map.of("idempotency.store", "jdbc", "idempotency.jdbc.datasource", "jdbc/idemkey")));
        try (ServerProcess server = ServerProcess.startForTestsWithDatabase(ServerProcess.Kind.PAYARA, wars,
                ServerProcess.freePort(), database)) {
            URI idemkeyJdbc = server.uri("bench-jdbc");
            URI seeds003 = server.uri("bench-seed003");
            URI cached = server.uri("bench-jdbc-cached");
            for (URI base : List.of(idemkeyJdbc, seeds003, cached)) {
                load.run(base.resolve("bench/guarded"), BODY, 16, Duration.ZERO, Duration.ofSeconds(5), this::uniqueKey);
                load.run(base.resolve("bench/transactional"), BODY, 16, Duration.ZERO, Duration.ofSeconds(3), this::uniqueKey);
            }
            String[] sides = {"Idemkey JDBC" + on, "seed 003" + on};
            URI[] deployments = {idemkeyJdbc, seeds003};
            Map<String, int[]> statements = new LinkedHashMap<>();
            for (int side = 0; side < 2; side++) {
                statements.put(sides[side], statementsPerRequest(database, deployments[side]));
            }
            List<Scenario> scenarios = new ArrayList<>();
            for (int side = 0; side < 2; side++) {
                URI base = deployments[side];
                String name = sides[side];
                scenarios.add(Scenario.of(name + ": first execution, 32", base.resolve("bench/guarded"), 32, this::uniqueKey));
                scenarios.add(Scenario.of(name + ": first execution with a transactional effect, 32",
                        base.resolve("bench/transactional"), 32, this::uniqueKey));
                scenarios.add(Scenario.of(name + ": replay, 32", base.resolve("bench/guarded"), 32, completedKeys(base)));
                scenarios.add(Scenario.conflict(name + ": conflict, 32", base.resolve("guarded/slow?millis=" + HOLD_MILLIS), 32,
                        holdInProgress(base)));
            }
            String cachedScenario = "Idemkey JDBC" + on + ": replay seen by this instance, 32";
            scenarios.add(Scenario.of(cachedScenario, cached.resolve("bench/guarded"), 32, completedKeys(cached)));
            runRepeatedly("JDBC" + on, scenarios, REPEATS, PASS, WARM_UP, MEASURED);
            System.out.printf("%n%s:%n| scenario (connections) | throughput (req/s) | p50 (ms) | p99 (ms) | statements per request |%n"
                    + "| --- | --- | --- | --- | --- |%n", database.name());
            String[] kinds = {"first execution", "first execution with a transactional effect", "replay", "conflict"};
            for (int side = 0; side < 2; side++) {
                for (int kind = 0; kind < kinds.length; kind++) {
                    String scenario = sides[side] + ": " + kinds[kind] + ", 32";
                    System.out.printf("| %s | %s | %.3f | %.3f | %d |%n", scenario,
                            spread(scenario, LoadGenerator.Result::throughput, "%.0f"), p50(scenario), p99(scenario),
                            statements.get(sides[side])[kind]);
                }
            }
            System.out.printf("| %s | %s | %.3f | %.3f | 0 |%n", cachedScenario,
                    spread(cachedScenario, LoadGenerator.Result::throughput, "%.0f"), p50(cachedScenario), p99(cachedScenario));
            for (int kind = 0; kind < kinds.length; kind++) {
                String idemkeyScenario = sides[0] + ": " + kinds[kind] + ", 32";
                String seedScenario = sides[1] + ": " + kinds[kind] + ", 32";
                note("JDBC" + on + " " + kinds[kind] + ": Idemkey vs seed 003, 32 connections",
                        String.format("%.0f vs %.0f req/s (%.2f×); %d vs %d statements", throughput(idemkeyScenario),
                                throughput(seedScenario), throughput(idemkeyScenario) / throughput(seedScenario),
                                statements.get(sides[0])[kind], statements.get(sides[1])[kind]));
            }
            releaseHolders();
            if (!PROFILE.isEmpty()) {
                profileFirstExecutions(server.pid(), Path.of(PROFILE), sides, deployments);
            }
        }
    }

    /**
     * Flight recordings of the server during first executions at one connection, Idemkey's JDBC store
     * and seed 003's, each run alone for 15 s, twice in alternation: Java samples every millisecond
     * and every socket read (the database's replies among them), to tell a request's time on the
     * server's CPU from its wait for the database.
     */
    private void profileFirstExecutions(long serverPid, Path directory, String[] sides, URI[] deployments) throws Exception {
        Files.createDirectories(directory);
        Path settings = directory.resolve("first-executions.jfc");
        String jfc = Files.readString(Path.of(System.getProperty("java.home"), "lib", "jfr", "default.jfc"));
        jfc = jfc.replaceAll("(?s)(<event name=\"jdk.ExecutionSample\">.*?<setting name=\"period\"[^>]*>)[^<]*", "$1 1 ms")
                .replaceAll("(?s)(<event name=\"jdk.Socket(Read|Write)\">.*?<setting name=\"threshold\"[^>]*>)[^<]*", "$1 0 ms");
        Files.writeString(settings, jfc);
        String jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd").toString();
        for (int round = 1; round <= 2; round++) {
            for (int side = 0; side < 2; side++) {
                URI uri = deployments[side].resolve("bench/guarded");
                load.run(uri, BODY, 1, Duration.ZERO, Duration.ofSeconds(2), this::uniqueKey);
                String name = (side == 0 ? "jdbc-first-1-" : "seed003-first-1-") + round;
                Path recording = directory.resolve(name + ".jfr");
                new ProcessBuilder(jcmd, Long.toString(serverPid), "JFR.start", "name=" + name, "settings=" + settings)
                        .inheritIO().start().waitFor();
                LoadGenerator.Result result = load.run(uri, BODY, 1, Duration.ZERO, Duration.ofSeconds(15), this::uniqueKey);
                new ProcessBuilder(jcmd, Long.toString(serverPid), "JFR.stop", "name=" + name, "filename=" + recording)
                        .inheritIO().start().waitFor();
                System.out.printf("profile: %s (%s): %d requests, p50 %.3f ms, load %s%n", recording,
                        sides[side], result.requests(), result.p50Millis(), loadAverage());
            }
        }
    }

    /** {first execution, the same with a transactional effect, replay, conflict}: statements on the store's tables per request. */
    private int[] statementsPerRequest(TestDatabase postgres, URI deployment) throws Exception {
        String key = uniqueKey();
        long before = statements(postgres);
        post(deployment.resolve("bench/guarded"), key);
        long afterFirst = statements(postgres);
        post(deployment.resolve("bench/guarded"), key);
        long afterReplay = statements(postgres);
        post(deployment.resolve("bench/transactional"), uniqueKey());
        long afterTransactional = statements(postgres);
        String slow = uniqueKey();
        CompletableFuture<Void> running = CompletableFuture.runAsync(() -> post(deployment.resolve("guarded/slow?millis=800"), slow));
        Thread.sleep(300);
        long beforeConflict = statements(postgres);
        post(deployment.resolve("guarded/slow?millis=800"), slow);
        long afterConflict = statements(postgres);
        running.get();
        return new int[] {(int) (afterFirst - before), (int) (afterTransactional - afterReplay), (int) (afterReplay - afterFirst),
                (int) (afterConflict - beforeConflict)};
    }

    /** Statements on either store's table so far. */
    private static long statements(TestDatabase postgres) {
        return DatabaseStatements.soFar(postgres, "idempotency_keys") + DatabaseStatements.soFar(postgres, "seed003_keys");
    }

    /**
     * Redis memory per completed record: used_memory before and after 10,000 of them, less the memory of
     * the clients' connections (mem_clients_normal: query and output buffers, which the server's pooled
     * connections hold whatever the records and which moved the figure by up to 31 B per record between runs).
     */
    private void memory(RedisServer redis) throws Exception {
        long[] small = memoryPerRecord(redis, uncached.resolve("bench/small"));
        long[] large = memoryPerRecord(redis, uncached.resolve("bench/large"));
        target("Redis memory per record: 200 B / 10 KB JSON response (≤ 400 B / ≤ 3 KB)",
                String.format("%d B / %d B (used_memory with the connections' buffers: %d B / %d B)", small[0], large[0],
                        small[1], large[1]),
                small[0] > 0 && small[0] <= 400 && large[0] > 0 && large[0] <= 3072); // not positive: memory freed meanwhile
    }

    /** Bytes per record: {without the clients' buffers, with them}. */
    private long[] memoryPerRecord(RedisServer redis, URI endpoint) throws Exception {
        int records = 10_000;
        try (Jedis jedis = redis.client()) {
            jedis.flushAll(FlushMode.SYNC); // freed before the reading (Valkey 8 frees a FLUSHALL in the background by default)
            Map<String, Long> before = memoryInfo(jedis);
            load.run(endpoint, BODY, 16, Duration.ZERO, Duration.ofMinutes(5), this::uniqueKey, records);
            Map<String, Long> after = memoryInfo(jedis);
            long stored = Math.max(1, jedis.dbSize());
            byte[] body = client.send(HttpRequest.newBuilder(endpoint).header("Content-Type", "application/json")
                    .header("Idempotency-Key", uniqueKey()).POST(HttpRequest.BodyPublishers.ofString(BODY)).build(),
                    HttpResponse.BodyHandlers.ofByteArray()).body();
            long used = after.get("used_memory") - before.get("used_memory");
            long clients = after.get("mem_clients_normal") - before.get("mem_clients_normal");
            System.out.printf("memory: %d records of a %d B body, MEMORY USAGE of one: %d B; used_memory +%d B, of which"
                    + " the clients' buffers %+d B%n", stored, body.length, jedis.memoryUsage(jedis.randomKey()), used, clients);
            return new long[] {(used - clients) / stored, used / stored};
        }
    }

    private static Map<String, Long> memoryInfo(Jedis jedis) {
        return jedis.info("memory").lines().filter(l -> l.startsWith("used_memory:") || l.startsWith("mem_clients_normal:"))
                .collect(Collectors.toMap(l -> l.substring(0, l.indexOf(':')),
                        l -> Long.parseLong(l.substring(l.indexOf(':') + 1).trim())));
    }

    /**
     * What encryption at rest costs (issue 28; docs/security.md): two deployments on one Payara Micro
     * and one private Redis, replay cache off on both, one with {@code idempotency.encryption.keys} and
     * {@code identifier-key} (fresh random keys), one without; first executions and replays from Redis
     * at 32 connections, measured in the same runs (server CPU and Redis CPU per request, throughput),
     * and Redis memory per completed record of a 200 B and a 10 KB JSON response.
     */
    private void encryption() throws Exception {
        System.out.println("encryption at rest: a private Redis, Payara Micro ...");
        try (RedisServer redis = RedisServer.start()) {
            Path directory = Files.createTempDirectory("idemkey-bench-encryption");
            Map<String, String> plain = Map.of("idempotency.redis.url", redis.url(), "idempotency.replay-cache-bytes", "0");
            List<Path> wars = List.of(war(directory, "bench-plain", plain),
                    war(directory, "bench-sealed", merged(plain, Map.of("idempotency.encryption.keys", "bench:" + randomKey(),
                            "idempotency.encryption.identifier-key", randomKey()))));
            try (ServerProcess server = ServerProcess.startForTests(ServerProcess.Kind.PAYARA, wars)) {
                URI[] deployments = {server.uri("bench-plain"), server.uri("bench-sealed")};
                String[] sides = {"without encryption", "with encryption"};
                warmUp(Duration.ofSeconds(5), deployments);
                List<Scenario> scenarios = new ArrayList<>();
                for (int side = 0; side < 2; side++) {
                    scenarios.add(Scenario.of(sides[side] + ": first execution, 32", deployments[side].resolve("bench/guarded"), 32,
                            this::uniqueKey));
                    scenarios.add(Scenario.of(sides[side] + ": replay from Redis, 32", deployments[side].resolve("bench/guarded"), 32,
                            completedKeys(deployments[side])));
                }
                try (Meters meters = new Meters(server.pid(), redis.pid(), redis.client())) {
                    load.meter(meters);
                    runRepeatedly("encryption", scenarios, REPEATS, Duration.ofSeconds(3), WARM_UP, MEASURED);
                } finally {
                    load.meter(null);
                }
                ToDoubleFunction<LoadGenerator.Result> serverCpu = Figure.SERVER_CPU.of;
                System.out.printf("%n| encryption at rest, 32 connections, replay cache off | throughput (req/s) | p99 (ms)"
                        + " | server CPU (µs/request) | ÷ without encryption | server allocations (KB/request)"
                        + " | Redis CPU (µs/request) |%n| --- | --- | --- | --- | --- | --- | --- |%n");
                for (Scenario scenario : scenarios) {
                    String name = scenario.name();
                    String without = name.replace(sides[1], sides[0]);
                    System.out.printf("| %s | %s | %.3f | %s | %s | %s | %s |%n", name,
                            spread(name, LoadGenerator.Result::throughput, "%.0f"), p99(name),
                            spread(name, r -> micros(r, Meters.Reading::serverCpuNanos), "%.0f"),
                            name.equals(without) ? "1" : ratioSpread(name, without, serverCpu),
                            spread(name, r -> r.perRequest(Meters.Reading::serverAllocatedBytes) / 1024, "%.1f"),
                            spread(name, r -> micros(r, Meters.Reading::redisCpuNanos), "%.1f"));
                }
                for (String kind : List.of("first execution", "replay from Redis")) {
                    String without = sides[0] + ": " + kind + ", 32";
                    String with = sides[1] + ": " + kind + ", 32";
                    note("encryption at rest, " + kind + ", 32 connections: server CPU per request and throughput, with vs without",
                            String.format("%.0f vs %.0f µs (×%.2f); %.0f vs %.0f req/s (×%.2f); Redis CPU %.1f vs %.1f µs"
                                            + " (ratios: the median of each run's)",
                                    cost(with, Meters.Reading::serverCpuNanos) / 1000, cost(without, Meters.Reading::serverCpuNanos) / 1000,
                                    pairedRatio(with, without, serverCpu), throughput(with), throughput(without),
                                    pairedRatio(with, without, LoadGenerator.Result::throughput),
                                    cost(with, Meters.Reading::redisCpuNanos) / 1000, cost(without, Meters.Reading::redisCpuNanos) / 1000));
                }

                Map<String, long[][]> memory = new LinkedHashMap<>();
                memory.put("200 B", new long[][] {memoryPerRecord(redis, deployments[0].resolve("bench/small")),
                        memoryPerRecord(redis, deployments[1].resolve("bench/small"))});
                memory.put("10 KB", new long[][] {memoryPerRecord(redis, deployments[0].resolve("bench/large")),
                        memoryPerRecord(redis, deployments[1].resolve("bench/large"))});
                System.out.printf("%n| Redis memory per record | without encryption | with encryption | difference |%n| --- | --- | --- | --- |%n");
                for (Map.Entry<String, long[][]> response : memory.entrySet()) {
                    long[] without = response.getValue()[0];
                    long[] with = response.getValue()[1];
                    System.out.printf("| %s JSON response | %d B | %d B | %+d B |%n", response.getKey(), without[0], with[0],
                            with[0] - without[0]);
                    note("encryption at rest, Redis memory per record, " + response.getKey() + " JSON response: with vs without",
                            String.format("%d vs %d B (%+d B; used_memory with the connections' buffers: %d vs %d B)",
                                    with[0], without[0], with[0] - without[0], with[1], without[1]));
                }
            }
        }
    }

    /** A fresh AES-256 / HMAC key as the encryption properties take it: base64 of 32 random bytes. */
    private static String randomKey() {
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        return Base64.getEncoder().encodeToString(key);
    }

    private void fingerprints() throws Exception {
        System.out.println("fingerprint (JMH) ...");
        Collection<RunResult> runs = new Runner(new OptionsBuilder()
                .include(FingerprintBenchmark.class.getName())
                .forks(1).warmupIterations(3).warmupTime(TimeValue.seconds(1))
                .measurementIterations(5).measurementTime(TimeValue.seconds(1))
                .build()).run();
        StringBuilder figures = new StringBuilder();
        StringBuilder reference = new StringBuilder();
        boolean met = true;
        for (RunResult result : runs) {
            int bytes = Integer.parseInt(result.getParams().getParam("bytes"));
            boolean jsonP = result.getParams().getParam("parser").equals("json-p");
            double millis = result.getPrimaryResult().getScore() / 1000;
            double error = result.getPrimaryResult().getScoreError() / 1000;
            StringBuilder row = jsonP ? reference : figures;
            row.append(row.length() == 0 ? "" : " / ").append(String.format("%s: %.3f ± %.3f ms (%.0f MB/s)",
                    label(bytes), millis, error, bytes / millis / 1000));
            met &= jsonP || bytes < 100 * 1024 || bytes / millis / 1000 >= 300;
        }
        target("fingerprint of a JSON body: 1 KB / 100 KB / 1 MB (≥ 300 MB/s: 100 KB ≤ 0.35 ms, 1 MB ≤ 3.5 ms)",
                figures + "; through JSON-P, same run: " + reference + (Boolean.FALSE.equals(SHA_EXTENSIONS)
                        ? "; this processor has no SHA extensions: the next row times SHA-256 alone, the floor" : ""),
                met);
        fingerprintCpuTimes();
    }

    /**
     * The same fingerprints measured in this thread's CPU time rather than JMH's elapsed time, both
     * paths and SHA-256 alone over the body's bytes (the floor) in alternating rounds: on a machine busy
     * with other work, elapsed time mostly measures the others, CPU time much less so. Median of 5
     * rounds (after 2 uncounted), and their range.
     */
    private void fingerprintCpuTimes() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Set<String> excluded = Set.of("clienttimestamp", "requestnonce");
        Fingerprint bytesPath = new Fingerprint();
        Fingerprint jsonPPath = new Fingerprint(JsonProvider.provider());
        MessageDigest sha256 = sha256();
        Map<String, Consumer<byte[]>> paths = new LinkedHashMap<>();
        paths.put("bytes", body -> bytesPath.of("POST", "/orders", List.of(), true, body, excluded));
        paths.put("json-p", body -> jsonPPath.of("POST", "/orders", List.of(), true, body, excluded));
        paths.put("SHA-256 alone", sha256::digest); // the floor: what hashing as many bytes costs, no JSON read
        StringBuilder figures = new StringBuilder();
        for (int bytes : new int[]{1024, 102_400, 1_048_576}) {
            byte[] body = FingerprintBenchmarkBodies.order(bytes).getBytes(StandardCharsets.UTF_8);
            int calls = Math.max(5, 20_000_000 / bytes);
            Map<String, List<Double>> millis = new LinkedHashMap<>();
            for (int round = 0; round < 7; round++) {
                for (Map.Entry<String, Consumer<byte[]>> path : paths.entrySet()) {
                    long started = threads.getCurrentThreadCpuTime();
                    for (int i = 0; i < calls; i++) {
                        path.getValue().accept(body);
                    }
                    if (round >= 2) {
                        millis.computeIfAbsent(path.getKey(), k -> new ArrayList<>())
                                .add((threads.getCurrentThreadCpuTime() - started) / 1e6 / calls);
                    }
                }
            }
            figures.append(figures.length() == 0 ? "" : " / ").append(label(bytes)).append(":");
            millis.forEach((path, values) -> {
                values.sort(null);
                figures.append(String.format(" %s %.3f (%.3f–%.3f) ms = %.0f MB/s;", path, values.get(values.size() / 2),
                        values.get(0), values.get(values.size() - 1), bytes / values.get(values.size() / 2) / 1000));
            });
        }
        note("fingerprint, thread CPU time per call: byte tokenizer (default) vs JSON-P, and SHA-256 alone of as many bytes"
                + (SHA_EXTENSIONS == null ? "" : SHA_EXTENSIONS ? " (SHA extensions)" : " (no SHA extensions)"), figures.toString());
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e); // every Java platform has SHA-256
        }
    }

    private static List<String> cpuInfo() {
        try {
            return Files.readAllLines(Path.of("/proc/cpuinfo"));
        } catch (IOException e) {
            return List.of(); // not Linux
        }
    }

    private static Boolean shaExtensions() {
        String arch = System.getProperty("os.arch");
        String field = arch.equals("amd64") || arch.equals("x86_64") ? "flags" : arch.equals("aarch64") ? "Features" : null;
        String flag = "flags".equals(field) ? "sha_ni" : "sha2";
        return field == null || CPU_INFO.isEmpty() ? null : CPU_INFO.stream()
                .anyMatch(line -> line.startsWith(field) && Arrays.asList(line.split("\\s+")).contains(flag));
    }

    private static String label(int bytes) {
        return bytes >= 1 << 20 ? (bytes >> 20) + " MB" : (bytes >> 10) + " KB";
    }

    private void print(Duration took, String loadBefore) {
        System.out.printf("%nIdemkey benchmark, %s, %s; Payara Micro 6.2025.10, %s; %d repeats of %d s%n%n"
                        + "| figure (target) | measured | met? |%n| --- | --- | --- |%n", LocalDate.now(), machine(), redisVersion(),
                REPEATS, MEASURED.toSeconds());
        table.forEach((figure, value) -> System.out.printf("| %s | %s |%n", figure, value));
        if (!goals.isEmpty()) {
            System.out.printf("%nIssue 30's targets (point 3), the new call path (idempotency.redis.coalesce=true,"
                    + " coalesce-linger-us=%s) in this run, the old path beside it; the ratios at 32 connections: median (range)"
                    + " of %d rounds of alternating windows of %d s, each ÷ the mean of the base windows either side, judged;"
                    + " then of the %d repeats; the rest: median of the %d repeats (range)%n%n"
                    + "| target | measured | met? |%n| --- | --- | --- |%n", LINGER_US, ALTERNATING_ROUNDS,
                    ALTERNATING_WINDOW.toSeconds(), REPEATS, REPEATS);
            goals.forEach((figure, value) -> System.out.printf("| %s | %s |%n", figure, value));
        }
        System.out.printf("%n| part | took | of which windows of fixed length (warm-ups, measured runs) |%n| --- | --- | --- |%n");
        parts.forEach((name, duration) -> System.out.printf("| %s | %s | %s |%n", name, minutes(duration[0]), minutes(duration[1])));
        System.out.printf("%nTotal: %s (load average before %s, after %s)%n", minutes(took), loadBefore, loadAverage());
    }

    private static String minutes(Duration duration) {
        return duration.toMinutes() + " min " + duration.toSecondsPart() + " s";
    }

    /** The 1, 5 and 15 minute load averages ({@code /proc/loadavg}): how busy the shared machine was. */
    private static String loadAverage() {
        try {
            String[] fields = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return fields[0] + " / " + fields[1] + " / " + fields[2];
        } catch (IOException e) {
            return "?";
        }
    }

    /** Cores, processor and Java, as the tables should say. */
    private static String machine() {
        String cpu = CPU_INFO.stream().filter(l -> l.startsWith("model name")) // none where not Linux: the core count says enough
                .map(l -> l.substring(l.indexOf(':') + 1).trim()).findFirst().orElse("");
        return Runtime.getRuntime().availableProcessors() + " cores" + (cpu.isEmpty() ? "" : " (" + cpu + ")")
                + ", Java " + System.getProperty("java.version");
    }

    /** The Redis the run's servers are ({@code -Dbench.redisServer}, as {@code --version} says it): "Redis 7.0.15", "Valkey 8.1.1". */
    private static String redisVersion() {
        String program = RedisServer.defaultProgram();
        try {
            Process version = new ProcessBuilder(program, "--version").start();
            String text = new String(version.getInputStream().readAllBytes());
            int v = text.indexOf("v=");
            return text.split(" ", 2)[0] + " " + (v < 0 ? "?" : text.substring(v + 2, text.indexOf(' ', v)));
        } catch (IOException e) {
            return program + " ?";
        }
    }

    private void post(URI uri, String key) {
        try {
            client.send(HttpRequest.newBuilder(uri).header("Content-Type", "application/json").header("Idempotency-Key", key)
                    .POST(HttpRequest.BodyPublishers.ofString(BODY)).build(), HttpResponse.BodyHandlers.discarding());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // a holder cancelled at the end
        }
    }

    private String uniqueKey() {
        return "bench-" + run + "-" + keys.incrementAndGet();
    }

    private static double median(List<Double> values) {
        List<Double> sorted = values.stream().sorted().toList();
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    private static Map<String, String> merged(Map<String, String> base, Map<String, String> more) {
        Map<String, String> config = new LinkedHashMap<>(base);
        config.putAll(more);
        return config;
    }

    private static Path war(Path directory, String name, Map<String, String> config) {
        Path file = directory.resolve(name + ".war");
        Deployments.guardedApp(name, config).as(ZipExporter.class).exportTo(file.toFile(), true);
        return file;
    }
}
