package io.idemkey.store.redis;

import redis.clients.jedis.ClientSetInfoConfig;
import redis.clients.jedis.ConnectionPool;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.RedisClusterClient;
import redis.clients.jedis.RedisSentinelClient;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.providers.ClusterConnectionProvider;
import redis.clients.jedis.providers.SentineledConnectionProvider;
import redis.clients.jedis.util.JedisURIHelper;
import redis.clients.jedis.util.Pool;

import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocketFactory;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;

/**
 * Where and how to reach Redis: parsed from a {@code redis://} or {@code rediss://} (TLS) URL, with
 * optional user and password (in the URL or given separately), timeouts and pool sizes; the
 * setters change these options and return them, for chaining. Not immutable, nor safe to change
 * from several threads: set them before a store opens on them, and leave them alone after, since
 * a store reads them as it opens and again each time it makes its client (until a node answers).
 * {@link #description()} never shows the password.
 */
public final class RedisStoreOptions {

    /** How Redis is deployed: one server, a master found through Sentinel, or a Redis Cluster. */
    public enum Mode { STANDALONE, SENTINEL, CLUSTER }

    private final HostAndPort address;
    private Mode mode = Mode.STANDALONE;
    private List<HostAndPort> nodes = List.of();
    private String sentinelMaster;
    private final boolean tls;
    private final String user;
    private final String password;
    private final int database;
    private Duration connectTimeout = Duration.ofSeconds(2);
    private Duration readTimeout = Duration.ofSeconds(2);
    private Duration poolMaxWait = Duration.ofSeconds(2);
    private int waitReplicas = 0;
    private Duration waitTimeout = Duration.ofMillis(100);
    private Duration topologyRefreshPeriod = Duration.ofSeconds(10);
    private int poolMaxTotal = 64;
    private int poolMinIdle = 0;
    private SSLSocketFactory sslSocketFactory;
    private boolean verifyHostname = true;
    private boolean coalesce = false;
    private Duration coalesceLinger = DEFAULT_COALESCE_LINGER;

    private RedisStoreOptions(HostAndPort address, boolean tls, String user, String password, int database) {
        this.address = address;
        this.tls = tls;
        this.user = user;
        this.password = password;
        this.database = database;
    }

    /**
     * @param url      {@code redis[s]://[[user]:password@]host[:port][/database]}
     * @param user     overrides the URL's user when not {@code null}
     * @param password overrides the URL's password when not {@code null}
     * @throws IllegalArgumentException if the URL is not a Redis URL (the message never holds the password)
     */
    public static RedisStoreOptions fromUrl(String url, String user, String password) {
        URI uri;
        try {
            uri = new URI(url.trim());
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("not a URL: " + e.getReason());
        }
        if (!"redis".equalsIgnoreCase(uri.getScheme()) && !"rediss".equalsIgnoreCase(uri.getScheme())) {
            throw new IllegalArgumentException("the scheme must be redis:// or rediss://, not " + uri.getScheme());
        }
        if (uri.getHost() == null || uri.getHost().isEmpty()) {
            throw new IllegalArgumentException(uri.getRawAuthority() == null || uri.getPort() != -1
                    ? "the URL has no host" : "the URL has no host, or a port that is not a number");
        }
        if (uri.getPort() != -1 && (uri.getPort() < 1 || uri.getPort() > 65535)) {
            throw new IllegalArgumentException("the port must be between 1 and 65535, not " + uri.getPort());
        }
        String path = uri.getPath();
        if (path != null && !path.isEmpty() && !path.equals("/") && !path.substring(1).matches("\\d{1,2}")) {
            throw new IllegalArgumentException("the path must be a database number such as /0, not " + path);
        }
        int port = uri.getPort() == -1 ? 6379 : uri.getPort();
        int database = JedisURIHelper.hasDbIndex(uri) ? JedisURIHelper.getDBIndex(uri) : 0;
        return new RedisStoreOptions(new HostAndPort(uri.getHost(), port),
                JedisURIHelper.isRedisSSLScheme(uri),
                user != null ? user : JedisURIHelper.getUser(uri),
                password != null ? password : JedisURIHelper.getPassword(uri),
                database);
    }

    public RedisStoreOptions connectTimeout(Duration timeout) {
        this.connectTimeout = positive(timeout, "connect timeout");
        return this;
    }

    public RedisStoreOptions readTimeout(Duration timeout) {
        this.readTimeout = positive(timeout, "read timeout");
        return this;
    }

    /** How long a request waits for a free pooled connection before the store counts as unavailable. */
    public RedisStoreOptions poolMaxWait(Duration wait) {
        this.poolMaxWait = positive(wait, "pool max wait");
        return this;
    }

    public RedisStoreOptions poolMaxTotal(int maxTotal) {
        if (maxTotal < 1) {
            throw new IllegalArgumentException("the pool needs at least one connection");
        }
        this.poolMaxTotal = maxTotal;
        return this;
    }

    public RedisStoreOptions poolMinIdle(int minIdle) {
        if (minIdle < 0) {
            throw new IllegalArgumentException("min idle must not be negative");
        }
        this.poolMinIdle = minIdle;
        return this;
    }

    /** The TLS socket factory for {@code rediss://} (a custom trust store); the JVM default otherwise. */
    public RedisStoreOptions sslSocketFactory(SSLSocketFactory factory) {
        this.sslSocketFactory = factory;
        return this;
    }

    /**
     * How many replicas must acknowledge a completion before it counts as done (Redis {@code WAIT},
     * sent with the completion: no extra round trip), so that a failover cannot forget it (default 0:
     * the master's acknowledgement only). A completion not acknowledged within {@code timeout} is
     * logged and counted, and still reported done: the response goes out.
     */
    public RedisStoreOptions waitReplicas(int replicas, Duration timeout) {
        if (replicas < 0) {
            throw new IllegalArgumentException("wait replicas must not be negative");
        }
        this.waitReplicas = replicas;
        this.waitTimeout = positive(timeout, "wait timeout");
        return this;
    }

    /**
     * How often a cluster client asks the nodes for the slots besides asking after a call that got
     * no answer (default 10 s): a failover no call noticed is followed within about this time.
     */
    public RedisStoreOptions topologyRefreshPeriod(Duration period) {
        this.topologyRefreshPeriod = positive(period, "topology refresh period");
        return this;
    }

    public Duration topologyRefreshPeriod() {
        return topologyRefreshPeriod;
    }

    public int waitReplicas() {
        return waitReplicas;
    }

    public Duration readTimeout() {
        return readTimeout;
    }

    public Duration waitTimeout() {
        return waitTimeout;
    }

    /**
     * Whether the store's calls that are ready at the same moment, from any requests, travel
     * together, one pipeline per master (default false: each call on a pooled connection of its
     * own). A lone call goes out at once either way; see {@link RedisIdempotencyStore}.
     */
    public RedisStoreOptions coalesce(boolean coalesce) {
        this.coalesce = coalesce;
        return this;
    }

    public boolean coalesce() {
        return coalesce;
    }

    /** The longest a batch of coalesced calls may wait for more ({@link #coalesceLinger(Duration)}). */
    public static final Duration MAX_COALESCE_LINGER = Duration.ofMillis(10);
    /** The default of {@link #coalesceLinger(Duration)}. */
    public static final Duration DEFAULT_COALESCE_LINGER = Duration.of(50, ChronoUnit.MICROS);

    /**
     * With {@link #coalesce(boolean)}, how long a batch waits for more calls before it goes out
     * once calls have been arriving together: only when its master's previous batch carried more
     * than one call, so one caller alone never waits, and after a burst at most one batch waits
     * before calls go out at once again. The calls that become ready meanwhile travel with it, and
     * Redis reads and answers them in one system call each instead of several (default 50 µs, which
     * the timer of Linux stretches to about 0.1 ms, and other systems' timers may stretch further;
     * zero: a batch goes out at once, with whatever is ready; at most 10 ms). A call that waits
     * waits about this long once per batch it travels in (twice if it arrives as a waiting batch
     * fills up, a rare case of 64 calls at once).
     */
    public RedisStoreOptions coalesceLinger(Duration linger) {
        Objects.requireNonNull(linger, "coalesce linger");
        if (linger.isNegative() || linger.compareTo(MAX_COALESCE_LINGER) > 0) {
            throw new IllegalArgumentException("coalesce linger must be between 0 and " + MAX_COALESCE_LINGER.toMillis() + " ms");
        }
        this.coalesceLinger = linger;
        return this;
    }

    public Duration coalesceLinger() {
        return coalesceLinger;
    }

    /** Whether a TLS server's certificate must name the host it is reached at (default true). */
    public RedisStoreOptions verifyHostname(boolean verify) {
        this.verifyHostname = verify;
        return this;
    }

    /**
     * Finds the master named {@code masterName} through these sentinels and follows it across
     * failovers. The URL's scheme (TLS), user, password and database apply to the master and its
     * replicas; its host and port are not used.
     */
    public RedisStoreOptions sentinel(String masterName, List<HostAndPort> sentinels) {
        if (masterName == null || masterName.isBlank()) {
            throw new IllegalArgumentException("the master's name is missing");
        }
        this.mode = Mode.SENTINEL;
        this.sentinelMaster = masterName.trim();
        this.nodes = nonEmpty(sentinels);
        return this;
    }

    /**
     * Talks to the Redis Cluster these seed nodes belong to (any of its masters or replicas). The
     * URL's scheme (TLS), user and password apply to every node; its host and port are not used,
     * and the database must be 0 (a cluster has no other).
     */
    public RedisStoreOptions cluster(List<HostAndPort> seeds) {
        if (database != 0) {
            throw new IllegalArgumentException("a Redis Cluster has database 0 only, not " + database);
        }
        this.mode = Mode.CLUSTER;
        this.nodes = nonEmpty(seeds);
        return this;
    }

    /**
     * {@code host:port} pairs separated by commas (IPv6 hosts in brackets), as in
     * {@code idempotency.redis.nodes}.
     *
     * @throws IllegalArgumentException naming the first pair that is not one
     */
    public static List<HostAndPort> parseNodes(String nodes) {
        List<HostAndPort> parsed = new ArrayList<>();
        for (String node : nodes.split(",")) {
            String trimmed = node.trim();
            if (trimmed.isEmpty()) {
                continue;
            }
            int colon = trimmed.lastIndexOf(':');
            String host = colon > 0 ? trimmed.substring(0, colon) : "";
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            int port;
            try {
                port = Integer.parseInt(trimmed.substring(colon + 1));
            } catch (NumberFormatException e) {
                port = -1;
            }
            if (host.isEmpty() || port < 1 || port > 65535) {
                throw new IllegalArgumentException("'" + trimmed + "' is not host:port with a port between 1 and 65535");
            }
            parsed.add(new HostAndPort(host, port));
        }
        return nonEmpty(parsed);
    }

    private static List<HostAndPort> nonEmpty(List<HostAndPort> nodes) {
        if (nodes == null || nodes.isEmpty()) {
            throw new IllegalArgumentException("no host:port given");
        }
        return List.copyOf(nodes);
    }

    public Mode mode() {
        return mode;
    }

    public boolean tls() {
        return tls;
    }

    public int poolMinIdle() {
        return poolMinIdle;
    }

    public int poolMaxTotal() {
        return poolMaxTotal;
    }

    /**
     * Where the store points, for messages and logs, without the password:
     * {@code redis[s]://[user@]host:port/db}, {@code redis[s]+sentinel://[user@]host:port,.../master/db}
     * or {@code redis[s]+cluster://[user@]host:port,...}.
     */
    public String description() {
        String scheme = (tls ? "rediss" : "redis") + switch (mode) {
            case STANDALONE -> "";
            case SENTINEL -> "+sentinel";
            case CLUSTER -> "+cluster";
        };
        String hosts = mode == Mode.STANDALONE ? hostAndPort(address)
                : String.join(",", nodes.stream().map(RedisStoreOptions::hostAndPort).toList());
        String path = switch (mode) {
            case STANDALONE -> "/" + database;
            case SENTINEL -> "/" + sentinelMaster + "/" + database;
            case CLUSTER -> "";
        };
        return scheme + "://" + (user != null ? user + "@" : "") + hosts + path;
    }

    private static String hostAndPort(HostAndPort node) {
        String host = node.getHost().contains(":") ? "[" + node.getHost() + "]" : node.getHost();
        return host + ":" + node.getPort();
    }

    /**
     * A Jedis client, and what the store does besides sending commands through it: pipelines on
     * connections to the masters of its own choosing ({@link Masters}), and dropping the idle
     * connections (after one turned out broken: Redis restarted, a proxy cut it).
     */
    record Connected(UnifiedJedis client, Masters masters, Runnable dropIdleConnections) implements AutoCloseable {
        @Override
        public void close() {
            try {
                masters.close();
            } finally {
                client.close();
            }
        }
    }

    /**
     * The Jedis client for the mode: {@link RedisClient} (one server), {@link RedisSentinelClient}
     * (asks the sentinels for the master, and follows it when they fail over) or
     * {@link RedisClusterClient} (routes each command to its slot's master, follows MOVED and ASK,
     * and tries again while a failover lasts, up to the read timeout; its slots asked for again on
     * {@code background} after a call got no answer and every {@link #topologyRefreshPeriod}). A
     * standalone client connects on its first command; the others ask their nodes for the topology
     * here, and throw if none answers. Each is built on a connection provider of its own making
     * where the store needs the provider.
     */
    Connected createClient(ScheduledExecutorService background) {
        JedisClientConfig client = clientConfig(true);
        switch (mode) {
            case STANDALONE -> {
                RedisClient standalone = RedisClient.builder().hostAndPort(address).clientConfig(client)
                        .poolConfig(poolConfig()).build();
                return new Connected(standalone, Masters.one(() -> address, () -> standalone.getPool().getResource()),
                        () -> standalone.getPool().clear());
            }
            case SENTINEL -> {
                SentineledConnectionProvider master = new SentineledConnectionProvider(sentinelMaster, client, poolConfig(),
                        Set.copyOf(nodes), clientConfig(false));
                RedisSentinelClient sentineled = RedisSentinelClient.builder().masterName(sentinelMaster)
                        .sentinels(Set.copyOf(nodes)).clientConfig(client).sentinelClientConfig(clientConfig(false))
                        .connectionProvider(master).build();
                return new Connected(sentineled, Masters.one(master::getCurrentMaster, master::getConnection),
                        () -> master.getConnectionMap().values().forEach(Pool::clear));
            }
            case CLUSTER -> {
                Objects.requireNonNull(background, "a cluster client needs an executor for its topology refreshes");
                ClusterConnectionProvider slots = new ClusterConnectionProvider(Set.copyOf(nodes), client, poolConfig());
                RedisClusterClient cluster = RedisClusterClient.builder().nodes(Set.copyOf(nodes)).clientConfig(client)
                        .connectionProvider(slots).maxTotalRetriesDuration(readTimeout).build();
                return new Connected(cluster, new ClusterMasters(slots, background, topologyRefreshPeriod),
                        () -> cluster.getClusterNodes().values().forEach(ConnectionPool::clear));
            }
            default -> throw new IllegalStateException("unknown mode " + mode);
        }
    }

    /** The connection settings: a data node's (with credentials and database), or a sentinel's (without). */
    private JedisClientConfig clientConfig(boolean dataNode) {
        DefaultJedisClientConfig.Builder client = DefaultJedisClientConfig.builder()
                .connectionTimeoutMillis(millis(connectTimeout))
                .socketTimeoutMillis(millis(readTimeout))
                .clientSetInfoConfig(ClientSetInfoConfig.DISABLED)
                .ssl(tls);
        if (dataNode) {
            client.database(database);
            if (user != null) {
                client.user(user);
            }
            if (password != null) {
                client.password(password);
            }
        }
        if (tls) {
            if (sslSocketFactory != null) {
                client.sslSocketFactory(sslSocketFactory);
            }
            if (verifyHostname) {
                SSLParameters parameters = new SSLParameters();
                parameters.setEndpointIdentificationAlgorithm("HTTPS");
                client.sslParameters(parameters);
            }
        }
        return client.build();
    }

    private ConnectionPoolConfig poolConfig() {
        ConnectionPoolConfig pool = new ConnectionPoolConfig();
        pool.setMaxTotal(poolMaxTotal);
        pool.setMaxIdle(poolMaxTotal);
        pool.setMinIdle(poolMinIdle);
        pool.setMaxWait(poolMaxWait);
        pool.setBlockWhenExhausted(true);
        pool.setTestOnBorrow(false);
        pool.setTestOnReturn(false);
        pool.setJmxEnabled(false);
        return pool;
    }

    private static int millis(Duration duration) {
        return (int) Math.min(Integer.MAX_VALUE, duration.toMillis());
    }

    private static Duration positive(Duration duration, String what) {
        Objects.requireNonNull(duration, what);
        if (duration.isNegative() || duration.isZero()) {
            throw new IllegalArgumentException(what + " must be positive");
        }
        return duration;
    }
}
