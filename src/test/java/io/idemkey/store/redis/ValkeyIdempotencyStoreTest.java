package io.idemkey.store.redis;

import io.idemkey.testing.RedisServer;
import org.junit.jupiter.api.BeforeAll;

/**
 * {@link RedisIdempotencyStoreTest} on Valkey (8.1 or later), whose {@code SET ... IFEQ} completes a record in
 * one plain command instead of the record script (it-tests/install-prerequisites builds Valkey where
 * the machine has none): the store contract, the round trips, the outages of the shared server
 * (the tests that start servers of their own start Redis), and what a completion does where
 * {@code SET ... IFEQ} is refused for now or meets a key that holds no string.
 */
class ValkeyIdempotencyStoreTest extends RedisIdempotencyStoreTest {

    @BeforeAll
    static void startRedis() { // hides RedisIdempotencyStoreTest's: this class runs on Valkey
        server = RedisServer.startProgram(RedisServer.VALKEY);
    }

    @Override
    protected boolean conditionalSet() {
        return true;
    }
}
