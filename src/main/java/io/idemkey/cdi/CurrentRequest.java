package io.idemkey.cdi;

import io.idemkey.IdempotencyContext;
import io.idemkey.core.Execution;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.RequestScoped;

import java.util.Optional;

/**
 * The guarded execution of the current request, if any: set by the JAX-RS request filter, read by
 * the interceptor (which marks it started) and by the application through {@link IdempotencyContext}.
 *
 * <p>It is also the last line of defence: if a synchronous request ends while its execution still
 * holds the key (no response filter ran, say), the key is released here, so a retry is not refused
 * with 409 until the lease runs out.
 */
@RequestScoped
public class CurrentRequest implements IdempotencyContext {

    private GuardedRequest guarded;
    private volatile boolean asynchronous;

    /** Binds the guarded request (called by the request filter). */
    public void bind(GuardedRequest guarded) {
        this.guarded = guarded;
    }

    /** The guarded request, or null. */
    public GuardedRequest guarded() {
        return guarded;
    }

    /** The method answers asynchronously: the request scope ends before the response exists. */
    public void markAsynchronous() {
        asynchronous = true;
    }

    private Execution execution() {
        return guarded == null ? null : guarded.execution();
    }

    @Override
    public Optional<String> key() {
        return Optional.ofNullable(execution()).map(Execution::key);
    }

    @Override
    public void markRetryable() {
        Execution execution = execution();
        if (execution != null) {
            execution.markRetryable();
        }
    }

    @PreDestroy
    void releaseIfAbandoned() {
        Execution execution = execution();
        if (execution != null && !asynchronous && execution.isRunning()) {
            execution.release("the request ended without a recordable response");
        }
    }
}
