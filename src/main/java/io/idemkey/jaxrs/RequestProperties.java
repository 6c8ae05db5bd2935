package io.idemkey.jaxrs;

/**
 * Names of the request properties through which Idemkey's filters and interceptor share the state
 * of one request. Namespaced so that they cannot collide with an application's.
 */
final class RequestProperties {

    // The guarded request itself travels under io.idemkey.request.GuardedRequest.ATTRIBUTE.

    /** The status to record, set by the response filter when the entity still has to be written. */
    static final String STATUS_TO_RECORD = "io.idemkey.status-to-record";

    /**
     * The reason phrase of an answer of Idemkey's own, set by the response filter for the writer
     * interceptor to put on the status line ({@link ServerReasonPhrase}).
     */
    static final String REASON_PHRASE = "io.idemkey.reason-phrase";

    /** Set by the request filter when it answers itself (a problem or a replay) instead of the method. */
    static final String ANSWERED = "io.idemkey.answered";

    private RequestProperties() {
    }
}
