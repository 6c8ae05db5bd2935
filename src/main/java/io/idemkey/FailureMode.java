package io.idemkey;

/**
 * What a guarded endpoint does when the idempotency store cannot be reached.
 */
public enum FailureMode {

    /** Use the application-wide setting {@code idempotency.failure-mode} ({@code closed} by default). */
    DEFAULT,

    /**
     * Refuse the request with {@code 503 Service Unavailable} and a {@code Retry-After} header,
     * without running the method. The right choice for payments and anything irreversible.
     */
    CLOSED,

    /**
     * Run the method unprotected; a warning is logged and counted. For endpoints where availability
     * matters more than a rare duplicate.
     */
    OPEN
}
