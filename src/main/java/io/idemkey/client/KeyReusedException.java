package io.idemkey.client;

/**
 * The server refused the call's key ({@code 422}, problem type {@code key-reused}): it was used before
 * with a different request. Retrying cannot help; a new logical operation needs a new key.
 */
public class KeyReusedException extends IdempotentCallException {

    private static final long serialVersionUID = 1L;

    /**
     * The server refused the key.
     *
     * @param call the call, for the message
     * @param key the key
     * @param attempts attempts made
     * @param problem the server's problem+json answer
     */
    public KeyReusedException(String call, String key, int attempts, Problem problem) {
        super(call + ": the server refused the key " + key + ", used before with another request ("
                + problem + ")", key, attempts, problem.status(), problem, null);
    }
}
