package io.idemkey.testing;

import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.awaitility.Awaitility.await;

/**
 * A private {@code redis-server} process on a free loopback port, for tests that must talk to a real
 * Redis and be able to take it away (outages) and bring it back on the same port. Never the
 * machine's own Redis.
 */
public final class RedisServer implements AutoCloseable {

    /**
     * The Valkey (8.1 or later: {@code SET ... IFEQ}) the tests start: the one
     * it-tests/install-prerequisites builds for them where the machine has none, else
     * {@code valkey-server} on the PATH.
     */
    public static final String VALKEY = Files.isExecutable(Path.of("/usr/local/libexec/idemkey/valkey-server"))
            ? "/usr/local/libexec/idemkey/valkey-server" : "valkey-server";
    /** Where it-tests/install-prerequisites installs the Redis 8.4 or later the tests start ({@link #redis8()}). */
    private static final Path REDIS_8 = Path.of("/usr/local/libexec/idemkey/redis-server");
    private static final Pattern VALKEY_VERSION = Pattern.compile("(?m)^valkey_version:(\\d+)\\.(\\d+)");
    private static final Pattern REDIS_VERSION = Pattern.compile("(?m)^redis_version:(\\d+)\\.(\\d+)");
    /** {@link #redis8()}'s path once its version passed the check; null before. */
    private static volatile String redis8Checked;
    private final String executable;
    private final Host host;
    private final int port;
    private final Path directory;
    private List<String> extraArguments;
    private Process process;
    private final List<Socket> fillers = new ArrayList<>();
    private volatile boolean frozen;
    /** {@link #hasConditionalSet()} once asked; null before. */
    private volatile Boolean conditionalSet;

    private RedisServer(String executable, Host host, int port, List<String> extraArguments) {
        this.executable = executable;
        this.host = host;
        this.port = port;
        this.extraArguments = List.copyOf(extraArguments);
        try {
            this.directory = Files.createTempDirectory("idemkey-redis-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Starts a new server on a free port, with persistence off. */
    public static RedisServer start(String... extraArguments) {
        return startOn(Host.LOOPBACK, extraArguments);
    }

    /** Starts a new server on {@code host} (a network namespace of the benchmark's, say), with persistence off. */
    public static RedisServer startOn(Host host, String... extraArguments) {
        return start(defaultProgram(), host, extraArguments);
    }

    /**
     * The program {@link #start} runs, as the benchmark names it in its header: {@code redis-server},
     * or another that speaks its protocol and takes its options ({@code -Didemkey.redisServer=valkey}:
     * {@link #VALKEY}, the benchmark on Valkey; {@code redis8}: {@link #redis8()}). Looked up on each
     * call, not in a static initialiser: with {@code redis8} and no Redis 8.4, each caller gets
     * {@link #redis8()}'s message, not the first an {@code ExceptionInInitializerError} and the rest
     * a {@code NoClassDefFoundError}.
     */
    public static String defaultProgram() {
        return program(System.getProperty("idemkey.redisServer", "redis-server"));
    }

    /**
     * The program a name stands for: {@code valkey} is {@link #VALKEY}, {@code redis8}
     * {@link #redis8()}, blank {@code redis-server}, any other name or path itself.
     */
    private static String program(String name) {
        return switch (name.strip()) {
            case "" -> "redis-server";
            case "valkey" -> VALKEY;
            case "redis8" -> redis8();
            default -> name.strip();
        };
    }

    /**
     * The Redis 8.4 or later ({@code SET ... IFEQ}; the machine's {@code redis-server} is 7) the
     * tests start: the one it-tests/install-prerequisites builds for them; where it is missing or
     * older, an error that says so, not a test that meets a Redis without {@code IFEQ}.
     */
    public static String redis8() {
        String checked = redis8Checked;
        if (checked == null) {
            checked = checkedRedis8(); // throws where it is missing or older, each time it is asked for
            redis8Checked = checked;
        }
        return checked;
    }

    /** {@link #redis8()}'s check: runs {@code redis-server --version} once a JVM, not before each server it starts. */
    private static String checkedRedis8() {
        String program = REDIS_8.toString();
        String version = Files.exists(REDIS_8) ? "a file that is not executable" : "none";
        if (Files.isExecutable(REDIS_8)) {
            try {
                Process process = new ProcessBuilder(program, "--version").redirectErrorStream(true).start();
                String text = new String(process.getInputStream().readAllBytes());
                process.waitFor();
                Matcher v = Pattern.compile(" v=(\\d+)\\.(\\d+)").matcher(text);
                if (v.find() && atLeast(v, 8, 4)) {
                    return program;
                }
                version = text.strip();
            } catch (IOException e) {
                version = e.toString();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        throw new IllegalStateException("no Redis 8.4 or later (SET ... IFEQ) at " + program + " (found: " + version
                + "): it-tests/install-prerequisites builds one there");
    }

    /** Whether a matched version (groups 1 and 2: major and minor) is {@code major.minor} or later. */
    private static boolean atLeast(Matcher version, int major, int minor) {
        int found = Integer.parseInt(version.group(1));
        return found > major || found == major && Integer.parseInt(version.group(2)) >= minor;
    }

    /** Starts {@code program} (a Redis server: {@code redis-server}, {@link #VALKEY}, {@link #redis8()}) on a free port, with persistence off. */
    public static RedisServer startProgram(String program, String... extraArguments) {
        return start(program, Host.LOOPBACK, extraArguments);
    }

    private static RedisServer start(String executable, Host host, String... extraArguments) {
        RedisServer server = new RedisServer(executable, host, FreePort.next(), List.of(extraArguments));
        server.startProcess();
        Runtime.getRuntime().addShutdownHook(new Thread(server::stop));
        return server;
    }

    public int port() {
        return port;
    }

    public String url() {
        return "redis://" + host.address() + ":" + port;
    }

    /** The server's process id, for its CPU time ({@code /proc/<pid>/stat}). */
    public long pid() {
        return process.pid();
    }

    public boolean isRunning() {
        return process != null && process.isAlive();
    }

    /** Running and not frozen: it answers. */
    public boolean answers() {
        return isRunning() && !frozen;
    }

    /** Kills the server (as an outage would): every connection drops, all data is gone. */
    public synchronized void stop() {
        fillers.forEach(RedisServer::closeQuietly);
        fillers.clear();
        if (process != null) {
            process.destroyForcibly();
            try {
                process.waitFor();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            process = null;
            frozen = false;
        }
    }

    /**
     * Starts the server again on the same port (empty, as after a restart without persistence;
     * with its append-only file read back when it has one), once it answers PING: its data loaded.
     */
    public synchronized void restart() {
        keepRole();
        stop();
        startProcess();
        awaitLoaded();
    }

    /**
     * A replica promoted by a failover restarts as a master, as the configuration file Sentinel or
     * the cluster rewrote would have it: its {@code --replicaof} is dropped.
     */
    private void keepRole() {
        int replicaOf = extraArguments.indexOf("--replicaof");
        if (replicaOf >= 0 && isRunning()) {
            try (Jedis jedis = client()) {
                if (jedis.info("replication").contains("role:master")) {
                    List<String> arguments = new ArrayList<>(extraArguments);
                    arguments.subList(replicaOf, replicaOf + 3).clear();
                    extraArguments = List.copyOf(arguments);
                }
            }
        }
    }

    /** {@link #restart}, returning as soon as the server answers at all, {@code -LOADING} included. */
    public synchronized void restartWithoutWaitingForItsData() {
        stop();
        startProcess();
    }

    private void awaitLoaded() {
        Instant deadline = Instant.now().plus(Duration.ofSeconds(60));
        while (Instant.now().isBefore(deadline)) {
            try (Jedis jedis = client()) {
                jedis.ping();
                return;
            } catch (JedisDataException e) {
                if (!String.valueOf(e.getMessage()).startsWith("LOADING")) {
                    return; // NOAUTH and the like: up, and it wants credentials
                }
                pause();
            }
        }
        throw new IllegalStateException("redis-server on port " + port + " still loading its data after 60 s");
    }

    /** Freezes the server ({@code SIGSTOP}): it keeps its connections but answers nothing until {@link #resume}. */
    public synchronized void freeze() {
        signal("STOP");
        frozen = true;
    }

    /**
     * Makes the server behave as a host that vanished without a TCP reset (a dead machine, a
     * partition): frozen ({@code SIGSTOP}), and its accept queue filled with connections of this
     * test's, so that what its clients had sent is never answered and a new connection is not even
     * accepted (the kernel drops its SYNs: a connect timeout), until {@link #resume}.
     */
    public synchronized void vanish() {
        freeze();
        for (int i = 0; i < 10_000; i++) {
            Socket filler = new Socket();
            try {
                filler.connect(new InetSocketAddress(host.address(), port), 200);
                fillers.add(filler);
            } catch (IOException full) { // SocketTimeoutException: the queue is full
                closeQuietly(filler);
                return;
            }
        }
        throw new IllegalStateException("the accept queue of port " + port + " never filled");
    }

    /** Lets a frozen (or vanished) server go on ({@code SIGCONT}). */
    public synchronized void resume() {
        fillers.forEach(RedisServer::closeQuietly);
        fillers.clear();
        signal("CONT");
        frozen = false;
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // a test's own filler connection
        }
    }

    private void signal(String signal) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).inheritIO().start();
            if (kill.waitFor() != 0) {
                throw new IllegalStateException("kill -" + signal + " failed");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** A new, single-threaded client for assertions; close it. */
    public Jedis client() {
        return new Jedis(host.address(), port);
    }

    /**
     * Whether this server has {@code SET ... IFEQ} (Valkey from 8.1, Redis from 8.4), read off the
     * version its {@code INFO server} reports, not off what the store makes of its replies. The tests
     * that run on the machine's {@code redis-server} (7.0 on Debian 12) expect the record script or
     * the plain command by this, so that they hold on a machine whose Redis is 8.4 or later too.
     */
    public boolean hasConditionalSet() {
        Boolean known = conditionalSet;
        if (known == null) { // asked once: a restart runs the same program
            try (Jedis jedis = client()) {
                String info = jedis.info("server");
                Matcher valkey = VALKEY_VERSION.matcher(info);
                Matcher redis = REDIS_VERSION.matcher(info);
                // Valkey reports redis_version:7.2.4 too, for its clients
                known = valkey.find() ? atLeast(valkey, 8, 1) : redis.find() && atLeast(redis, 8, 4);
            }
            conditionalSet = known;
        }
        return known;
    }

    /** Calls per command since the last {@link #resetStats()}, from {@code INFO commandstats}. */
    public Map<String, Long> commandCalls() {
        try (Jedis jedis = client()) {
            Map<String, Long> calls = new LinkedHashMap<>();
            for (String line : jedis.info("commandstats").split("\r?\n")) {
                if (line.startsWith("cmdstat_")) {
                    String command = line.substring("cmdstat_".length(), line.indexOf(':'));
                    String stats = line.substring(line.indexOf(':') + 1);
                    long count = Long.parseLong(stats.substring(stats.indexOf("calls=") + 6, stats.indexOf(',')));
                    calls.put(command, count);
                }
            }
            return calls;
        }
    }

    /** Commands refused before they ran (a cluster's redirections, ...) since the last {@link #resetStats()}. */
    public long rejectedCalls() {
        try (Jedis jedis = client()) {
            long rejected = 0;
            for (String line : jedis.info("commandstats").split("\r?\n")) {
                int at = line.indexOf("rejected_calls=");
                if (line.startsWith("cmdstat_") && at >= 0) {
                    int end = line.indexOf(',', at);
                    rejected += Long.parseLong(line.substring(at + "rejected_calls=".length(), end < 0 ? line.length() : end));
                }
            }
            return rejected;
        }
    }

    /**
     * How often the server has read from a client socket ({@code INFO stats}), asked on {@code stats}:
     * one per round trip, at least, this INFO's own included.
     */
    public static long socketReads(Jedis stats) {
        return infoField(stats.info("stats"), "total_reads_processed");
    }

    /** How many bytes the server has written to its clients in all ({@code INFO stats}), asked on {@code stats}. */
    public static long bytesSent(Jedis stats) {
        return infoField(stats.info("stats"), "total_net_output_bytes");
    }

    /** How far this server is in its replication stream: written (a master) or processed (a replica). */
    public long replicationOffset() {
        try (Jedis jedis = client()) {
            return infoField(jedis.info("replication"), "master_repl_offset");
        }
    }

    /** Waits (up to 30 s) until each of {@code replicas} has processed everything this master has written so far. */
    public void awaitReplicated(List<RedisServer> replicas) {
        long written = replicationOffset();
        for (RedisServer replica : replicas) {
            await("replica on port " + replica.port() + " caught up with port " + port).atMost(Duration.ofSeconds(30))
                    .until(() -> replica.replicationOffset() >= written);
        }
    }

    /**
     * Waits (up to 10 s) until this master has heard its first replica acknowledge everything written
     * so far: from then on a {@code WAIT} counts it (a replica's link is up before that).
     */
    public void awaitAcknowledgedByReplica() {
        long written = replicationOffset();
        await("replica of port " + port + " acknowledged offset " + written).atMost(Duration.ofSeconds(10))
                .until(() -> acknowledgedByReplica() >= written);
    }

    /** How far this master's first replica has acknowledged its replication stream, as the master last heard; -1 without one. */
    public long acknowledgedByReplica() {
        try (Jedis jedis = client()) {
            return jedis.info("replication").lines().filter(line -> line.startsWith("slave0:")).findFirst()
                    .map(line -> Long.parseLong(line.replaceAll(".*,offset=(\\d+),.*", "$1"))).orElse(-1L);
        }
    }

    private static long infoField(String info, String name) {
        for (String line : info.split("\r?\n")) {
            if (line.startsWith(name + ":")) {
                return Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        throw new IllegalStateException("no " + name + " in INFO");
    }

    public void resetStats() {
        try (Jedis jedis = client()) {
            jedis.configResetStat();
        }
    }

    @Override
    public void close() {
        stop();
    }

    private synchronized void startProcess() {
        List<String> command = new ArrayList<>(List.of(executable,
                "--port", Integer.toString(port), "--bind", host.address(), "--protected-mode", "no",
                "--save", "", "--appendonly", "no", "--dir", directory.toString(),
                "--logfile", directory.resolve("redis.log").toString(),
                // a replica's full sync starts at once: a master waits 5 s by default for more replicas to share it
                "--repl-diskless-sync-delay", "0"));
        command.addAll(extraArguments);
        try {
            process = new ProcessBuilder(host.command(command)).redirectErrorStream(true)
                    .redirectOutput(directory.resolve("stdout.log").toFile()).start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + executable + " (is it installed? it-tests/install-prerequisites)", e);
        }
        awaitReady();
    }

    private void awaitReady() {
        Instant deadline = Instant.now().plus(Duration.ofSeconds(10));
        while (Instant.now().isBefore(deadline)) {
            if (!process.isAlive()) {
                throw new IllegalStateException(executable + " exited; see " + directory);
            }
            try (Jedis jedis = client()) {
                if ("PONG".equals(jedis.ping())) {
                    return;
                }
            } catch (JedisConnectionException notYet) {
                pause();
            } catch (JedisDataException answered) {
                return; // NOAUTH and the like: the server is up, it wants credentials
            }
        }
        throw new IllegalStateException("redis-server did not answer on port " + port + " within 10 s");
    }

    private static void pause() {
        try {
            Thread.sleep(20);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
