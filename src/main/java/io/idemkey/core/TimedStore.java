package io.idemkey.core;

import io.idemkey.core.IdempotencyMetrics.Exporter;
import io.idemkey.spi.AcquireResult;
import io.idemkey.spi.IdempotencyStore;
import io.idemkey.spi.Lease;
import io.idemkey.spi.Renewal;
import io.idemkey.spi.RateLimit;
import io.idemkey.spi.TransactionalCompletion;

import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;

/**
 * A store that reports how long each call to the real one takes (failed calls included) to the
 * metrics exporter: the store's latency as the monitoring system sees it.
 */
public final class TimedStore implements IdempotencyStore {

    private final IdempotencyStore delegate;
    private final Exporter exporter;

    public TimedStore(IdempotencyStore delegate, Exporter exporter) {
        this.delegate = delegate;
        this.exporter = exporter;
    }

    @Override
    public AcquireResult acquire(String recordKey, byte[] fingerprint, String ownerToken, Duration lockTtl) {
        return timed("acquire", () -> delegate.acquire(recordKey, fingerprint, ownerToken, lockTtl));
    }

    @Override
    public AcquireResult acquire(String recordKey, byte[] fingerprint, String ownerToken, Duration lockTtl,
                                 RateLimit limit) {
        return timed("acquire", () -> delegate.acquire(recordKey, fingerprint, ownerToken, lockTtl, limit));
    }

    @Override
    public boolean countsRequests() {
        return delegate.countsRequests();
    }

    @Override
    public boolean complete(String recordKey, String ownerToken, byte[] response, Duration ttl) {
        return timed("complete", () -> delegate.complete(recordKey, ownerToken, response, ttl));
    }

    @Override
    public boolean complete(String recordKey, String ownerToken, byte[] fingerprint, byte[] response, Duration ttl) {
        return timed("complete", () -> delegate.complete(recordKey, ownerToken, fingerprint, response, ttl));
    }

    @Override
    public TransactionalCompletion completeInTransaction(String recordKey, String ownerToken, byte[] response,
                                                         Duration ttl) {
        return timed("complete", () -> delegate.completeInTransaction(recordKey, ownerToken, response, ttl));
    }

    @Override
    public boolean replaceResponseInTransaction(String recordKey, String ownerToken, byte[] response) {
        return timed("replace", () -> delegate.replaceResponseInTransaction(recordKey, ownerToken, response));
    }

    @Override
    public void transactionEnded(String recordKey, String ownerToken) {
        delegate.transactionEnded(recordKey, ownerToken);
    }

    @Override
    public boolean replaceResponse(String recordKey, String ownerToken, byte[] response) {
        return timed("replace", () -> delegate.replaceResponse(recordKey, ownerToken, response));
    }

    @Override
    public boolean joinsTransactions() {
        return delegate.joinsTransactions();
    }

    @Override
    public boolean release(String recordKey, String ownerToken) {
        return timed("release", () -> delegate.release(recordKey, ownerToken));
    }

    @Override
    public Renewal renew(String recordKey, String ownerToken, Duration lockTtl) {
        return timed("renew", () -> delegate.renew(recordKey, ownerToken, lockTtl));
    }

    @Override
    public Renewal[] renew(List<Lease> leases) {
        return timed("renew", () -> delegate.renew(leases));
    }

    @Override
    public boolean isAvailable() {
        return delegate.isAvailable();
    }

    @Override
    public void close() {
        delegate.close();
    }

    private <T> T timed(String operation, Supplier<T> call) {
        long start = System.nanoTime();
        try {
            return call.get();
        } finally {
            exporter.storeCall(operation, Duration.ofNanos(System.nanoTime() - start));
        }
    }

    @Override
    public String toString() {
        return delegate.toString();
    }
}
