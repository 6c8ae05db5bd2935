package io.idemkey.jaxrs;

import io.idemkey.request.ResponseRecorder;
import io.idemkey.request.GuardedRequest;
import io.idemkey.core.Execution;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.ext.WriterInterceptor;
import jakarta.ws.rs.ext.WriterInterceptorContext;

import java.io.IOException;
import java.io.OutputStream;

/**
 * Records a guarded response's entity: captures the exact bytes its writer produces, completes the
 * record, and only then lets the bytes reach the client, so that an immediate retry is replayed
 * rather than refused with 409. Registered innermost (closest to the entity writer), so compression
 * and other encoders apply to replays the same way. Before an answer of Idemkey's own is written,
 * has its standard reason phrase set where the runtime set the status already ({@link ServerReasonPhrase}).
 */
public final class IdempotencyWriterInterceptor implements WriterInterceptor {

    private final ResponseRecorder recorder;
    private final ServerReasonPhrase reasonPhrase;

    IdempotencyWriterInterceptor(ResponseRecorder recorder, ServerReasonPhrase reasonPhrase) {
        this.recorder = recorder;
        this.reasonPhrase = reasonPhrase;
    }

    @Override
    public void aroundWriteTo(WriterInterceptorContext context) throws IOException, WebApplicationException {
        reasonPhrase.writing(context); // an answer of Idemkey's own: its phrase, before the entity
        Execution execution = execution(context.getProperty(GuardedRequest.ATTRIBUTE));
        Integer status = (Integer) context.getProperty(RequestProperties.STATUS_TO_RECORD);
        if (execution == null || status == null) {
            context.proceed();
            return;
        }
        if (execution.committedWithEffects()) {
            answerCommitted(context, execution, status);
            return;
        }
        if (!execution.isRunning()) {
            context.proceed();
            return;
        }
        OutputStream original = context.getOutputStream();
        CaptureOutputStream capture = new CaptureOutputStream(original, recorder.captureLimit());
        context.setOutputStream(capture);
        execution.workBegins(); // a StreamingOutput does the method's work here: keep the lease
        try {
            context.proceed();
        } catch (IOException | RuntimeException | Error e) {
            execution.release("the response entity could not be written: " + e);
            throw e;
        } finally {
            execution.workEnded();
            context.setOutputStream(original);
        }
        if (capture.overflowed()) {
            execution.releaseUnrecorded("the response entity is larger than " + recorder.captureLimit()
                    + " bytes; it was streamed to the client without being recorded");
            return;
        }
        byte[] body = capture.captured();
        execution.complete(recorder.record(status, context.getHeaders(), context.getMediaType(), body));
        original.write(body);
    }

    /**
     * The record committed with the method's effects: its response is compared with the bytes as
     * written, before they reach the client. One too large to capture is streamed as it is and the
     * record keeps the committed response.
     */
    private void answerCommitted(WriterInterceptorContext context, Execution execution, int status) throws IOException {
        OutputStream original = context.getOutputStream();
        CaptureOutputStream capture = new CaptureOutputStream(original, recorder.captureLimit());
        context.setOutputStream(capture);
        try {
            context.proceed();
        } finally {
            context.setOutputStream(original);
        }
        if (capture.overflowed()) {
            return;
        }
        byte[] body = capture.captured();
        execution.answered(recorder.record(status, context.getHeaders(), context.getMediaType(), body));
        original.write(body);
    }

    private static Execution execution(Object guarded) {
        return guarded instanceof GuardedRequest request ? request.execution() : null;
    }
}
