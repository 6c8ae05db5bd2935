package io.idemkey.request;

import io.idemkey.IdempotencyContext;
import io.idemkey.core.Execution;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Destroyed;
import jakarta.enterprise.context.RequestScoped;
import jakarta.enterprise.event.Observes;

import java.util.Optional;

/**
 * Hands a guarded request from Idemkey's JAX-RS request filter to the CDI interceptor on the
 * resource method, is the {@link IdempotencyContext} the method sees while it runs, and watches
 * the end of the request ({@link #requestEnded}).
 *
 * <p>It needs nothing but JAX-RS and CDI (no servlet API): both runtimes invoke the resource method
 * on the thread that ran the request filters, so the hand-over is a thread-local that the
 * interceptor takes as the method starts. The filter sets it for every guarded request and clears
 * it when it lets a request pass unguarded; the response filter clears it when the method never
 * ran. A value left behind (a later filter failed before the method) is replaced by the next
 * guarded request on that thread; the interceptor takes a value only for the method it was set for
 * and while its execution still waits for that method to start.
 */
@ApplicationScoped
public class CurrentRequest implements IdempotencyContext {

    /** Set by the request filter, taken by the interceptor when the guarded method starts. */
    private final ThreadLocal<GuardedRequest> awaitingMethod = new ThreadLocal<>();
    /** The guarded request whose method runs on this thread right now. */
    private final ThreadLocal<GuardedRequest> running = new ThreadLocal<>();
    /** The guarded request of the HTTP request on this thread, until that request ends. */
    private final ThreadLocal<GuardedRequest> ofThisRequest = new ThreadLocal<>();

    /** The request filter let this guarded request through: its method is about to run on this thread. */
    public void awaitMethod(GuardedRequest guarded) {
        awaitingMethod.set(guarded);
        ofThisRequest.set(guarded);
    }

    /**
     * The last line of defence for one guarded request: its CDI request context ends (every server
     * ends it with the HTTP request, on the request's thread, servlet API or not). If a synchronous
     * request ends while its execution still holds the key (no response filter ran, say), the key
     * is released now, so that a retry is not refused with 409 until the lease runs out. (An
     * observer rather than a request-scoped bean: creating a bean for every guarded request cost
     * more than the rest of the request filter.)
     */
    void requestEnded(@Observes @Destroyed(RequestScoped.class) Object request) {
        GuardedRequest guarded = ofThisRequest.get();
        if (guarded == null || running.get() == guarded) {
            // nothing guarded here; or this request's method is still running, so what ended is another
            // request's context (an asynchronous request the method resumed, ended on this thread)
            return;
        }
        ofThisRequest.remove();
        if (awaitingMethod.get() == guarded) {
            awaitingMethod.remove();
        }
        if (!guarded.asynchronous() && guarded.execution().isRunning()) {
            guarded.execution().release("the request ended without a recordable response");
        }
    }

    /** No guarded method is about to run on this thread (the request passes unguarded, or ended). */
    public void clearAwaiting() {
        awaitingMethod.remove();
    }

    /** The guarded request waiting for its method on this thread, or null. */
    public GuardedRequest awaiting() {
        return awaitingMethod.get();
    }

    /**
     * The guarded request of this thread's HTTP request if its method ran already, runs no more, and
     * may be invoked again (Fault Tolerance's {@code @Retry}): another attempt of it. Null otherwise.
     */
    public GuardedRequest repeating() {
        GuardedRequest guarded = ofThisRequest.get();
        return guarded != null && guarded.attemptsRepeat() && running.get() == null && guarded.execution().started()
                && guarded.execution().isRunning() ? guarded : null;
    }

    /** The method of {@code guarded} starts on this thread; returns what ran before, for {@link #methodEnded}. */
    public GuardedRequest methodStarts(GuardedRequest guarded) {
        awaitingMethod.remove();
        GuardedRequest outer = running.get();
        running.set(guarded);
        return outer;
    }

    /**
     * The method of {@code guarded} returned on this thread (it will not be invoked again in this
     * request). If it answers asynchronously, its request ends on another thread, whose end of
     * request cannot reach this thread's values: nothing of it is kept here, so that a pooled thread
     * holds no request (its execution, the engine, the application's classes) once the request
     * ended, nor after the application is undeployed.
     */
    public void methodReturned(GuardedRequest guarded) {
        if (guarded.asynchronous() && ofThisRequest.get() == guarded) {
            ofThisRequest.remove();
        }
    }

    public void methodEnded(GuardedRequest outer) {
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
