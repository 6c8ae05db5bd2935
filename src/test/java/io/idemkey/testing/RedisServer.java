package io.idemkey.testing;

import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A private {@code redis-server} process on a free loopback port, for tests that must talk to a real
 * Redis and be able to take it away (outages) and bring it back on the same port. Never the
 * machine's own Redis.
 */
public final class RedisServer implements AutoCloseable {

    private final int port;
    private final Path directory;
    private final List<String> extraArguments;
    private Process process;

    private RedisServer(int port, List<String> extraArguments) {
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
        RedisServer server = new RedisServer(FreePort.next(), List.of(extraArguments));
        server.startProcess();
        Runtime.getRuntime().addShutdownHook(new Thread(server::stop));
        return server;
    }

    public int port() {
        return port;
    }

    public String url() {
        return "redis://127.0.0.1:" + port;
    }

    public boolean isRunning() {
        return process != null && process.isAlive();
    }

    /** Kills the server (as an outage would): every connection drops, all data is gone. */
    public synchronized void stop() {
        if (process != null) {
            process.destroyForcibly();
            try {
                process.waitFor();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            process = null;
        }
    }

    /**
     * Starts the server again on the same port (empty, as after a restart without persistence;
     * with its append-only file read back when it has one), once it answers PING: its data loaded.
     */
    public synchronized void restart() {
        stop();
        startProcess();
        awaitLoaded();
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
    }

    /** Lets a frozen server go on ({@code SIGCONT}). */
    public synchronized void resume() {
        signal("CONT");
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
        return new Jedis("127.0.0.1", port);
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

    /** How far this server is in its replication stream: written (a master) or processed (a replica). */
    public long replicationOffset() {
        try (Jedis jedis = client()) {
            for (String line : jedis.info("replication").split("\r?\n")) {
                if (line.startsWith("master_repl_offset:")) {
                    return Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                }
            }
        }
        throw new IllegalStateException("no master_repl_offset in INFO replication");
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
        List<String> command = new ArrayList<>(List.of("redis-server",
                "--port", Integer.toString(port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--dir", directory.toString(),
                "--logfile", directory.resolve("redis.log").toString()));
        command.addAll(extraArguments);
        try {
            process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(directory.resolve("stdout.log").toFile()).start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start redis-server (is it installed?)", e);
        }
        awaitReady();
    }

    private void awaitReady() {
        Instant deadline = Instant.now().plus(Duration.ofSeconds(10));
        while (Instant.now().isBefore(deadline)) {
            if (!process.isAlive()) {
                throw new IllegalStateException("redis-server exited; see " + directory);
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
