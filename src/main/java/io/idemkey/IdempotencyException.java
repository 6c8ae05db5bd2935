package io.idemkey;

import java.time.Duration;

/**
 * Why an idempotent call ({@link Idempotent}, {@link Idempotency}) did not run and has no recorded
 * outcome to return. Each reason is a subclass, so that a message consumer can tell "requeue and try
 * later" ({@link InProgress}, {@link Unavailable}, {@link TakenOver}) from "this message is poison"
 * ({@link InvalidKey}, {@link KeyReused}).
 */
public abstract class IdempotencyException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** The call's key, as given. */
    private final String key;

    IdempotencyException(String key, String message, Throwable cause) {
        super(message, cause);
        this.key = key;
    }

    /**
     * The call's key, as given.
     *
     * @return the key; may be {@code null} for {@link InvalidKey}
     */
    public String key() {
        return key;
    }

    /** Another call with this key is still running; try again after {@link #retryAfter()} (HTTP's 409). */
    public static final class InProgress extends IdempotencyException {
        private static final long serialVersionUID = 1L;

        /** When to try again. */
        private final Duration retryAfter;

        /**
         * Another call with {@code key} is running.
         *
         * @param key the call's key
         * @param retryAfter when to try again
         */
        public InProgress(String key, Duration retryAfter) {
            super(key, "A call with the key '" + key + "' is still running; try again after " + retryAfter.toSeconds()
                    + " s to receive its outcome", null);
            this.retryAfter = retryAfter;
        }

        /**
         * About the time left on the running call's lease, capped by {@code idempotency.conflict-retry-after-max}.
         *
         * @return when to try again
         */
        public Duration retryAfter() {
            return retryAfter;
        }
    }

    /** The key was used before with different arguments (HTTP's 422): never retry it as it is. */
    public static final class KeyReused extends IdempotencyException {
        private static final long serialVersionUID = 1L;

        /**
         * {@code key} was used before with other arguments.
         *
         * @param key the call's key
         */
        public KeyReused(String key) {
            super(key, "The key '" + key + "' was used before with different arguments", null);
        }
    }

    /** The key is missing or not a valid key (HTTP's 400). */
    public static final class InvalidKey extends IdempotencyException {
        private static final long serialVersionUID = 1L;

        /**
         * {@code key} is missing or invalid.
         *
         * @param key the key as given, or {@code null}
         * @param reason what is wrong with it
         */
        public InvalidKey(String key, String reason) {
            super(key, "Invalid idempotency key: " + reason, null);
        }
    }

    /** The store cannot be reached and the call fails closed (HTTP's 503); try again after {@link #retryAfter()}. */
    public static final class Unavailable extends IdempotencyException {
        private static final long serialVersionUID = 1L;

        /** When to try again. */
        private final Duration retryAfter;

        /**
         * The store could not be reached for the call with {@code key}.
         *
         * @param key the call's key
         * @param reason what happened
         * @param retryAfter when to try again ({@code idempotency.unavailable-retry-after})
         * @param cause the store's failure, or {@code null}
         */
        public Unavailable(String key, String reason, Duration retryAfter, Throwable cause) {
            super(key, reason, cause);
            this.retryAfter = retryAfter;
        }

        /**
         * When to try again.
         *
         * @return the delay before the next attempt
         */
        public Duration retryAfter() {
            return retryAfter;
        }
    }

    /** The key was sent more often than {@code idempotency.rate-limit.per-key} allows (HTTP's 429). */
    public static final class RateLimited extends IdempotencyException {
        private static final long serialVersionUID = 1L;

        /** When the window ends. */
        private final Duration retryAfter;

        /**
         * {@code key} was sent too often.
         *
         * @param key the call's key
         * @param retryAfter the time left in the rate limit's window
         */
        public RateLimited(String key, Duration retryAfter) {
            super(key, "The key '" + key + "' was used more often than the rate limit allows", null);
            this.retryAfter = retryAfter;
        }

        /**
         * The time left in the rate limit's window.
         *
         * @return when to try again
         */
        public Duration retryAfter() {
            return retryAfter;
        }
    }

    /**
     * The call outlived its key's lease and its transaction was rolled back (so its effects are undone):
     * another call with the key may have run meanwhile. Try again with the same key for the outcome.
     */
    public static final class TakenOver extends IdempotencyException {
        private static final long serialVersionUID = 1L;

        /**
         * The call with {@code key} outlived its lease.
         *
         * @param key the call's key
         */
        public TakenOver(String key) {
            super(key, "The call with the key '" + key + "' outlived its lease; its transaction was rolled back."
                    + " Try again with the same key to receive the outcome", null);
        }
    }

    /**
     * The recorded outcome is an exception that cannot be re-thrown as its class here (the class is
     * gone, or has no constructor taking a message): its class name and message are in this one.
     */
    public static final class RecordedFailure extends IdempotencyException {
        private static final long serialVersionUID = 1L;

        /** The recorded exception's class name. */
        private final String exceptionClass;

        /**
         * A recorded exception that cannot be re-thrown as itself.
         *
         * @param key the call's key
         * @param exceptionClass the recorded exception's class name
         * @param message the recorded exception's message
         */
        public RecordedFailure(String key, String exceptionClass, String message) {
            super(key, exceptionClass + ": " + message, null);
            this.exceptionClass = exceptionClass;
        }

        /**
         * The recorded exception's class name.
         *
         * @return a fully qualified class name
         */
        public String exceptionClass() {
            return exceptionClass;
        }
    }
}
