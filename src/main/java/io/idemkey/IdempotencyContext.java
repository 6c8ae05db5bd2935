package io.idemkey;

import java.util.Optional;

/**
 * The current request's view of Idemkey, injectable into resources ({@code @Inject
 * IdempotencyContext idempotency}) while a guarded method runs. It is request-scoped: use it on the
 * request thread (read {@link #key()} before handing work to another thread; an asynchronous method
 * marks its outcome retryable before it returns its {@code CompletionStage}).
 *
 * <pre>
 * if (result.isRetryable()) {
 *     idempotency.markRetryable();        // the key is released: the client may retry with it
 *     return Response.status(409).entity(result.error()).build();
 * }
 * </pre>
 */
public interface IdempotencyContext {

    /**
     * The idempotency key the client sent, unquoted, if the current request is protected by one.
     * Handy as the idempotency key of a downstream call (a payment provider, say).
     *
     * @return the key, or empty when the current request is not guarded or sent none
     */
    Optional<String> key();

    /**
     * Marks the current outcome as retryable: whatever the method answers, the response is not
     * recorded and the key is released, so a retry with the same key runs the method again. Use it
     * for failures that had no side effect (a downstream call refused before it did anything). Has
     * no effect when the request is not protected.
     */
    void markRetryable();
}
