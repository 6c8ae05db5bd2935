package io.idemkey.store.redis;

/** {@link ValkeyIdempotencyStoreTest} on the path that sends the calls ready together as one pipeline ({@link CoalescedCalls}). */
class CoalescingValkeyIdempotencyStoreTest extends ValkeyIdempotencyStoreTest {

    @Override
    protected boolean coalesce() {
        return true;
    }
}
