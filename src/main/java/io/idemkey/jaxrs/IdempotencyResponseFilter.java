package io.idemkey.jaxrs;

import io.idemkey.request.ResponseRecorder;
import io.idemkey.request.CurrentRequest;
import io.idemkey.request.GuardedRequest;
import io.idemkey.core.Execution;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.container.ContainerResponseFilter;

/**
 * Decides the fate of a guarded request's key once its response exists, before anything reaches
 * the client: a server error, a retryable outcome or a request refused before the method started
 * releases the key; anything else is recorded (right here when there is no entity, otherwise by
 * {@link IdempotencyWriterInterceptor} once the entity's bytes are known). A response recorded in
 * the method's transaction, which has committed, is compared with the response as it goes out the
 * same way ({@link Execution#answered}).
 *
 * <p>Registered with the lowest priority so that it runs after every other response filter and
 * sees the final status. An answer of Idemkey's own (a problem, a replay) gets the standard reason
 * phrase of that status ({@link ServerReasonPhrase}).
 */
public final class IdempotencyResponseFilter implements ContainerResponseFilter {

    private final ResponseRecorder recorder;
    private final CurrentRequest currentRequest;
    private final ServerReasonPhrase reasonPhrase;

    IdempotencyResponseFilter(ResponseRecorder recorder, CurrentRequest currentRequest, ServerReasonPhrase reasonPhrase) {
        this.recorder = recorder;
        this.currentRequest = currentRequest;
        this.reasonPhrase = reasonPhrase;
    }

    @Override
    public void filter(ContainerRequestContext request, ContainerResponseContext response) {
        currentRequest.clearAwaiting(); // the method ran already, or never will
        if (request.getProperty(RequestProperties.ANSWERED) != null) {
            reasonPhrase.answering(request, response.getStatus()); // a problem or a replay: nothing to record
        }
        Execution execution = execution(request.getProperty(GuardedRequest.ATTRIBUTE));
        if (execution == null) {
            return;
        }
        int status = response.getStatus();
        if (execution.committedWithEffects()) {
            // recorded with the method's effects: the record takes the response as the client gets it
            if (response.hasEntity()) {
                request.setProperty(RequestProperties.STATUS_TO_RECORD, status);
            } else {
                execution.answered(recorder.record(status, response.getHeaders(), null, new byte[0]));
            }
            return;
        }
        if (!execution.isRunning()) {
            return;
        }
        if (!execution.started() && status < 400) {
            // A success can only come from the method: the interceptor did not run (the resource is
            // not a CDI bean, say). Record it rather than silently lose the protection.
            recorder.warnInterceptorMissing(execution);
            execution.markStarted();
        }
        if (!execution.recordable(status)) {
            execution.release(releaseReason(execution, status));
        } else if (response.hasEntity()) {
            request.setProperty(RequestProperties.STATUS_TO_RECORD, status);
        } else {
            execution.complete(recorder.record(status, response.getHeaders(), null, new byte[0]));
        }
    }

    private static String releaseReason(Execution execution, int status) {
        if (!execution.started()) {
            return "refused with " + status + " before the method started";
        }
        return status >= 500 ? "the method answered " + status : "the method marked its outcome retryable";
    }

    private static Execution execution(Object guarded) {
        return guarded instanceof GuardedRequest request ? request.execution() : null;
    }
}
