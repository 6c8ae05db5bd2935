package io.idemkey.cdi;

import io.idemkey.IdempotencyContext;
import io.idemkey.core.Execution;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Destroyed;
import jakarta.enterprise.context.RequestScoped;
import jakarta.enterprise.event.Observes;

import java.util.Optional;

/**
 * Hands a guarded request from Idemkey's JAX-RS request filter to the CDI interceptor on the
 * resource method, is the {@link IdempotencyContext} the method sees while it runs, and is the last
 * line of defence when a request ends: if a synchronous request ends while its execution still holds
 * the key (no response filter ran, say), the key is released here, so a retry is not refused with
 * 409 until the lease runs out.
 *
 * <p>It needs nothing but JAX-RS and CDI (no servlet API): both runtimes invoke the resource method
 * on the thread that ran the request filters, so the hand-over is a thread-local that the
 * interceptor takes as the method starts. The filter sets it for every guarded request and clears
 * it when it lets a request pass unguarded; the response filter clears it when the method never
 * ran; so a value left behind (a later filter failed) is replaced by the next guarded request on
 * that thread and is never taken by another method: the interceptor checks the method and that the
 * execution is still waiting for it.
 */
@ApplicationScoped
public class CurrentRequest implements IdempotencyContext {

    /** Set by the request filter, taken by the interceptor when the guarded method starts. */
    private final ThreadLocal<GuardedRequest> awaitingMethod = new ThreadLocal<>();
    /** The guarded request whose method runs on this thread right now. */
    private final ThreadLocal<GuardedRequest> running = new ThreadLocal<>();
    /** The guarded request this thread serves, until its request context ends. */
    private final ThreadLocal<GuardedRequest> served = new ThreadLocal<>();

    /** The request filter let this guarded request through: its method is about to run on this thread. */
    public void awaitMethod(GuardedRequest guarded) {
        awaitingMethod.set(guarded);
        served.set(guarded);
    }

    /**
     * The request context of this thread ends (CDI fires this for every HTTP request, on its
     * thread, with or without the servlet API): a synchronous guarded request whose execution still
     * holds its key releases it.
     */
    void requestEnded(@Observes @Destroyed(RequestScoped.class) Object request) {
        GuardedRequest guarded = served.get();
        if (guarded == null) {
            return;
        }
        served.remove();
        awaitingMethod.remove();
        if (!guarded.asynchronous() && guarded.execution().isRunning()) {
            guarded.execution().release("the request ended without a recordable response");
        }
    }

    /** The method answers asynchronously: this thread no longer serves the request. */
    void answeredAsynchronously() {
        served.remove();
    }

    /** No guarded method is about to run on this thread (the request passes unguarded, or ended). */
    public void clearAwaiting() {
        awaitingMethod.remove();
    }

    /** The guarded request waiting for its method on this thread, or null. */
    GuardedRequest awaiting() {
        return awaitingMethod.get();
    }

    /** The method of {@code guarded} starts on this thread; returns what ran before, for {@link #methodEnded}. */
    GuardedRequest methodStarts(GuardedRequest guarded) {
        awaitingMethod.remove();
        GuardedRequest outer = running.get();
        running.set(guarded);
        return outer;
    }

    void methodEnded(GuardedRequest outer) {
        if (outer == null) {
            running.remove();
        } else {
            running.set(outer);
        }
    }

    private Execution execution() {
        GuardedRequest guarded = running.get();
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
}
