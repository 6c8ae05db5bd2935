package io.idemkey.model;

import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

/**
 * The record protocol, model-checked with spin ({@code model/idemkey.pml}, run by
 * {@code model/verify}): the real protocol keeps every invariant in every interleaving of the
 * small configurations, and each seeded bug is caught with a trail. And the model stays the
 * code's: it records the revision of every script and statement it models.
 *
 * <p>Runs after every other class of the run ({@code junit-platform.properties} orders classes by
 * {@link Order}) when they run in one request, as surefire's one fork runs them, while
 * {@link ModelChecksEarly} has started the checks when the run began.
 */
@Order(Integer.MAX_VALUE)
class ProtocolModelTest {

    private static final Path MODEL = Path.of("model", "idemkey.pml");
    private static final Path VERIFY = Path.of("model", "verify");
    private static final Path LUA = Path.of("src/main/resources/io/idemkey/store/redis/record.lua");
    /** The JDBC store's statements, one class per database. */
    private static final List<Path> JDBC_DIALECTS = List.of(
            Path.of("src/main/java/io/idemkey/store/jdbc/PostgresDialect.java"),
            Path.of("src/main/java/io/idemkey/store/jdbc/MariaDbDialect.java"));
    private static final Pattern REVISION = Pattern.compile("revision (\\S+) sha256:(\\p{XDigit}{16})");
    private static final Pattern STATEMENT = Pattern.compile("(?:this\\.|String )(\\w+) = \"\"\"(.*?)\"\"\"", Pattern.DOTALL);

    /** The small configurations (2 servers, 2 clients, one of them retrying): every interleaving, one kind of failure each. */
    private static final String CRASH = "-DLOCK=1 -DMAXFAULT=0";
    private static final String FAULT = "-DLOCK=1 -DMAXCRASH=0";

    /** The test that runs the checks, which {@link ModelChecksEarly} looks for in a run's plan. */
    static final String CHECKS_METHOD = "protocolKeepsEveryInvariantAndEachSeededBugIsCaught";
    /** The checks, once started ({@link #startChecks}). */
    private static List<Map.Entry<Check, Future<Result>>> started;
    /** The checks' processes still running: destroyed, with what they started, when the JVM exits. */
    private static final Set<Process> RUNNING = ConcurrentHashMap.newKeySet();

    @Test
    void modelRecordsTheRevisionOfEveryScriptAndStatementItModels() throws IOException {
        Map<String, String> code = new TreeMap<>();
        code.put("record.lua", revision(Files.readString(LUA).replaceAll("--[^\n]*", "")));
        for (Path dialect : JDBC_DIALECTS) {
            String name = dialect.getFileName().toString().replace(".java", "");
            Matcher statement = STATEMENT.matcher(Files.readString(dialect));
            while (statement.find()) {
                code.put(name + "." + statement.group(1), revision(statement.group(2)));
            }
        }
        Map<String, String> model = new TreeMap<>();
        Matcher recorded = REVISION.matcher(Files.readString(MODEL));
        while (recorded.find()) {
            model.put(recorded.group(1), recorded.group(2));
        }
        assertEquals(code, model, () -> "The code the model describes changed (or the model's list did): review the"
                + " matching lua_*/sql_* operations in " + MODEL + " against the code, run model/verify, then record"
                + " these lines in its header:\n" + code.entrySet().stream()
                .map(e -> " *   revision " + e.getKey() + " sha256:" + e.getValue()).collect(Collectors.joining("\n")));
    }

    /** The configurations to check, each with what it must show. */
    private static List<Check> checks() {
        List<Check> checks = new ArrayList<>(List.of(
                Check.holds("Redis: fencing, records, answers, effects beyond the window, across a crash", CRASH),
                Check.holds("Redis: the same across a failed store call", FAULT),
                Check.holds("JDBC in the transaction: effects exactly once, across a crash", CRASH + " -DJDBC"),
                Check.holds("JDBC in the transaction: the same across a failed store call", FAULT + " -DJDBC"),
                Check.holds("JDBC recorded after the commit: as Redis, across a crash", CRASH + " -DJDBC -DNOT_JOINED"),
                Check.holds("JDBC recorded after the commit: across a failed store call", FAULT + " -DJDBC -DNOT_JOINED"),
                Check.holds("Redis: a crashed owner's key is freed again", "--liveness " + CRASH),
                Check.holds("JDBC: a crashed owner's key is freed again", "--liveness " + CRASH + " -DJDBC"),
                Check.holds("Redis, bounded: both clients retry, a crash and a failed call, lock TTL 2 ticks",
                        "--bitstate -DLOCK=2 -DOTHER_TRIES=2"),
                Check.holds("JDBC, bounded: both clients retry, a crash and a failed call, lock TTL 2 ticks",
                        "--bitstate -DLOCK=2 -DOTHER_TRIES=2 -DJDBC"),
                Check.violated("Redis: demanding effects once finds the window, and only it", CRASH + " -DSTRICT_ONCE",
                        "lost by its owner", "assert((effects<=1))"),
                Check.violated("JDBC after the commit: demanding effects once finds the window",
                        CRASH + " -DJDBC -DNOT_JOINED -DSTRICT_ONCE", "lost by its owner", "assert((effects<=1))"),
                Check.violated("seeded: a lease that never expires keeps a crashed owner's key",
                        "--liveness " + CRASH + " -DBUG_LEASE_NEVER_EXPIRES", "crashed", "START OF CYCLE")));
        for (String store : List.of("", " -DJDBC")) {
            String name = store.isEmpty() ? "Redis" : "JDBC";
            checks.add(Check.violated("seeded (" + name + "): complete without the owner check",
                    CRASH + store + " -DBUG_COMPLETE_NO_OWNER", "completes", "assert((t==holder))"));
            checks.add(Check.violated("seeded (" + name + "): renew without the owner check",
                    CRASH + store + " -DBUG_RENEW_NO_OWNER", "renews", "assert((t==holder))"));
            checks.add(Check.violated("seeded (" + name + "): acquire as GET, then SET",
                    CRASH + store + " -DBUG_ACQUIRE_GET_SET", "acquired", "assertion violated"));
        }
        checks.add(Check.violated("seeded (JDBC), without the fencing assertions: complete without the owner check runs"
                + " the effect twice", CRASH + " -DJDBC -DNO_FENCING_CHECK -DBUG_COMPLETE_NO_OWNER", "committed execution 3",
                "assert(!(!((effects<=1))))"));
        checks.add(Check.violated("seeded (JDBC), without the fencing assertions: acquire as GET, then SET runs the"
                + " effect twice", CRASH + " -DJDBC -DNO_FENCING_CHECK -DBUG_ACQUIRE_GET_SET", "committed execution 3",
                "assert(!(!((effects<=1))))"));
        return checks;
    }

    /**
     * Starts every check, at most two at once, at the lowest CPU priority ({@code nice -n 19}), unless
     * started already: {@link ModelChecksEarly} starts them as the test run begins, so that spin uses
     * what the other tests leave of the CPU while they wait on their stores, and this class, which
     * runs last, mostly collects the results.
     */
    static synchronized List<Map.Entry<Check, Future<Result>>> startChecks() {
        if (started == null) {
            Runtime.getRuntime().addShutdownHook(new Thread(() -> RUNNING.forEach(process -> {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
            }), "model-check-stop"));
            ExecutorService pool = Executors.newFixedThreadPool(2, runnable -> {
                Thread thread = new Thread(runnable, "model-check");
                thread.setDaemon(true);
                return thread;
            });
            started = checks().stream().map(check -> Map.entry(check, pool.submit(check::run))).toList();
            pool.shutdown();
        }
        return started;
    }

    @TestFactory
    Stream<DynamicTest> protocolKeepsEveryInvariantAndEachSeededBugIsCaught() { // named by CHECKS_METHOD
        return startChecks().stream().map(running -> dynamicTest(running.getKey().name(), () -> {
            Check check = running.getKey();
            Result result = running.getValue().get(20, TimeUnit.MINUTES);
            assertEquals(0, result.exitCode(), () -> "model/verify " + check.arguments() + " failed:\n" + result.output());
            for (String expected : check.inTrail()) {
                assertTrue(result.output().contains(expected),
                        () -> "the trail should show \"" + expected + "\":\n" + result.output());
            }
            System.out.print(result.output());
        }));
    }

    private static String revision(String text) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256")
                    .digest(text.strip().replaceAll("\\s+", " ").getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

    private record Result(int exitCode, String output) {
    }

    /** One run of model/verify: the properties must hold, or (a seeded bug) be violated with a trail. */
    private record Check(String name, String arguments, boolean violation, List<String> inTrail) {

        static Check holds(String name, String arguments) {
            return new Check(name, arguments, false, List.of("errors: 0"));
        }

        static Check violated(String name, String arguments, String... inTrail) {
            return new Check(name, arguments, true, List.of(inTrail));
        }

        Result run() throws IOException, InterruptedException {
            List<String> command = new ArrayList<>(List.of("nice", "-n", "19", "bash", VERIFY.toString()));
            if (violation) {
                command.add("--expect-violation");
            }
            command.addAll(List.of(arguments.split(" ")));
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            RUNNING.add(process);
            try {
                String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                return new Result(process.waitFor(), output);
            } finally {
                RUNNING.remove(process);
            }
        }
    }
}
