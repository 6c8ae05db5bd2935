package io.idemkey.request;

import io.idemkey.core.Execution;
import io.idemkey.core.StoredResponse;
import jakarta.ws.rs.ext.Providers;

import java.lang.reflect.Method;
import java.util.Optional;
import java.util.function.Function;

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
    private final Function<Object, Optional<StoredResponse>> renderer;
    private final boolean attemptsRepeat;
    private volatile boolean asynchronous;
    private boolean asynchronousAnswerEnded;

    /**
     * @param execution      the execution holding the key
     * @param resourceMethod the guarded resource method: only its invocation starts the execution
     * @param providers      the application's JAX-RS providers, to tell mapped exceptions from unmapped ones
     * @param renderer       the response JAX-RS will write for a result of the method, if it can tell
     *                       ahead (to record it inside the method's transaction)
     */
    public GuardedRequest(Execution execution, Method resourceMethod, Providers providers,
                          Function<Object, Optional<StoredResponse>> renderer) {
        this.execution = execution;
        this.resourceMethod = resourceMethod;
        this.providers = providers;
        this.renderer = renderer;
        this.attemptsRepeat = FaultToleranceRetry.declaredOn(resourceMethod);
    }

    /** The response JAX-RS will write for this result of the method, or empty if it cannot be told ahead. */
    public Optional<StoredResponse> render(Object result) {
        return renderer.apply(result);
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
     * Whether the method may be invoked again in this request (MicroProfile Fault Tolerance's
     * {@code @Retry}): each attempt is guarded, and a failed one does not end the execution.
     */
    public boolean attemptsRepeat() {
        return attemptsRepeat;
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
