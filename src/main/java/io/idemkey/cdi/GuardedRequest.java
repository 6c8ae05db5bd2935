package io.idemkey.cdi;

import io.idemkey.core.Execution;
import jakarta.ws.rs.ext.Providers;

import java.lang.reflect.Method;

/**
 * A request that holds an idempotency key, as the request filter hands it to the interceptor, the
 * response filter and the end-of-request listener: a request property, which both servers keep as
 * a servlet request attribute ({@link #ATTRIBUTE}). No request-scoped bean is created per request.
 */
public final class GuardedRequest {

    /** The request property (servlet request attribute) it travels in; namespaced. */
    public static final String ATTRIBUTE = "io.idemkey.guarded-request";

    private final Execution execution;
    private final Method resourceMethod;
    private final Providers providers;
    private volatile boolean asynchronous;

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

    /** The method answers asynchronously: the request's thread ends before the response exists. */
    public void markAsynchronous() {
        asynchronous = true;
    }

    public boolean asynchronous() {
        return asynchronous;
    }
}
