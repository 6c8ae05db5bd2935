package io.idemkey.it.app;

import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;
import redis.clients.jedis.ClientSetInfoConfig;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.RedisClient;

import java.net.URI;
import java.time.Duration;

/**
 * The benchmark's floor ({@link BenchResource}'s round-trip endpoints): Redis round trips with
 * nothing of Idemkey's, on a Jedis client of the deployment's Redis set up as the store's defaults
 * on one server are (a pool of up to 64 connections, none tested when borrowed, a borrower waiting
 * at most 2 s; the deployment's connect and read timeouts; no {@code CLIENT SETINFO}; no user,
 * password, database or TLS, of which the benchmark's Redis has none). Each round trip is a
 * {@code GET} of a key nobody writes, the cheapest command there is, so no store that waits for
 * its replies can spend less per round trip. The client is made on the first call and kept for
 * the JVM's life (only the benchmark calls it, on a server it stops at the end). A class apart so
 * that the JDBC-only test application, which carries no Jedis, leaves it out.
 */
public final class PlainRedis {

    private static final String KEY = "bench:floor";
    private static volatile RedisClient client;

    private PlainRedis() {
    }

    /** Sends {@code count} GETs, one after the other, each waiting for its reply. */
    static void roundTrips(int count) {
        RedisClient redis = client();
        for (int i = 0; i < count; i++) {
            redis.get(KEY);
        }
    }

    private static RedisClient client() {
        RedisClient made = client;
        if (made == null) {
            synchronized (PlainRedis.class) {
                made = client;
                if (made == null) {
                    client = made = create();
                }
            }
        }
        return made;
    }

    private static RedisClient create() {
        Config config = ConfigProvider.getConfig();
        URI url = URI.create(config.getValue("idempotency.redis.url", String.class));
        ConnectionPoolConfig pool = new ConnectionPoolConfig();
        pool.setMaxTotal(64);
        pool.setMaxIdle(64);
        pool.setBlockWhenExhausted(true);
        pool.setMaxWait(Duration.ofSeconds(2));
        pool.setTestOnBorrow(false);
        pool.setTestOnReturn(false);
        pool.setJmxEnabled(false);
        DefaultJedisClientConfig settings = DefaultJedisClientConfig.builder()
                .connectionTimeoutMillis(config.getOptionalValue("idempotency.redis.connect-timeout-ms", Integer.class).orElse(2000))
                .socketTimeoutMillis(config.getOptionalValue("idempotency.redis.read-timeout-ms", Integer.class).orElse(2000))
                .clientSetInfoConfig(ClientSetInfoConfig.DISABLED)
                .build();
        int port = url.getPort() < 0 ? 6379 : url.getPort();
        return RedisClient.builder().hostAndPort(new HostAndPort(url.getHost(), port)).clientConfig(settings)
                .poolConfig(pool).build();
    }
}
