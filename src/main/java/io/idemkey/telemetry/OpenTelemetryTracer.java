package io.idemkey.telemetry;

import io.idemkey.core.RequestTracer;
import io.opentelemetry.api.trace.Span;
import jakarta.enterprise.context.Dependent;

/**
 * Puts Idemkey's decision on the request's current span ({@code idempotency.decision},
 * {@code idempotency.replayed}), where the server has MicroProfile Telemetry (Open Liberty
 * {@code mpTelemetry-*}, Payara Micro with OpenTelemetry on); while no span is recording, it does
 * nothing.
 *
 * <p>Where the OpenTelemetry API is not visible to the application, CDI may still create this bean
 * (no field or signature names the API): its constructor touches the API, so that it fails there,
 * where Idemkey's start-up sees it (and steps aside with one log line), never on a request. It
 * touches every method a request calls, on the invalid span (which ignores them): an API whose
 * methods differ from those this class was compiled against (OpenTelemetry 1.x has kept them since
 * 1.0) fails there too, each call site of this class being linked once.
 */
@Dependent
public class OpenTelemetryTracer implements RequestTracer {

    static final String DECISION = "idempotency.decision";
    static final String REPLAYED = "idempotency.replayed";

    public OpenTelemetryTracer() {
        // NoClassDefFoundError here where the API is not visible, NoSuchMethodError where it lacks one
        // of the methods decided() calls: the same constant pool entries, resolved here first
        Span.current();
        Span invalid = Span.getInvalid();
        if (!invalid.isRecording()) {
            record(invalid, "none", false); // ignored by the invalid span
        }
    }

    @Override
    public void decided(String decision, boolean replayed) {
        Span span = Span.current();
        if (span.isRecording()) {
            record(span, decision, replayed);
        }
    }

    private static void record(Span span, String decision, boolean replayed) {
        span.setAttribute(DECISION, decision);
        span.setAttribute(REPLAYED, replayed);
    }
}
