package io.idemkey.core;

/**
 * Tells the tracing system (the current span, where the server has MicroProfile Telemetry) what
 * Idemkey decided for the request being handled on this thread.
 */
public interface RequestTracer {

    /**
     * @param decision what was decided: {@code acquired}, {@code replayed}, {@code conflict},
     *                 {@code mismatch}, {@code unavailable}, {@code unprotected}, {@code rate-limited},
     *                 {@code key-missing}, {@code key-invalid}, {@code too-large}, {@code unguarded}
     * @param replayed whether the answer is a recorded response
     */
    void decided(String decision, boolean replayed);

    /** Traces nothing. */
    RequestTracer NONE = (decision, replayed) -> {
    };
}
