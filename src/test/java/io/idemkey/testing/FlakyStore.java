package io.idemkey.testing;

import io.idemkey.spi.AcquireResult;
import io.idemkey.spi.IdempotencyStore;
import io.idemkey.spi.RateLimit;
import io.idemkey.spi.Renewal;
import io.idemkey.spi.StoreUnavailableException;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Wraps a real store and makes it unreachable on demand: while {@link #down} is set every operation
 * throws {@link StoreUnavailableException} without reaching the store. Counts the calls that got through.
 */
public class FlakyStore implements IdempotencyStore {

    private final IdempotencyStore delegate;
    private volatile boolean down;
    public final AtomicInteger acquires = new AtomicInteger();
    public final AtomicInteger completes = new AtomicInteger();
    public final AtomicInteger releases = new AtomicInteger();
    public final AtomicInteger renewals = new AtomicInteger();
    public final AtomicInteger refused = new AtomicInteger();

    public FlakyStore(IdempotencyStore delegate) {
        this.delegate = delegate;
    }

    public void down() {
        down = true;
    }

    public void up() {
        down = false;
    }

    private void check(String operation) {
        if (down) {
            refused.incrementAndGet();
            throw new StoreUnavailableException("store down for the test (" + operation + ")", null);
        }
    }

    @Override
    public AcquireResult acquire(String recordKey, byte[] fingerprint, String ownerToken, Duration lockTtl) {
        check("acquire");
        acquires.incrementAndGet();
        return delegate.acquire(recordKey, fingerprint, ownerToken, lockTtl);
    }

    @Override
    public AcquireResult acquire(String recordKey, byte[] fingerprint, String ownerToken, Duration lockTtl,
                                 RateLimit limit) {
        check("acquire");
        acquires.incrementAndGet();
        return delegate.acquire(recordKey, fingerprint, ownerToken, lockTtl, limit);
    }

    @Override
    public boolean countsRequests() {
        return delegate.countsRequests();
    }

    @Override
    public boolean complete(String recordKey, String ownerToken, byte[] response, Duration ttl) {
        check("complete");
        completes.incrementAndGet();
        return delegate.complete(recordKey, ownerToken, response, ttl);
    }

    @Override
    public boolean release(String recordKey, String ownerToken) {
        check("release");
        releases.incrementAndGet();
        return delegate.release(recordKey, ownerToken);
    }

    @Override
    public Renewal renew(String recordKey, String ownerToken, Duration lockTtl) {
        check("renew");
        renewals.incrementAndGet();
        return delegate.renew(recordKey, ownerToken, lockTtl);
    }

    @Override
    public boolean isAvailable() {
        return !down && delegate.isAvailable();
    }

    @Override
    public void close() {
        delegate.close();
    }
}
