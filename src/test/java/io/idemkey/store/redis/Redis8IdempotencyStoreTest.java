package io.idemkey.store.redis;

import io.idemkey.testing.RedisServer;
import org.junit.jupiter.api.BeforeAll;

/**
 * {@link RedisIdempotencyStoreTest} on Redis 8.4 or later, which has {@code SET ... IFEQ} as Valkey
 * has (it-tests/install-prerequisites builds one where the machine's Redis is older): completions are
 * one plain command there too, and what a completion does where {@code SET ... IFEQ} is refused for
 * now or meets a key that holds no string holds on Redis's replies as on Valkey's.
 */
class Redis8IdempotencyStoreTest extends RedisIdempotencyStoreTest {

    @BeforeAll
    static void startRedis() { // hides RedisIdempotencyStoreTest's: this class runs on Redis 8.4 or later
        server = RedisServer.startProgram(RedisServer.redis8());
    }

    @Override
    protected boolean conditionalSet() {
        return true;
    }
}
