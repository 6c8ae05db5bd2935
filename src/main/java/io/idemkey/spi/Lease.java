package io.idemkey.spi;

import java.time.Duration;
import java.util.Objects;

/**
 * One in-progress record as its owner holds it, for {@link IdempotencyStore#renew(java.util.List)}:
 * the record key, the owner token, and the lock TTL to extend it by.
 */
public record Lease(String recordKey, String ownerToken, Duration lockTtl) {

    /**
     * Checks the components.
     *
     * @param recordKey the record's key
     * @param ownerToken the owner token
     * @param lockTtl the lock TTL to extend it by
     */
    public Lease {
        Objects.requireNonNull(recordKey, "recordKey");
        Objects.requireNonNull(ownerToken, "ownerToken");
        Objects.requireNonNull(lockTtl, "lockTtl");
    }
}
