package io.idemkey.cdi;

import io.idemkey.core.Execution;
import jakarta.ws.rs.ext.Providers;

import java.lang.reflect.Method;

/**
 * A request that holds an idempotency key, as the request filter hands it to the response filter
 * and the writer interceptor: a request property ({@link #ATTRIBUTE}). The CDI interceptor and the
 * end of the request receive it through {@link CurrentRequest}. No request-scoped bean is created
 * per request.
 */
public final class GuardedRequest {

    /** The request property it travels in; namespaced. */
    public static final String ATTRIBUTE = "io.idemkey.guarded-request";

    private final Execution execution;
    private final Method resourceMethod;
    private final Providers providers;
    private volatile boolean asynchronous;
    private boolean asynchronousAnswerEnded;

    /**
     * @param execution      the execution holding the key
     * @param resourceMethod the guarded resource method: only its invocation starts the execution
     * @param providers      the application's JAX-RS providers, to tell mapped exceptions from unmapped ones
     */
    public GuardedRequest(Execution execution, Method resourceMethod, Providers providers) {
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

    /**
     * The method answers asynchronously: the request's thread ends before the response exists, and
     * the lease is renewed until {@link #asynchronousAnswerEnded()}.
     */
    public synchronized void markAsynchronous() {
        if (!asynchronous) {
            asynchronous = true;
            execution.workBegins();
        }
    }

    /** The asynchronous answer is there (or failed): renewing the lease is no longer needed. */
    public synchronized void asynchronousAnswerEnded() {
        if (asynchronous && !asynchronousAnswerEnded) {
            asynchronousAnswerEnded = true;
            execution.workEnded();
        }
    }

    public boolean asynchronous() {
        return asynchronous;
    }
}
