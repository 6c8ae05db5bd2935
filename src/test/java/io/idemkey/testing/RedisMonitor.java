package io.idemkey.testing;

import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisMonitor;
import redis.clients.jedis.exceptions.JedisConnectionException;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Records the commands clients send to a Redis server ({@code MONITOR}), leaving out those that
 * Lua scripts run inside the server: what is left is the round trips a client paid for.
 */
public final class RedisMonitor implements AutoCloseable {

    private final RedisServer server;
    private final Jedis connection;
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final Thread reader;

    private RedisMonitor(RedisServer server) {
        this.server = server;
        this.connection = server.client();
        CountDownLatch started = new CountDownLatch(1);
        this.reader = new Thread(() -> {
            try {
                connection.monitor(new JedisMonitor() {
                    @Override
                    public void onCommand(String command) {
                        lines.add(command);
                    }

                    @Override
                    public void proceed(redis.clients.jedis.Connection client) {
                        started.countDown();
                        super.proceed(client);
                    }
                });
            } catch (JedisConnectionException closed) {
                // close() ends the monitor by closing its connection
            }
        }, "redis-monitor");
        reader.setDaemon(true);
        reader.start();
        try {
            if (!started.await(5, TimeUnit.SECONDS)) {
                throw new IllegalStateException("MONITOR did not start");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        sync();
        lines.clear();
    }

    public static RedisMonitor start(RedisServer server) {
        return new RedisMonitor(server);
    }

    /**
     * The commands (lower case names) that clients sent since the last call, in order; waits until
     * every command sent before this call has been seen.
     */
    public List<String> takeClientCommands() {
        sync();
        List<String> commands = new ArrayList<>();
        for (String line : lines) {
            int bracket = line.indexOf('[');
            int close = line.indexOf(']', bracket);
            boolean fromScript = line.substring(bracket, close).contains("lua");
            int quote = line.indexOf('"', close);
            String name = line.substring(quote + 1, line.indexOf('"', quote + 1)).toLowerCase();
            if (!fromScript && !name.equals("echo")) {
                commands.add(name);
            }
        }
        lines.clear();
        return commands;
    }

    /** Sends a marker and waits until the monitor has seen it: everything before it has arrived. */
    private void sync() {
        String marker = "idemkey-monitor-" + UUID.randomUUID();
        try (Jedis jedis = server.client()) {
            jedis.echo(marker);
        }
        Instant deadline = Instant.now().plus(Duration.ofSeconds(5));
        while (lines.stream().noneMatch(l -> l.contains(marker))) {
            if (Instant.now().isAfter(deadline)) {
                throw new IllegalStateException("MONITOR did not see the marker");
            }
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        lines.removeIf(l -> l.contains(marker));
    }

    @Override
    public void close() {
        connection.disconnect();
        try {
            reader.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
