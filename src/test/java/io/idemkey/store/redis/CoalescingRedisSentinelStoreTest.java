package io.idemkey.store.redis;

/** {@link RedisSentinelStoreTest} on the path that sends the calls ready together as one pipeline ({@link CoalescedCalls}). */
class CoalescingRedisSentinelStoreTest extends RedisSentinelStoreTest {

    @Override
    protected boolean coalesce() {
        return true;
    }
}
