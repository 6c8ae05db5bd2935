package io.idemkey.spi;

import java.time.Duration;
import java.util.Objects;

/**
 * What {@link IdempotencyStore#acquire} found: a closed set of outcomes.
 */
public sealed interface AcquireResult {

    /** No record existed; the caller now owns a new in-progress record. */
    record Acquired() implements AcquireResult {
    }

    /**
     * A record with the same fingerprint is completed; its response is to be replayed.
     *
     * @param response     the response exactly as it was passed to {@link IdempotencyStore#complete}
     * @param remainingTtl how long the record has left (the engine may keep a copy no longer than that)
     */
    record Completed(byte[] response, Duration remainingTtl) implements AcquireResult {
        /**
         * Checks the components.
         *
         * @param response the response
         * @param remainingTtl how long the record has left
         */
        public Completed {
            Objects.requireNonNull(response, "response");
            Objects.requireNonNull(remainingTtl, "remainingTtl");
        }
    }

    /**
     * A record with the same fingerprint is still in progress, owned by another attempt.
     *
     * @param remainingLease how long the owner's lease has left (zero or more)
     */
    record InProgress(Duration remainingLease) implements AcquireResult {
        /**
         * Checks the components.
         *
         * @param remainingLease how long the owner's lease has left
         */
        public InProgress {
            Objects.requireNonNull(remainingLease, "remainingLease");
        }
    }

    /** A record exists under this key for a different request (another fingerprint). */
    record Mismatch() implements AcquireResult {
    }

    /**
     * The key was used more often than the {@link RateLimit} allows in the current window; nothing
     * else was looked at or changed.
     *
     * @param windowLeft how long until the window ends (zero or more)
     */
    record RateLimited(Duration windowLeft) implements AcquireResult {
        /**
         * Checks the components.
         *
         * @param windowLeft how long until the window ends
         */
        public RateLimited {
            Objects.requireNonNull(windowLeft, "windowLeft");
        }
    }

    /** The one {@link Acquired} instance. */
    AcquireResult ACQUIRED = new Acquired();

    /** The one {@link Mismatch} instance. */
    AcquireResult MISMATCH = new Mismatch();
}
