package io.idemkey.store.redis;

import io.idemkey.testing.RedisCluster;
import io.idemkey.testing.RedisServer;
import org.junit.jupiter.api.BeforeAll;

/**
 * {@link RedisClusterStoreTest} on a cluster of Valkey nodes (8.1 or later): completions are {@code SET ...
 * IFEQ} on the record's master, and follow a slot being migrated ({@code ASK}) or moved
 * ({@code MOVED}), with their {@code WAIT}, as the scripts do.
 */
class ValkeyClusterStoreTest extends RedisClusterStoreTest {

    @BeforeAll
    static void startCluster() { // hides RedisClusterStoreTest's: this class runs on Valkey
        cluster = RedisCluster.start(3, RedisServer.VALKEY);
    }

    @Override
    protected boolean conditionalSet() {
        return true;
    }
}
