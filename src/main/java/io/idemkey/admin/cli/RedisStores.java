package io.idemkey.admin.cli;

import io.idemkey.spi.IdempotencyStore;
import io.idemkey.store.redis.RedisIdempotencyStore;
import io.idemkey.store.redis.RedisStoreOptions;

import java.time.Duration;

/**
 * Opens the Redis store a URL names, for {@link IdemkeyAdmin}. The only class of the tool that
 * refers to the Redis store: the others load, link and run against a JDBC store without Jedis on
 * the class path.
 */
final class RedisStores {

    private RedisStores() {
    }

    /** With {@code cluster}, the URL's host and port are one node of a Redis Cluster. */
    static IdempotencyStore open(String url, String user, String password, boolean cluster) {
        RedisStoreOptions options = RedisStoreOptions.fromUrl(url, user, password)
                .connectTimeout(Duration.ofSeconds(2)).readTimeout(Duration.ofSeconds(5));
        if (cluster) {
            String authority = url.substring(url.indexOf("//") + 2).replaceFirst("^[^@/]*@", "").replaceFirst("/.*$", "");
            options.cluster(RedisStoreOptions.parseNodes(authority));
        }
        return RedisIdempotencyStore.open(options);
    }
}
