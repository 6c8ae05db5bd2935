package io.idemkey.core;

import java.time.Duration;

/**
 * What the engine decided for a request carrying an idempotency key: a closed set, which the JAX-RS
 * layer turns into "run the method" or an immediate answer.
 */
public sealed interface Decision {

    /** First request with this key: run the method, then finish the execution. */
    record Proceed(Execution execution) implements Decision {
    }

    /** The key is completed: answer with the recorded response, without running the method. */
    record Replay(StoredResponse response) implements Decision {
    }

    /** Another request with this key is still running: 409, retry after {@code retryAfter}. */
    record Conflict(Duration retryAfter) implements Decision {
    }

    /** The key was used for a different request: 422. */
    record Mismatch() implements Decision {
    }

    /** The key was sent more often than the rate limit allows: 429, retry after {@code retryAfter}. */
    record RateLimited(Duration retryAfter) implements Decision {
    }

    /** The store is unreachable and the endpoint fails closed: 503, retry after {@code retryAfter}. */
    record Unavailable(Duration retryAfter) implements Decision {
    }

    /** The store is unreachable and the endpoint fails open: run the method unprotected. */
    record Unprotected() implements Decision {
    }
}
