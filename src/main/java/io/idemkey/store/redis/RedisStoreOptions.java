package io.idemkey.store.redis;

import redis.clients.jedis.ClientSetInfoConfig;
import redis.clients.jedis.Connection;
import redis.clients.jedis.ConnectionPool;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.util.JedisURIHelper;
import redis.clients.jedis.util.Pool;

import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocketFactory;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.Objects;

/**
 * Where and how to reach Redis: parsed from a {@code redis://} or {@code rediss://} (TLS) URL, with
 * optional user and password (in the URL or given separately), timeouts and pool sizes. Immutable;
 * {@link #description()} never shows the password.
 */
public final class RedisStoreOptions {

    private final HostAndPort address;
    private final boolean tls;
    private final String user;
    private final String password;
    private final int database;
    private Duration connectTimeout = Duration.ofSeconds(2);
    private Duration readTimeout = Duration.ofSeconds(2);
    private Duration poolMaxWait = Duration.ofSeconds(2);
    private int poolMaxTotal = 64;
    private int poolMinIdle = 0;
    private SSLSocketFactory sslSocketFactory;
    private boolean verifyHostname = true;

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

    /** Whether a TLS server's certificate must name the host of the URL (default true). */
    public RedisStoreOptions verifyHostname(boolean verify) {
        this.verifyHostname = verify;
        return this;
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

    /** {@code redis[s]://[user@]host:port/db}: for messages and logs, without the password. */
    public String description() {
        return (tls ? "rediss://" : "redis://") + (user != null ? user + "@" : "")
                + address.getHost() + ":" + address.getPort() + "/" + database;
    }

    Pool<Connection> createPool() {
        DefaultJedisClientConfig.Builder client = DefaultJedisClientConfig.builder()
                .connectionTimeoutMillis(millis(connectTimeout))
                .socketTimeoutMillis(millis(readTimeout))
                .database(database)
                .clientSetInfoConfig(ClientSetInfoConfig.DISABLED)
                .ssl(tls);
        if (user != null) {
            client.user(user);
        }
        if (password != null) {
            client.password(password);
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
        ConnectionPoolConfig pool = new ConnectionPoolConfig();
        pool.setMaxTotal(poolMaxTotal);
        pool.setMaxIdle(poolMaxTotal);
        pool.setMinIdle(poolMinIdle);
        pool.setMaxWait(poolMaxWait);
        pool.setBlockWhenExhausted(true);
        pool.setTestOnBorrow(false);
        pool.setTestOnReturn(false);
        pool.setJmxEnabled(false);
        return new ConnectionPool(address, client.build(), pool);
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
