package io.idemkey.core;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * How one guarded endpoint behaves, resolved once from its {@code @IdempotencyKey} and the
 * configuration overrides, then shared by every request to it. Immutable.
 *
 * @param ttl            how long a completed record is replayed
 * @param lockTtl        how long an in-progress record survives without its owner's renewals
 * @param required       whether a request without a key is refused
 * @param excludeFields  JSON member names left out of the fingerprint, lower-cased
 * @param failOpen       whether the method runs unprotected when the store is unreachable
 * @param inFlightWait   how long a retry waits for a running first request before a 409
 */
public record IdempotencyPolicy(Duration ttl, Duration lockTtl, boolean required, Set<String> excludeFields,
                                boolean failOpen, Duration inFlightWait) {

    public IdempotencyPolicy {
        Objects.requireNonNull(ttl, "ttl");
        Objects.requireNonNull(lockTtl, "lockTtl");
        Objects.requireNonNull(inFlightWait, "inFlightWait");
        if (lockTtl.isNegative() || lockTtl.isZero()) {
            throw new IllegalArgumentException("lockTtl must be positive: " + lockTtl);
        }
        if (ttl.compareTo(lockTtl) <= 0) {
            throw new IllegalArgumentException("ttl (" + ttl + ") must be longer than lockTtl (" + lockTtl + ")");
        }
        if (inFlightWait.isNegative()) {
            throw new IllegalArgumentException("inFlightWait must not be negative: " + inFlightWait);
        }
        excludeFields = excludeFields.stream().map(f -> f.toLowerCase(Locale.ROOT)).collect(Collectors.toUnmodifiableSet());
    }

    /** The interval at which a running execution renews its lease: a third of the lock TTL. */
    public Duration renewalInterval() {
        return Duration.ofMillis(Math.max(1, lockTtl.toMillis() / 3)); // (Duration.dividedBy goes through BigDecimal)
    }
}
