package io.idemkey.bench;

import io.idemkey.it.Deployments;
import io.idemkey.it.PostgresStatements;
import io.idemkey.it.ServerProcess;
import io.idemkey.it.app.CheckThenLockStore;
import io.idemkey.testing.PostgresServer;
import io.idemkey.testing.RedisCluster;
import io.idemkey.testing.RedisMonitor;
import io.idemkey.testing.RedisServer;
import org.jboss.shrinkwrap.api.exporter.ZipExporter;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import redis.clients.jedis.Jedis;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * What idempotency costs, side by side, in one run (README, "Performance"): the no-op endpoint bare,
 * guarded with a unique key per request, replayed, and guarded by the seeds' check-then-lock
 * pattern; Redis round trips per request; Redis memory per record; fingerprint cost (JMH); errors
 * at 256 connections. Payara Micro and a private Redis on this machine, the JDK's HttpClient as the
 * load generator on loopback. Every figure is the median of {@code bench.repeats} runs.
 */
public final class BenchmarkRun {

    private static final int REPEATS = Integer.getInteger("bench.repeats", 3);
    private static final Duration WARM_UP = Duration.ofSeconds(Integer.getInteger("bench.warmup-seconds", 2));
    private static final Duration MEASURED = Duration.ofSeconds(Integer.getInteger("bench.seconds", 8));
    /** Which parts to run: {@code -Dbench.only=throughput,roundtrips,memory,errors,cluster,jdbc,fingerprint} (default all). */
    private static final String ONLY = System.getProperty("bench.only",
            "throughput,roundtrips,memory,errors,cluster,jdbc,fingerprint");
    private static final String BODY = "{\"amount\":1999,\"currency\":\"EUR\",\"clientTimestamp\":\"2026-11-22T10:15:30Z\"}";

    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private final LoadGenerator load = new LoadGenerator(client);
    private final String run = UUID.randomUUID().toString().substring(0, 8);
    private final AtomicInteger keys = new AtomicInteger();

    private URI idemkey;
    private URI seeds;
    private URI uncached;

    public static void main(String[] args) throws Exception {
        new BenchmarkRun().execute();
        System.exit(0);
    }

    private void execute() throws Exception {
        System.out.println("Idemkey benchmark: Payara Micro + a private redis-server, "
                + Runtime.getRuntime().availableProcessors() + " cores, Java " + System.getProperty("java.version"));
        Map<String, String> table = new LinkedHashMap<>();
        try (RedisServer redis = RedisServer.start()) {
            Path directory = Files.createTempDirectory("idemkey-bench");
            List<Path> wars = List.of(
                    war(directory, "bench", Map.of("idempotency.redis.url", redis.url())),
                    war(directory, "bench-seeds", Map.of("idempotency.redis.url", redis.url(), "idempotency.store", "custom")),
                    war(directory, "bench-uncached", Map.of("idempotency.redis.url", redis.url(),
                            "idempotency.replay-cache-bytes", "0")));
            try (ServerProcess server = ServerProcess.startForTests(ServerProcess.Kind.PAYARA, wars)) {
                idemkey = server.uri("bench");
                seeds = server.uri("bench-seeds");
                uncached = server.uri("bench-uncached");
                warmUp();
                if (ONLY.contains("throughput")) {
                    throughputAndLatency(table);
                }
                if (ONLY.contains("roundtrips")) {
                    roundTrips(redis, table);
                }
                if (ONLY.contains("memory")) {
                    memory(redis, table);
                }
                if (ONLY.contains("errors")) {
                    errorsAt256(table);
                }
            }
        }
        if (ONLY.contains("cluster")) {
            cluster(table);
        }
        if (ONLY.contains("jdbc")) {
            jdbc(table);
        }
        if (ONLY.contains("fingerprint")) {
            fingerprints(table);
        }
        print(table);
    }

    private void warmUp() throws Exception {
        System.out.println("warming up (JIT, pools) ...");
        for (URI base : List.of(idemkey, seeds, uncached)) {
            load.run(base.resolve("bench/bare"), BODY, 16, Duration.ZERO, Duration.ofSeconds(5), null);
            load.run(base.resolve("bench/guarded"), BODY, 16, Duration.ZERO, Duration.ofSeconds(5), this::uniqueKey);
        }
    }

    private final Map<String, List<LoadGenerator.Result>> results = new LinkedHashMap<>();

    private void throughputAndLatency(Map<String, String> table) throws Exception {
        Supplier<String> replayed = completedKeys(idemkey);
        Supplier<String> replayedFromRedis = completedKeys(uncached);
        List<Runnable> scenarios = List.of(
                () -> measure("bare, 32", idemkey.resolve("bench/bare"), 32, null),
                () -> measure("idempotent, 32", idemkey.resolve("bench/guarded"), 32, this::uniqueKey),
                () -> measure("replay, 32", idemkey.resolve("bench/guarded"), 32, replayed),
                () -> measure("replay from Redis, 32", uncached.resolve("bench/guarded"), 32, replayedFromRedis),
                () -> measure("check-then-lock, 32", seeds.resolve("bench/guarded"), 32, this::uniqueKey),
                () -> measure("bare, 1", idemkey.resolve("bench/bare"), 1, null),
                () -> measure("idempotent, 1", idemkey.resolve("bench/guarded"), 1, this::uniqueKey),
                () -> measure("check-then-lock, 1", seeds.resolve("bench/guarded"), 1, this::uniqueKey));
        System.out.println("a warm-up pass (not counted) ...");
        scenarios.forEach(Runnable::run);
        results.clear();
        for (int repeat = 1; repeat <= REPEATS; repeat++) {
            System.out.printf("run %d of %d ...%n", repeat, REPEATS);
            for (int i = 0; i < scenarios.size(); i++) { // a different order each run: drift hits every scenario
                scenarios.get((i + repeat - 1) % scenarios.size()).run();
            }
        }
        System.out.printf("%n| scenario (connections) | throughput (req/s) | p50 (ms) | p99 (ms) | ÷ bare |%n"
                + "| --- | --- | --- | --- | --- |%n");
        for (String scenario : List.of("bare, 32", "idempotent, 32", "replay, 32", "replay from Redis, 32",
                "check-then-lock, 32", "bare, 1", "idempotent, 1", "check-then-lock, 1")) {
            String bare = scenario.endsWith(", 1") ? "bare, 1" : "bare, 32";
            System.out.printf("| %s | %.0f | %.3f | %.3f | %.2f |%n", scenario, throughput(scenario), p50(scenario),
                    p99(scenario), throughput(scenario) / throughput(bare));
        }
        table.put("idempotent ÷ bare throughput, 32 connections (≥ 0.80)",
                String.format("%.2f (%.0f / %.0f req/s)", throughput("idempotent, 32") / throughput("bare, 32"),
                        throughput("idempotent, 32"), throughput("bare, 32")));
        table.put("replay ÷ bare throughput, 32 connections (≥ 1.0): seen by this instance / from Redis",
                String.format("%.2f / %.2f (%.0f / %.0f req/s)", throughput("replay, 32") / throughput("bare, 32"),
                        throughput("replay from Redis, 32") / throughput("bare, 32"), throughput("replay, 32"),
                        throughput("replay from Redis, 32")));
        table.put("added p50 / p99 vs bare, 1 connection (≤ 0.3 / ≤ 1.5 ms)",
                String.format("%.3f / %.3f ms (bare %.3f / %.3f ms)", p50("idempotent, 1") - p50("bare, 1"),
                        p99("idempotent, 1") - p99("bare, 1"), p50("bare, 1"), p99("bare, 1")));
        table.put("Idemkey vs check-then-lock: throughput 32 conn., p99 1 conn. (ahead)",
                String.format("%.0f vs %.0f req/s; %.3f vs %.3f ms", throughput("idempotent, 32"),
                        throughput("check-then-lock, 32"), p99("idempotent, 1"), p99("check-then-lock, 1")));
    }

    /** 1,000 keys completed on this deployment, handed out in turn, round and round. */
    private Supplier<String> completedKeys(URI deployment) throws Exception {
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            String key = uniqueKey();
            post(deployment.resolve("bench/guarded"), key);
            keys.add(key);
        }
        AtomicInteger next = new AtomicInteger();
        return () -> keys.get(Math.floorMod(next.getAndIncrement(), keys.size()));
    }

    private void measure(String scenario, URI uri, int connections, Supplier<String> keys) {
        LoadGenerator.Result result;
        try {
            result = load.run(uri, BODY, connections, WARM_UP, MEASURED, keys);
        } catch (Exception e) {
            throw new IllegalStateException(scenario, e);
        }
        System.out.printf("  %-24s %7.0f req/s  p50 %.3f ms  p99 %.3f ms  errors %d%n", scenario, result.throughput(),
                result.p50Millis(), result.p99Millis(), result.errors());
        results.computeIfAbsent(scenario, s -> new ArrayList<>()).add(result);
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

    /** Client commands Redis received (MONITOR, not counting those the Lua scripts run inside). */
    private void roundTrips(RedisServer redis, Map<String, String> table) throws Exception {
        try (RedisMonitor monitor = RedisMonitor.start(redis)) {
            String key = uniqueKey();
            post(uncached.resolve("bench/guarded"), key);
            int first = monitor.takeClientCommands().size();
            post(uncached.resolve("bench/guarded"), key);
            int replay = monitor.takeClientCommands().size();
            String cachedKey = uniqueKey();
            post(idemkey.resolve("bench/guarded"), cachedKey);
            monitor.takeClientCommands();
            post(idemkey.resolve("bench/guarded"), cachedKey);
            int cachedReplay = monitor.takeClientCommands().size();
            String slow = uniqueKey();
            CompletableFuture<Void> running = CompletableFuture.runAsync(() -> post(uncached.resolve("guarded/slow?millis=500"), slow));
            Thread.sleep(200);
            monitor.takeClientCommands();
            post(uncached.resolve("guarded/slow?millis=500"), slow);
            int conflict = monitor.takeClientCommands().size();
            running.get();
            String seedKey = uniqueKey();
            monitor.takeClientCommands();
            post(seeds.resolve("bench/guarded"), seedKey);
            int seedFirst = monitor.takeClientCommands().size();
            table.put("round trips: first / replay / conflict (2 / 1 / 1)",
                    first + " / " + replay + " / " + conflict + " (a replay this instance has seen: " + cachedReplay
                            + "; check-then-lock first: " + seedFirst + ")");
        }
    }

    /**
     * The same first executions and replays from Redis (replay cache off) against a Redis Cluster of
     * 3 masters + 3 replicas on the same loopback, beside the one-Redis figures of this run; and the
     * round trips, counted on every master. Six redis-server processes share the machine's cores
     * with the server and the load: the figure says what the cluster costs here, not what it gains
     * on separate hosts.
     */
    private void cluster(Map<String, String> table) throws Exception {
        System.out.println("Redis Cluster: 3 masters + 3 replicas on loopback, Payara Micro ...");
        try (RedisCluster cluster = RedisCluster.start(3)) {
            Path directory = Files.createTempDirectory("idemkey-bench-cluster");
            Path war = war(directory, "bench-cluster", Map.of("idempotency.redis.mode", "cluster",
                    "idempotency.redis.nodes", cluster.nodesProperty(), "idempotency.replay-cache-bytes", "0"));
            try (ServerProcess server = ServerProcess.startForTests(ServerProcess.Kind.PAYARA, List.of(war))) {
                URI onCluster = server.uri("bench-cluster");
                load.run(onCluster.resolve("bench/guarded"), BODY, 16, Duration.ZERO, Duration.ofSeconds(5), this::uniqueKey);
                Supplier<String> replayed = completedKeys(onCluster);
                for (int repeat = 1; repeat <= REPEATS; repeat++) {
                    System.out.printf("cluster run %d of %d ...%n", repeat, REPEATS);
                    measure("cluster: idempotent, 32", onCluster.resolve("bench/guarded"), 32, this::uniqueKey);
                    measure("cluster: replay from Redis, 32", onCluster.resolve("bench/guarded"), 32, replayed);
                }
                String standalone = results.containsKey("idempotent, 32")
                        ? String.format("; one Redis, same run: %.0f / %.0f req/s", throughput("idempotent, 32"),
                                throughput("replay from Redis, 32"))
                        : "";
                table.put("Redis Cluster (3 + 3 on this machine): first execution / replay from Redis, 32 connections",
                        String.format("%.0f / %.0f req/s, p99 %.3f / %.3f ms%s", throughput("cluster: idempotent, 32"),
                                throughput("cluster: replay from Redis, 32"), p99("cluster: idempotent, 32"),
                                p99("cluster: replay from Redis, 32"), standalone));

                List<RedisMonitor> monitors = cluster.masters().stream().map(RedisMonitor::start).toList();
                try {
                    String key = uniqueKey();
                    post(onCluster.resolve("bench/guarded"), key);
                    int first = monitors.stream().mapToInt(m -> m.takeClientCommands().size()).sum();
                    post(onCluster.resolve("bench/guarded"), key);
                    int replay = monitors.stream().mapToInt(m -> m.takeClientCommands().size()).sum();
                    table.put("Redis Cluster round trips, all masters: first / replay (2 / 1)", first + " / " + replay);
                } finally {
                    monitors.forEach(RedisMonitor::close);
                }
            }
        }
    }

    /**
     * The JDBC store against seed 003's pattern (INSERT ... ON CONFLICT DO NOTHING, then SELECT, then
     * UPDATE) on one private PostgreSQL that flushes its commits to disk, as production does, both
     * through Payara Micro's JDBC pool: throughput of first executions (a no-op, and a
     * {@code @Transactional} method that writes one row: Idemkey records in that transaction, the
     * seed around it), replays and conflicts at 32 connections, and statements per request
     * (pg_stat_statements). Replays are read from the table (in-process caches off on both), as the
     * seed reads them; Idemkey's cached figure is shown apart.
     */
    private void jdbc(Map<String, String> table) throws Exception {
        System.out.println("JDBC: a private PostgreSQL, Payara Micro with a JDBC pool ...");
        try (PostgresServer postgres = PostgresServer.startDurable()) {
            PostgresStatements.enable(postgres);
            postgres.execute("CREATE TABLE bench_effects (id BIGSERIAL PRIMARY KEY, body TEXT NOT NULL)");
            Path directory = Files.createTempDirectory("idemkey-bench-jdbc");
            // the slow request a conflict meets holds its lease without a renewal while statements are counted
            String slowLease = "io.idemkey.it.app.GuardedResource/slow/IdempotencyKey/lockTtlSeconds";
            Map<String, String> jdbc = Map.of("idempotency.store", "jdbc", "idempotency.jdbc.datasource", "jdbc/idemkey",
                    "idempotency.replay-cache-bytes", "0", slowLease, "30");
            Path seed003 = directory.resolve("bench-seed003.war");
            Deployments.guardedApp("bench-seed003", Map.of("idempotency.store", "custom",
                            "bench.seed003.datasource", "jdbc/idemkey", "idempotency.replay-cache-bytes", "0", slowLease, "30"))
                    .deleteClass(CheckThenLockStore.class).addClass(Seed003Store.class)
                    .as(ZipExporter.class).exportTo(seed003.toFile(), true);
            List<Path> wars = List.of(war(directory, "bench-jdbc", jdbc), seed003,
                    war(directory, "bench-jdbc-cached", Map.of("idempotency.store", "jdbc", "idempotency.jdbc.datasource", "jdbc/idemkey")));
            try (ServerProcess server = ServerProcess.startForTestsWithPostgres(ServerProcess.Kind.PAYARA, wars,
                    ServerProcess.freePort(), postgres.port())) {
                URI idemkeyJdbc = server.uri("bench-jdbc");
                URI seeds003 = server.uri("bench-seed003");
                URI cached = server.uri("bench-jdbc-cached");
                for (URI base : List.of(idemkeyJdbc, seeds003, cached)) {
                    load.run(base.resolve("bench/guarded"), BODY, 16, Duration.ZERO, Duration.ofSeconds(5), this::uniqueKey);
                    load.run(base.resolve("bench/transactional"), BODY, 16, Duration.ZERO, Duration.ofSeconds(3), this::uniqueKey);
                }
                String[] sides = {"Idemkey JDBC", "seed 003"};
                URI[] deployments = {idemkeyJdbc, seeds003};
                Map<String, int[]> statements = new LinkedHashMap<>();
                for (int side = 0; side < 2; side++) {
                    statements.put(sides[side], statementsPerRequest(postgres, deployments[side]));
                }
                Map<String, Supplier<String>> replayed = new LinkedHashMap<>();
                for (int side = 0; side < 2; side++) {
                    replayed.put(sides[side], completedKeys(deployments[side]));
                }
                Supplier<String> replayedCached = completedKeys(cached);
                String[] conflictKeys = new String[2];
                List<CompletableFuture<Void>> holders = new ArrayList<>();
                long holdMillis = (WARM_UP.toMillis() + MEASURED.toMillis()) * 9 * REPEATS + 30_000; // the whole section
                for (int side = 0; side < 2; side++) {
                    conflictKeys[side] = uniqueKey(); // held in progress by one slow request while the others conflict
                    URI slow = deployments[side].resolve("guarded/slow?millis=" + holdMillis);
                    String key = conflictKeys[side];
                    holders.add(CompletableFuture.runAsync(() -> post(slow, key)));
                }
                Thread.sleep(500);
                List<Runnable> scenarios = new ArrayList<>();
                for (int side = 0; side < 2; side++) {
                    URI base = deployments[side];
                    String name = sides[side];
                    String conflictKey = conflictKeys[side];
                    Supplier<String> replays = replayed.get(name);
                    scenarios.add(() -> measure(name + ": first execution, 32", base.resolve("bench/guarded"), 32, this::uniqueKey));
                    scenarios.add(() -> measure(name + ": first execution with a transactional effect, 32",
                            base.resolve("bench/transactional"), 32, this::uniqueKey));
                    scenarios.add(() -> measure(name + ": replay, 32", base.resolve("bench/guarded"), 32, replays));
                    scenarios.add(() -> measureConflicts(name + ": conflict, 32", base.resolve("guarded/slow?millis="
                            + holdMillis), conflictKey));
                }
                scenarios.add(() -> measure("Idemkey JDBC: replay seen by this instance, 32", cached.resolve("bench/guarded"), 32, replayedCached));
                for (int repeat = 1; repeat <= REPEATS; repeat++) {
                    System.out.printf("JDBC run %d of %d ...%n", repeat, REPEATS);
                    for (int i = 0; i < scenarios.size(); i++) {
                        scenarios.get((i + repeat - 1) % scenarios.size()).run();
                    }
                }
                System.out.printf("%n| scenario (connections) | throughput (req/s) | p50 (ms) | p99 (ms) | statements per request |%n"
                        + "| --- | --- | --- | --- | --- |%n");
                String[] kinds = {"first execution", "first execution with a transactional effect", "replay", "conflict"};
                for (int side = 0; side < 2; side++) {
                    for (int kind = 0; kind < kinds.length; kind++) {
                        String scenario = sides[side] + ": " + kinds[kind] + ", 32";
                        System.out.printf("| %s | %.0f | %.3f | %.3f | %d |%n", scenario, throughput(scenario), p50(scenario),
                                p99(scenario), statements.get(sides[side])[kind]);
                    }
                }
                String cachedScenario = "Idemkey JDBC: replay seen by this instance, 32";
                System.out.printf("| %s | %.0f | %.3f | %.3f | 0 |%n", cachedScenario, throughput(cachedScenario),
                        p50(cachedScenario), p99(cachedScenario));
                for (int kind = 0; kind < kinds.length; kind++) {
                    String idemkeyScenario = "Idemkey JDBC: " + kinds[kind] + ", 32";
                    String seedScenario = "seed 003: " + kinds[kind] + ", 32";
                    table.put("JDBC " + kinds[kind] + ": Idemkey vs seed 003, 32 connections (ahead)",
                            String.format("%.0f vs %.0f req/s (%.2f×); %d vs %d statements", throughput(idemkeyScenario),
                                    throughput(seedScenario), throughput(idemkeyScenario) / throughput(seedScenario),
                                    statements.get(sides[0])[kind], statements.get(sides[1])[kind]));
                }
                holders.forEach(holder -> holder.cancel(true));
            }
        }
    }

    /** {first execution, the same with a transactional effect, replay, conflict}: statements on the store's tables per request. */
    private int[] statementsPerRequest(PostgresServer postgres, URI deployment) throws Exception {
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
    private static long statements(PostgresServer postgres) {
        return PostgresStatements.soFar(postgres, "idempotency_keys") + PostgresStatements.soFar(postgres, "seed003_keys");
    }

    /** Requests that all meet one request in progress: every answer a 409. */
    private void measureConflicts(String scenario, URI uri, String key) {
        LoadGenerator.Result result;
        try {
            result = load.run(uri, BODY, 32, WARM_UP, MEASURED, () -> key, Long.MAX_VALUE, status -> status == 409);
        } catch (Exception e) {
            throw new IllegalStateException(scenario, e);
        }
        System.out.printf("  %-40s %7.0f req/s  p50 %.3f ms  p99 %.3f ms  errors %d%n", scenario, result.throughput(),
                result.p50Millis(), result.p99Millis(), result.errors());
        results.computeIfAbsent(scenario, s -> new ArrayList<>()).add(result);
    }

    /** Redis memory per completed record: used_memory before and after 10,000 of them. */
    private void memory(RedisServer redis, Map<String, String> table) throws Exception {
        String small = memoryPerRecord(redis, "bench/small");
        String large = memoryPerRecord(redis, "bench/large");
        table.put("Redis memory per record: 200 B / 10 KB JSON response (≤ 400 B / ≤ 3 KB)", small + " / " + large);
    }

    private String memoryPerRecord(RedisServer redis, String path) throws Exception {
        int records = 10_000;
        try (Jedis jedis = redis.client()) {
            jedis.flushAll();
            long before = usedMemory(jedis);
            load.run(uncached.resolve(path), BODY, 16, Duration.ZERO, Duration.ofMinutes(5), this::uniqueKey, records);
            long after = usedMemory(jedis);
            long stored = jedis.dbSize();
            String sample = jedis.randomKey();
            Long usage = jedis.memoryUsage(sample);
            byte[] body = client.send(HttpRequest.newBuilder(uncached.resolve(path)).header("Content-Type", "application/json")
                    .header("Idempotency-Key", uniqueKey()).POST(HttpRequest.BodyPublishers.ofString(BODY)).build(),
                    HttpResponse.BodyHandlers.ofByteArray()).body();
            return String.format("%d B (%d records of a %d B body; MEMORY USAGE of one: %d B)",
                    (after - before) / Math.max(1, stored), stored, body.length, usage);
        }
    }

    private static long usedMemory(Jedis jedis) {
        return jedis.info("memory").lines().filter(l -> l.startsWith("used_memory:"))
                .mapToLong(l -> Long.parseLong(l.substring("used_memory:".length()).trim())).findFirst().orElseThrow();
    }

    private void errorsAt256(Map<String, String> table) throws Exception {
        LoadGenerator.Result result = load.run(idemkey.resolve("bench/guarded"), BODY, 256, Duration.ofSeconds(2),
                Duration.ofSeconds(10), this::uniqueKey);
        table.put("errors at 256 connections (0)", String.format("%d of %d requests (%.0f req/s, p99 %.1f ms)",
                result.errors(), result.requests() + result.errors(), result.throughput(), result.p99Millis()));
    }

    private void fingerprints(Map<String, String> table) throws Exception {
        System.out.println("fingerprint (JMH) ...");
        Collection<RunResult> runs = new Runner(new OptionsBuilder()
                .include(FingerprintBenchmark.class.getName())
                .forks(1).warmupIterations(3).warmupTime(TimeValue.seconds(1))
                .measurementIterations(5).measurementTime(TimeValue.seconds(1))
                .build()).run();
        StringBuilder figures = new StringBuilder();
        for (RunResult result : runs) {
            String bytes = result.getParams().getParam("bytes");
            figures.append(figures.length() == 0 ? "" : " / ")
                    .append(String.format("%s: %.3f ms", label(Integer.parseInt(bytes)), result.getPrimaryResult().getScore() / 1000));
        }
        table.put("fingerprint of a JSON body: 1 KB / 100 KB / 1 MB (100 KB ≤ 1 ms)", figures.toString());
    }

    private static String label(int bytes) {
        return bytes >= 1 << 20 ? (bytes >> 20) + " MB" : (bytes >> 10) + " KB";
    }

    private void print(Map<String, String> table) {
        System.out.printf("%nIdemkey benchmark, %s, %d cores, Java %s, Payara Micro 6.2025.10, Redis 7.0 on loopback%n%n"
                        + "| figure (target) | measured |%n| --- | --- |%n", LocalDate.now(),
                Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"));
        table.forEach((figure, value) -> System.out.printf("| %s | %s |%n", figure, value));
    }

    private void post(URI uri, String key) {
        try {
            client.send(HttpRequest.newBuilder(uri).header("Content-Type", "application/json").header("Idempotency-Key", key)
                    .POST(HttpRequest.BodyPublishers.ofString(BODY)).build(), HttpResponse.BodyHandlers.discarding());
        } catch (Exception e) {
            throw new IllegalStateException(e);
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

    private static Path war(Path directory, String name, Map<String, String> config) {
        Path file = directory.resolve(name + ".war");
        Deployments.guardedApp(name, config).as(ZipExporter.class).exportTo(file.toFile(), true);
        return file;
    }
}
