package io.idemkey.store.redis;

/** {@link RedisClusterStoreTest} on the path that sends the calls ready together as one pipeline ({@link CoalescedCalls}). */
class CoalescingRedisClusterStoreTest extends RedisClusterStoreTest {

    @Override
    protected boolean coalesce() {
        return true;
    }
}
