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
 * where Idemkey's start-up sees it, never on a request.
 */
@Dependent
public class OpenTelemetryTracer implements RequestTracer {

    static final String DECISION = "idempotency.decision";
    static final String REPLAYED = "idempotency.replayed";

    public OpenTelemetryTracer() {
        Span.getInvalid(); // NoClassDefFoundError here where the API is not visible
    }

    @Override
    public void decided(String decision, boolean replayed) {
        Span span = Span.current();
        if (span.isRecording()) {
            span.setAttribute(DECISION, decision);
            span.setAttribute(REPLAYED, replayed);
        }
    }
}
