package io.idemkey.cdi;

import io.idemkey.IdempotencyContext;
import io.idemkey.core.Execution;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.RequestScoped;
import jakarta.ws.rs.ext.Providers;

import java.lang.reflect.Method;
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

    private Execution execution;
    private Method resourceMethod;
    private Providers providers;
    private boolean asynchronous;

    /**
     * Binds the execution of the current request (called by the request filter).
     *
     * @param resourceMethod the guarded resource method: only its invocation starts the execution
     * @param providers      the application's JAX-RS providers, to tell mapped exceptions from unmapped ones
     */
    public void bind(Execution execution, Method resourceMethod, Providers providers) {
        this.execution = execution;
        this.resourceMethod = resourceMethod;
        this.providers = providers;
    }

    public Execution execution() {
        return execution;
    }

    public Method resourceMethod() {
        return resourceMethod;
    }

    public Providers providers() {
        return providers;
    }

    /** The method answers asynchronously: the request scope ends before the response exists. */
    public void markAsynchronous() {
        asynchronous = true;
    }

    @Override
    public Optional<String> key() {
        return Optional.ofNullable(execution).map(Execution::key);
    }

    @Override
    public void markRetryable() {
        if (execution != null) {
            execution.markRetryable();
        }
    }

    @PreDestroy
    void releaseIfAbandoned() {
        if (execution != null && !asynchronous && execution.isRunning()) {
            execution.release("the request ended without a recordable response");
        }
    }
}
