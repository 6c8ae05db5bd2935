package io.idemkey.client;

import java.util.Optional;
import java.util.OptionalInt;

/**
 * A call made with a retrying Idemkey client did not get a successful answer: its key, how many
 * attempts were made, the last status received (if any) and its problem+json body (if it had one).
 * Subclasses tell why: {@link KeyReusedException}, {@link RetriesExhaustedException}.
 */
public class IdempotentCallException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String key;
    private final int attempts;
    private final int status;
    private final transient Problem problem;

    public IdempotentCallException(String message, String key, int attempts, int status, Problem problem, Throwable cause) {
        super(message, cause);
        this.key = key;
        this.attempts = attempts;
        this.status = status;
        this.problem = problem;
    }

    /** The {@code Idempotency-Key} every attempt of the call carried. */
    public String key() {
        return key;
    }

    /** Attempts made, the first included. */
    public int attempts() {
        return attempts;
    }

    /** The status of the last answer; empty when the last attempt got none (connection failure, timeout). */
    public OptionalInt status() {
        return status == 0 ? OptionalInt.empty() : OptionalInt.of(status);
    }

    /** The last answer's body as a problem, if it had a body. */
    public Optional<Problem> problem() {
        return Optional.ofNullable(problem);
    }
}
