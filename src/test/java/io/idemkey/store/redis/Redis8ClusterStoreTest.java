package io.idemkey.store.redis;

import io.idemkey.testing.RedisCluster;
import io.idemkey.testing.RedisServer;
import org.junit.jupiter.api.BeforeAll;

/**
 * {@link RedisClusterStoreTest} on a cluster of Redis 8.4 or later nodes: completions are
 * {@code SET ... IFEQ} on the record's master, and follow a slot being migrated ({@code ASK}) or
 * moved ({@code MOVED}), with their {@code WAIT}, as on Valkey ({@link ValkeyClusterStoreTest}).
 */
class Redis8ClusterStoreTest extends RedisClusterStoreTest {

    @BeforeAll
    static void startCluster() { // hides RedisClusterStoreTest's: this class runs on Redis 8.4 or later
        cluster = RedisCluster.start(3, RedisServer.redis8());
    }

    @Override
    protected boolean conditionalSet() {
        return true;
    }
}
