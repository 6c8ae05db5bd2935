package io.idemkey.testing;

import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisException;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.awaitility.Awaitility.await;

/**
 * Redis with automatic failover on loopback: one master, two replicas and three sentinels
 * ({@code redis-server --sentinel}, quorum 2, a master is down after 1 s without answering), all
 * real processes on free ports. A few seconds to start; share one per test class.
 */
public final class RedisSentinels implements AutoCloseable {

    public static final String MASTER_NAME = "idemkey-master";

    private final List<RedisServer> servers = new ArrayList<>();
    private final List<Process> sentinels = new ArrayList<>();
    private final List<Integer> sentinelPorts = new ArrayList<>();

    private RedisSentinels() {
    }

    public static RedisSentinels start() {
        RedisSentinels group = new RedisSentinels();
        try {
            RedisServer master = RedisServer.start();
            group.servers.add(master);
            for (int i = 0; i < 2; i++) {
                group.servers.add(RedisServer.start("--replicaof", "127.0.0.1", Integer.toString(master.port())));
            }
            for (int i = 0; i < 3; i++) {
                group.startSentinel(master.port());
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> group.sentinelsSee(master.port(), 2));
            return group;
        } catch (RuntimeException | Error e) {
            group.close();
            throw e;
        }
    }

    private void startSentinel(int masterPort) {
        int port = FreePort.next();
        try {
            Path directory = Files.createTempDirectory("idemkey-sentinel-");
            Path config = directory.resolve("sentinel.conf");
            Files.writeString(config, String.join("\n",
                    "port " + port,
                    "bind 127.0.0.1",
                    "dir " + directory,
                    "logfile " + directory.resolve("sentinel.log"),
                    "sentinel monitor " + MASTER_NAME + " 127.0.0.1 " + masterPort + " 2",
                    "sentinel down-after-milliseconds " + MASTER_NAME + " 1000",
                    "sentinel failover-timeout " + MASTER_NAME + " 10000",
                    "sentinel parallel-syncs " + MASTER_NAME + " 2",
                    ""));
            Process process = new ProcessBuilder("redis-server", config.toString(), "--sentinel")
                    .redirectErrorStream(true).redirectOutput(directory.resolve("stdout.log").toFile()).start();
            sentinels.add(process);
            sentinelPorts.add(port);
            Runtime.getRuntime().addShutdownHook(new Thread(process::destroyForcibly));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start redis-server --sentinel", e);
        }
    }

    /** Every sentinel names {@code masterPort} as the master and knows {@code replicas} replicas of it. */
    private boolean sentinelsSee(int masterPort, int replicas) {
        for (int port : sentinelPorts) {
            try (Jedis sentinel = new Jedis("127.0.0.1", port)) {
                List<String> address = sentinel.sentinelGetMasterAddrByName(MASTER_NAME);
                if (address.size() != 2 || Integer.parseInt(address.get(1)) != masterPort
                        || sentinel.sentinelReplicas(MASTER_NAME).size() < replicas) {
                    return false;
                }
            } catch (JedisException notYet) {
                return false;
            }
        }
        return true;
    }

    /** The sentinels, as {@code idempotency.redis.nodes} lists them. */
    public List<HostAndPort> sentinels() {
        return sentinelPorts.stream().map(port -> new HostAndPort("127.0.0.1", port)).toList();
    }

    /** The server that is master now, as the first sentinel says. */
    public RedisServer master() {
        try (Jedis sentinel = new Jedis("127.0.0.1", sentinelPorts.get(0))) {
            int port = Integer.parseInt(sentinel.sentinelGetMasterAddrByName(MASTER_NAME).get(1));
            return servers.stream().filter(s -> s.port() == port).findFirst().orElseThrow();
        }
    }

    /** The running servers that are not the master now. */
    public List<RedisServer> replicas() {
        RedisServer master = master();
        return servers.stream().filter(s -> s != master && s.answers()).toList();
    }

    /**
     * Kills the master (no shutdown, no save) and waits until the sentinels have promoted a replica
     * and every sentinel names it; returns the new master.
     */
    public RedisServer killMasterAndAwaitFailover() {
        RedisServer old = master();
        old.stop();
        return awaitFailover(old);
    }

    /**
     * Makes the master vanish without a TCP reset ({@link RedisServer#vanish}: a dead host, a
     * partition) and waits until the sentinels have promoted a replica and every sentinel names
     * it; returns the new master. The old one stays frozen until the test resumes it.
     */
    public RedisServer vanishMasterAndAwaitFailover() {
        RedisServer old = master();
        old.vanish();
        return awaitFailover(old);
    }

    /** Freezes every sentinel ({@code SIGSTOP}): they keep their connections and answer nothing until {@link #resumeSentinels}. */
    public void freezeSentinels() {
        sentinels.forEach(sentinel -> signal(sentinel, "STOP"));
    }

    public void resumeSentinels() {
        sentinels.forEach(sentinel -> signal(sentinel, "CONT"));
    }

    private static void signal(Process process, String signal) {
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

    /** Waits until the sentinels have promoted a replica in place of {@code old} and every one names it. */
    public RedisServer awaitFailover(RedisServer old) {
        await().atMost(Duration.ofSeconds(60)).until(() -> newMaster(old).isPresent());
        return newMaster(old).orElseThrow();
    }

    private Optional<RedisServer> newMaster(RedisServer old) {
        RedisServer now;
        try {
            now = master();
        } catch (JedisException notYet) {
            return Optional.empty();
        }
        if (now == old || !now.answers()) {
            return Optional.empty();
        }
        for (int port : sentinelPorts) {
            try (Jedis sentinel = new Jedis("127.0.0.1", port)) {
                if (Integer.parseInt(sentinel.sentinelGetMasterAddrByName(MASTER_NAME).get(1)) != now.port()) {
                    return Optional.empty();
                }
            }
        }
        try (Jedis jedis = now.client()) {
            return jedis.info("replication").contains("role:master") ? Optional.of(now) : Optional.empty();
        }
    }

    @Override
    public void close() {
        sentinels.forEach(Process::destroyForcibly);
        servers.forEach(RedisServer::stop);
    }
}
