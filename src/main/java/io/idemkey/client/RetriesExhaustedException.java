package io.idemkey.client;

/**
 * The call gave up: its attempts or its time ran out while the answers were still ones worth retrying
 * (no answer, or a status {@link RetryPolicy#retryStatuses()} lists: by default {@code 409}, {@code 429},
 * {@code 502}, {@code 503}, {@code 504}). The operation may or may not have taken effect: retrying later
 * with the same {@link #key()} is safe and tells.
 */
public class RetriesExhaustedException extends IdempotentCallException {

    private static final long serialVersionUID = 1L;

    /**
     * The call gave up.
     *
     * @param message what happened
     * @param key the key every attempt carried
     * @param attempts attempts made
     * @param status the last answer's status, or 0 for none
     * @param problem the last answer's problem+json body, or {@code null}
     * @param cause the last failure to get an answer, or {@code null}
     */
    public RetriesExhaustedException(String message, String key, int attempts, int status, Problem problem, Throwable cause) {
        super(message, key, attempts, status, problem, cause);
    }
}
