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

    /**
     * The key every attempt carried.
     */
    private final String key;
    /**
     * Attempts made.
     */
    private final int attempts;
    /**
     * The last answer's status, 0 for none.
     */
    private final int status;
    private final transient Problem problem;

    /**
     * A call that ended without a successful answer.
     *
     * @param message what happened
     * @param key the key every attempt carried
     * @param attempts attempts made
     * @param status the last answer's status, or 0 for none
     * @param problem the last answer's problem+json body, or {@code null}
     * @param cause the last failure to get an answer, or {@code null}
     */
    public IdempotentCallException(String message, String key, int attempts, int status, Problem problem, Throwable cause) {
        super(message, cause);
        this.key = key;
        this.attempts = attempts;
        this.status = status;
        this.problem = problem;
    }

    /**
     * The {@code Idempotency-Key} every attempt of the call carried.
     *
     * @return the key every attempt carried
     */
    public String key() {
        return key;
    }

    /**
     * Attempts made, the first included.
     *
     * @return attempts made, at least 1
     */
    public int attempts() {
        return attempts;
    }

    /**
     * The status of the last answer; empty when the last attempt got none (connection failure, timeout).
     *
     * @return the status, or empty when no answer came
     */
    public OptionalInt status() {
        return status == 0 ? OptionalInt.empty() : OptionalInt.of(status);
    }

    /**
     * The last answer's body as a problem, if it had a body.
     *
     * @return the problem, or empty when the last answer had none
     */
    public Optional<Problem> problem() {
        return Optional.ofNullable(problem);
    }
}
