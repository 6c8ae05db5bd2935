package io.idemkey.store.memory;

import io.idemkey.spi.AcquireResult;
import io.idemkey.spi.IdempotencyStore;
import io.idemkey.spi.IdempotencyStoreContract;
import io.idemkey.spi.Renewal;
import io.idemkey.spi.StoreUnavailableException;
import io.idemkey.testing.ManualClock;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class InMemoryIdempotencyStoreTest extends IdempotencyStoreContract {

    private final ManualClock clock = new ManualClock();

    @Override
    protected IdempotencyStore createStore() {
        return new InMemoryIdempotencyStore(clock);
    }

    @Override
    protected Duration shortTtl() {
        return Duration.ofSeconds(30);
    }

    @Override
    protected void passTime(Duration duration) {
        clock.advance(duration);
    }

    @Override
    protected void awaitExpiry(long writtenAtNanos, Duration ttl, BooleanSupplier expired) {
        clock.advance(ttl.minusMillis(1));
        assertFalse(expired.getAsBoolean(), "expired 1 ms before its TTL ended");
        clock.advance(Duration.ofMillis(1));
        assertTrue(expired.getAsBoolean(), "still there when its TTL ended");
    }

    @Test
    void renewalCountsTheLockTtlFromTheRenewal() {
        String key = key("renew-from-now");
        Duration lock = Duration.ofSeconds(30);
        store.acquire(key, FINGERPRINT, "owner-1", lock);
        clock.advance(Duration.ofSeconds(25));
        assertEquals(Renewal.RENEWED, store.renew(key, "owner-1", lock));
        clock.advance(Duration.ofSeconds(29));
        AcquireResult.InProgress inProgress = assertInstanceOf(AcquireResult.InProgress.class,
                store.acquire(key, FINGERPRINT, "owner-2", lock));
        assertEquals(Duration.ofSeconds(1), inProgress.remainingLease());
        clock.advance(Duration.ofSeconds(1));
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "owner-2", lock));
    }

    @Test
    void renewAfterTheLeaseRanOutFailsEvenIfNobodyTookTheKey() {
        String key = key("renew-too-late");
        store.acquire(key, FINGERPRINT, "owner-1", Duration.ofSeconds(30));
        clock.advance(Duration.ofSeconds(30));
        assertEquals(Renewal.LOST, store.renew(key, "owner-1", Duration.ofSeconds(30)));
        assertFalse(store.complete(key, "owner-1", RESPONSE, DAY));
    }

    @Test
    void expiredRecordsAreSweptOut() {
        for (int i = 0; i < 100; i++) {
            store.acquire(key("sweep-" + i), FINGERPRINT, "owner", Duration.ofSeconds(1));
        }
        InMemoryIdempotencyStore memory = (InMemoryIdempotencyStore) store;
        assertEquals(100, memory.size());
        clock.advance(Duration.ofSeconds(2));
        for (int i = 100; i < InMemoryIdempotencyStore.SWEEP_EVERY; i++) {
            store.acquire(key("live"), FINGERPRINT, "owner", Duration.ofSeconds(60));
        }
        assertEquals(1, memory.size());
    }

    @Test
    void atItsBoundTheStoreDropsTheCompletedRecordsClosestToExpiryNeverOnesInProgress() {
        ManualClock time = new ManualClock();
        InMemoryIdempotencyStore bounded = new InMemoryIdempotencyStore(time, 10);
        for (int i = 0; i < 5; i++) {
            bounded.acquire("done-" + i, new byte[]{1}, "t" + i, Duration.ofSeconds(30));
            bounded.complete("done-" + i, "t" + i, new byte[]{2}, Duration.ofHours(1 + i));
        }
        for (int i = 0; i < 5; i++) {
            bounded.acquire("running-" + i, new byte[]{1}, "r" + i, Duration.ofSeconds(30));
        }
        assertInstanceOf(AcquireResult.Acquired.class, bounded.acquire("new", new byte[]{1}, "n", Duration.ofSeconds(30)));
        assertTrue(bounded.size() <= 10);
        assertInstanceOf(AcquireResult.Acquired.class, bounded.acquire("done-0", new byte[]{1}, "again", Duration.ofSeconds(30)),
                "the completed record closest to expiry made room");
        for (int i = 0; i < 5; i++) {
            assertInstanceOf(AcquireResult.InProgress.class, bounded.acquire("running-" + i, new byte[]{1}, "x", Duration.ofSeconds(30)));
        }
    }

    @Test
    void fullOfRequestsInProgressTheStoreReportsItselfUnavailable() {
        InMemoryIdempotencyStore bounded = new InMemoryIdempotencyStore(new ManualClock(), 3);
        for (int i = 0; i < 3; i++) {
            bounded.acquire("running-" + i, new byte[]{1}, "r" + i, Duration.ofSeconds(30));
        }
        assertThrows(StoreUnavailableException.class,
                () -> bounded.acquire("one-too-many", new byte[]{1}, "t", Duration.ofSeconds(30)));
        assertInstanceOf(AcquireResult.InProgress.class, bounded.acquire("running-0", new byte[]{1}, "x", Duration.ofSeconds(30)),
                "known keys still answer");
    }
}
