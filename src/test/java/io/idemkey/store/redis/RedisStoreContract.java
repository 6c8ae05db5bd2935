package io.idemkey.store.redis;

import io.idemkey.spi.IdempotencyStoreContract;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** The store contract on a real Redis, whatever its topology: Redis expires records by its own clock. */
abstract class RedisStoreContract extends IdempotencyStoreContract {

    @Override
    protected Duration shortTtl() {
        return Duration.ofMillis(150);
    }

    @Override
    protected void passTime(Duration duration) {
        sleep(duration.toMillis());
    }

    @Override
    protected void awaitExpiry(long writtenAtNanos, Duration ttl, BooleanSupplier expired) {
        awaitExpiryInRealTime(writtenAtNanos, ttl, expired, 2);
    }
}
