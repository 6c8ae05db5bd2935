package io.idemkey.request;

import jakarta.json.spi.JsonProvider;
import jakarta.json.stream.JsonGenerator;
import jakarta.json.stream.JsonGeneratorFactory;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.Response;

import java.io.StringWriter;
import java.time.Duration;
import java.util.Map;

/**
 * Idemkey's own answers, as RFC 9457 {@code application/problem+json} with a stable {@code type}
 * URI per case. None of them reveals anything about another request (its state or its body).
 */
public final class Problems {

    /** The media type of every problem answer. */
    public static final String MEDIA_TYPE = "application/problem+json";

    /** The problem types: stable, documented in docs/http.md. */
    public enum Type {
        KEY_MISSING(400, "key-missing", "Idempotency key missing"),
        KEY_INVALID(400, "key-invalid", "Idempotency key invalid"),
        SCOPE_MISSING(400, "scope-missing", "Caller scope missing"),
        SCOPE_INVALID(400, "scope-invalid", "Caller scope invalid"),
        REQUEST_UNREADABLE(400, "request-unreadable", "Request body unreadable"),
        REQUEST_TOO_LARGE(413, "request-too-large", "Request too large"),
        KEY_REUSED(422, "key-reused", "Idempotency key reused"),
        REQUEST_IN_PROGRESS(409, "request-in-progress", "Request in progress"),
        KEY_TAKEN_OVER(409, "key-taken-over", "Idempotency key taken over"),
        RATE_LIMITED(429, "rate-limited", "Too many requests with this key"),
        STORE_UNAVAILABLE(503, "store-unavailable", "Idempotency store unavailable"),
        MISCONFIGURED(500, "misconfigured", "Idempotency key placement not honoured"),
        ADMIN_UNAUTHENTICATED(401, "admin-unauthenticated", "Authentication required"),
        ADMIN_FORBIDDEN(403, "admin-forbidden", "Not allowed"),
        ADMIN_BAD_REQUEST(400, "admin-bad-request", "Invalid admin request"),
        ADMIN_NOT_FOUND(404, "admin-not-found", "No such record"),
        ADMIN_KEY_IN_PROGRESS(409, "admin-key-in-progress", "Key in progress");

        private final int status;
        private final String uri;
        private final String title;

        Type(int status, String slug, String title) {
            this.status = status;
            this.uri = "https://idemkey.io/problems/" + slug;
            this.title = title;
        }

        public int status() {
            return status;
        }

        public String uri() {
            return uri;
        }

        public String title() {
            return title;
        }
    }

    private final JsonGeneratorFactory json = JsonProvider.provider().createGeneratorFactory(Map.of());

    public Response problem(Type type, String detail) {
        return problem(type, detail, null);
    }

    /** A problem answer; with {@code retryAfter}, a {@code Retry-After} header in whole seconds. */
    public Response problem(Type type, String detail, Duration retryAfter) {
        StringWriter body = new StringWriter();
        try (JsonGenerator generator = json.createGenerator(body)) {
            generator.writeStartObject()
                    .write("type", type.uri)
                    .write("title", type.title)
                    .write("status", type.status)
                    .write("detail", detail)
                    .writeEnd();
        }
        Response.ResponseBuilder response = Response.status(type.status, ReasonPhrases.of(type.status)).type(MEDIA_TYPE).entity(body.toString());
        if (retryAfter != null) {
            response.header(HttpHeaders.RETRY_AFTER, Math.max(1, retryAfter.toSeconds()));
        }
        return response.build();
    }
}
