package io.idemkey.store.redis;

import redis.clients.jedis.Connection;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.providers.ClusterConnectionProvider;
import redis.clients.jedis.util.JedisClusterCRC16;

import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.stream.IntStream;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The masters of a Redis Cluster as a Jedis cluster client knows them (its slot cache), kept up to
 * date: Jedis asks the nodes for the slots again ({@code CLUSTER SLOTS}) after a MOVED, and here
 * also soon after a call got no answer (at most every {@link #MIN_INTERVAL}) and every period, on
 * the executor given (on a server, Idemkey's background pool), never on the caller's thread. Jedis on its own
 * asks again after a broken connection only when one call fails twice within its retry deadline,
 * and the store sets that deadline to the read timeout: a master that stops answering (a dead
 * host, a partition) times out once per call, and its slots would answer 503 until a restart,
 * long after its replica took over.
 */
final class ClusterMasters implements Masters {

    private static final Logger LOG = Logger.getLogger(ClusterMasters.class.getName());
    /** At most one refresh a call asked for per interval: a slot whose calls all fail at once does not flood the nodes. */
    static final Duration MIN_INTERVAL = Duration.ofMillis(250);

    private final ClusterConnectionProvider slots;
    private final ScheduledExecutorService background;
    private final ScheduledFuture<?> periodic;
    private final AtomicBoolean requested = new AtomicBoolean();
    private volatile long lastRefreshNanos = System.nanoTime() - MIN_INTERVAL.toNanos();
    private volatile boolean closed;

    ClusterMasters(ClusterConnectionProvider slots, ScheduledExecutorService background, Duration period) {
        this.slots = slots;
        this.background = background;
        long millis = Math.max(1, period.toMillis());
        this.periodic = background.scheduleWithFixedDelay(this::refresh, millis, millis, TimeUnit.MILLISECONDS);
    }

    @Override
    public HostAndPort masterOf(byte[] key) {
        return slots.getNode(JedisClusterCRC16.getSlot(key));
    }

    @Override
    public Connection connection(HostAndPort master) {
        return slots.getConnection(master);
    }

    /** The masters of the slots, as the slot cache has them now (the 16384 slots looked up, distinct). */
    @Override
    public List<HostAndPort> all() {
        return IntStream.range(0, 16384)
                .mapToObj(slots::getNode)
                .filter(Objects::nonNull)
                .distinct()
                .sorted(Comparator.comparing(HostAndPort::getHost).thenComparingInt(HostAndPort::getPort))
                .toList();
    }

    @Override
    public void moved(Connection connection) {
        slots.renewSlotCache(connection);
    }

    @Override
    public void unanswered() {
        if (closed || !requested.compareAndSet(false, true)) {
            return; // one is on its way
        }
        long wait = Math.max(0, lastRefreshNanos + MIN_INTERVAL.toNanos() - System.nanoTime());
        try {
            background.schedule(() -> {
                requested.set(false);
                refresh();
            }, wait, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException stopping) {
            requested.set(false);
        }
    }

    /**
     * Asks the nodes for the slots (Jedis tries its seed nodes, then the others it knows, each
     * within the connect and read timeouts; one refresh at a time).
     */
    private void refresh() {
        if (closed) {
            return;
        }
        lastRefreshNanos = System.nanoTime();
        try {
            slots.renewSlotCache();
        } catch (RuntimeException e) {
            LOG.log(Level.FINE, "Idemkey: asking the Redis Cluster for its slots failed", e);
        }
    }

    @Override
    public void close() {
        closed = true;
        periodic.cancel(false);
    }
}
