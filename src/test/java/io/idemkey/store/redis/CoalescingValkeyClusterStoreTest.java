package io.idemkey.store.redis;

/**
 * {@link ValkeyClusterStoreTest} on the path that sends the calls ready together as one pipeline
 * ({@link CoalescedCalls}): a completion's {@code SET ... IFEQ} goes to the record's master in a
 * batch, and follows a slot being migrated ({@code ASK}) or moved ({@code MOVED}) from there.
 */
class CoalescingValkeyClusterStoreTest extends ValkeyClusterStoreTest {

    @Override
    protected boolean coalesce() {
        return true;
    }
}
