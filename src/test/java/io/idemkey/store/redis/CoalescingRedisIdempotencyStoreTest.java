package io.idemkey.store.redis;

/** {@link RedisIdempotencyStoreTest} on the path that sends the calls ready together as one pipeline ({@link CoalescedCalls}). */
class CoalescingRedisIdempotencyStoreTest extends RedisIdempotencyStoreTest {

    @Override
    protected boolean coalesce() {
        return true;
    }
}
