package io.idemkey.store.redis;

/** {@link RedisClusterFailuresTest} on the path that sends the calls ready together as one pipeline ({@link CoalescedCalls}). */
class CoalescingRedisClusterFailuresTest extends RedisClusterFailuresTest {

    @Override
    protected boolean coalesce() {
        return true;
    }
}
