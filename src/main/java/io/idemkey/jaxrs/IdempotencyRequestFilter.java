package io.idemkey.jaxrs;

import io.idemkey.request.Problems;
import io.idemkey.request.ReasonPhrases;
import io.idemkey.request.ResultRenderer;
import io.idemkey.request.CurrentRequest;
import io.idemkey.request.GuardedRequest;
import io.idemkey.cdi.IdempotencyRuntime;
import io.idemkey.config.IdempotencySettings;
import io.idemkey.core.Decision;
import io.idemkey.core.Fingerprint;
import io.idemkey.core.IdempotencyEngine;
import io.idemkey.core.IdempotencyPolicy;
import io.idemkey.core.KeyHeader;
import io.idemkey.core.RecordKey;
import io.idemkey.core.RequestTracer;
import io.idemkey.core.StoredResponse;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;
import jakarta.ws.rs.ext.Providers;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.security.Principal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The entry of a guarded request: validates the key header, buffers and fingerprints the entity,
 * asks the engine, and either lets the method run (holding the key) or answers at once: the
 * recorded response (replay), 400, 409, 413, 422 or 503. Registered by {@link IdempotencyFeature}
 * for each guarded resource method, with that method's resolved policy.
 */
public final class IdempotencyRequestFilter implements ContainerRequestFilter {

    private final IdempotencyRuntime runtime;
    private final IdempotencyEngine engine;
    private final Fingerprint fingerprints;
    private final IdempotencySettings settings;
    private final IdempotencyPolicy policy;
    private final Method resourceMethod;
    private final String endpoint;
    private final Problems problems;

    private final Providers providers;
    /** Where the method reads {@code @FormParam}s ({@link FormParameterUse}); null where it reads none. */
    private final ServletFormParameters formParameters;
    private final ResultRenderer renderer;
    private final CurrentRequest currentRequest;
    private final RequestTracer tracer;

    IdempotencyRequestFilter(IdempotencyRuntime runtime, IdempotencyPolicy policy, Method resourceMethod,
                             String endpoint, Problems problems, Providers providers, ServletFormParameters formParameters,
                             ResultRenderer renderer) {
        this.runtime = runtime;
        this.currentRequest = runtime.currentRequest();
        this.tracer = runtime.tracer();
        this.engine = runtime.engine();
        this.fingerprints = runtime.fingerprint();
        this.resourceMethod = resourceMethod;
        this.providers = providers;
        this.formParameters = formParameters;
        this.renderer = renderer;
        this.settings = runtime.settings();
        this.policy = policy;
        this.endpoint = endpoint;
        this.problems = problems;
    }

    @Override
    public void filter(ContainerRequestContext request) throws IOException {
        currentRequest.clearAwaiting(); // set again below only when the method runs holding a key
        if (!settings.methods().contains(request.getMethod())) {
            return;
        }
        String outcome = decide(request);
        tracer.decided(outcome, outcome.equals("replayed"));
    }

    /** Decides, answers at once where it must, and names what it decided (for the trace). */
    private String decide(ContainerRequestContext request) throws IOException {
        KeyHeader.Result header = KeyHeader.parse(request.getHeaders().get(settings.header()), settings.maxKeyLength());
        if (header instanceof KeyHeader.Missing) {
            if (policy.required()) {
                answer(request, problems.problem(Problems.Type.KEY_MISSING, "This request needs an "
                        + settings.header() + " header: send a unique value (a UUID) and reuse it when you retry."));
                return "key-missing";
            }
            return "unguarded";
        }
        if (header instanceof KeyHeader.Invalid invalid) {
            answer(request, problems.problem(Problems.Type.KEY_INVALID, "The " + settings.header()
                    + " header is invalid: " + invalid.reason() + ". Send one key of 1 to " + settings.maxKeyLength()
                    + " visible ASCII characters, for example \"8e03978e-40d5-43e8-bc93-6894a57f9324\"."));
            return "key-invalid";
        }
        String key = ((KeyHeader.Valid) header).key();
        String scope = scope(request);
        if (scope == null) {
            answer(request, problems.problem(Problems.Type.SCOPE_MISSING, "This request needs a "
                    + settings.scope().headerName() + " header: idempotency keys are kept per "
                    + settings.scope().headerName() + "."));
            return "scope-missing";
        }
        if (settings.scope().kind() == IdempotencySettings.Scope.Kind.HEADER && scope.length() > settings.maxKeyLength()) {
            answer(request, problems.problem(Problems.Type.SCOPE_INVALID, "The " + settings.scope().headerName()
                    + " header is " + scope.length() + " characters long; at most " + settings.maxKeyLength()
                    + " are accepted (as for the " + settings.header() + " header)."));
            return "scope-invalid";
        }
        byte[] entity;
        try {
            entity = bufferEntity(request);
        } catch (IOException unreadable) {
            answer(request, problems.problem(Problems.Type.REQUEST_UNREADABLE,
                    "The request body could not be read to the end. Send it again with the same key."));
            return "request-unreadable";
        }
        if (entity == null) {
            answer(request, problems.problem(Problems.Type.REQUEST_TOO_LARGE, "The request body is larger than "
                    + settings.maxRequestBytes() + " bytes, the most this endpoint accepts."));
            return "too-large";
        }
        UriInfo uri = request.getUriInfo();
        byte[] fingerprint = fingerprints.of(request.getMethod(), path(uri), query(uri),
                isJson(request.getMediaType()), entity, policy.excludeFields());
        String recordKey = RecordKey.of(settings.keyPrefix(), scope, key);

        Decision decision = engine.begin(recordKey, key, fingerprint, policy, endpoint);
        if (decision instanceof Decision.Proceed proceed) {
            GuardedRequest guarded = new GuardedRequest(proceed.execution(), resourceMethod, providers, result ->
                    renderer.render(result, request.getAcceptableMediaTypes(), request.getUriInfo().getBaseUri()));
            request.setProperty(GuardedRequest.ATTRIBUTE, guarded);
            currentRequest.awaitMethod(guarded);
            return "acquired";
        } else if (decision instanceof Decision.Replay replay) {
            answer(request, replay(replay.response()));
            return "replayed";
        } else if (decision instanceof Decision.Conflict conflict) {
            answer(request, problems.problem(Problems.Type.REQUEST_IN_PROGRESS, "A request with this "
                    + settings.header() + " is still being processed. Retry with the same key after the time in"
                    + " Retry-After to receive its response.", conflict.retryAfter()));
            return "conflict";
        } else if (decision instanceof Decision.Mismatch) {
            answer(request, problems.problem(Problems.Type.KEY_REUSED, "This " + settings.header()
                    + " was already used for a different request (another method, path, query or body)."
                    + " Use a new key for a new request."));
            return "mismatch";
        } else if (decision instanceof Decision.RateLimited limited) {
            answer(request, problems.problem(Problems.Type.RATE_LIMITED, "This " + settings.header()
                    + " was sent more often than " + settings.rateLimit().orElseThrow() + " allows. Retry with the same key"
                    + " after the time in Retry-After.", limited.retryAfter()));
            return "rate-limited";
        } else if (decision instanceof Decision.Unavailable unavailable) {
            answer(request, problems.problem(Problems.Type.STORE_UNAVAILABLE, "The request was not processed"
                    + " because its idempotency cannot be guaranteed right now. Retry with the same key after"
                    + " the time in Retry-After.", unavailable.retryAfter()));
            return "unavailable";
        } else if (decision instanceof Decision.Unprotected) {
            return "unprotected"; // the endpoint fails open and runs without a key
        }
        throw new IllegalStateException("unknown decision " + decision);
    }

    /** Answers in place of the method: a problem or a replay ({@link ServerReasonPhrase} gives it the standard phrase). */
    private static void answer(ContainerRequestContext request, Response response) {
        request.setProperty(RequestProperties.ANSWERED, Boolean.TRUE);
        request.abortWith(response);
    }

    private Response replay(StoredResponse stored) {
        String phrase = ReasonPhrases.of(stored.status());
        Response.ResponseBuilder response = phrase == null ? Response.status(stored.status())
                : Response.status(stored.status(), phrase);
        for (StoredResponse.Header header : stored.headers()) {
            response.header(header.name(), header.value());
        }
        if (stored.bodyLength() > 0) {
            response.entity(stored.body());
        }
        return response.header(settings.replayedHeader(), "true").build();
    }

    /**
     * The entity, read once and handed on unchanged; null if it exceeds the limit. With a
     * {@code Content-Length}, read into an array of that size, and on to the end or the limit if the
     * stream holds more (a filter before this one decoded the body and left the header); without
     * one, read up to the limit. A form's parameters are handed on too where the method reads them one
     * by one and the runtime would look for them in the stream just read ({@link ServletFormParameters}).
     */
    private byte[] bufferEntity(ContainerRequestContext request) throws IOException {
        int limit = settings.maxRequestBytes();
        long declared = declaredLength(request);
        if (declared > limit) {
            return null;
        }
        if (!request.hasEntity()) {
            return new byte[0];
        }
        InputStream in = request.getEntityStream();
        byte[] entity = in.readNBytes(declared >= 0 ? (int) declared : limit + 1);
        if (declared >= 0 && entity.length == declared) {
            int next = in.read();
            if (next >= 0) {
                byte[] rest = in.readNBytes(limit - entity.length);
                byte[] whole = Arrays.copyOf(entity, entity.length + 1 + rest.length);
                whole[entity.length] = (byte) next;
                System.arraycopy(rest, 0, whole, entity.length + 1, rest.length);
                entity = whole;
            }
        }
        if (entity.length > limit) {
            return null;
        }
        request.setEntityStream(new ByteArrayInputStream(entity));
        if (formParameters != null) {
            formParameters.restored(request, entity);
        }
        return entity;
    }

    /** Content-Length as a long (RESTEasy's getLength() throws above 2 GiB); -1 if absent or unreadable. */
    private static long declaredLength(ContainerRequestContext request) {
        String length = request.getHeaderString(HttpHeaders.CONTENT_LENGTH);
        try {
            return length == null ? -1 : Long.parseLong(length.trim());
        } catch (NumberFormatException e) {
            return -1; // the bounded read below decides
        }
    }

    /**
     * Who is calling: the key space of one caller never reaches another's. Anonymous callers share
     * one scope; with a header scope, a request without the header has none (null).
     */
    private String scope(ContainerRequestContext request) {
        return switch (settings.scope().kind()) {
            case PRINCIPAL -> {
                Principal principal = request.getSecurityContext() == null ? null
                        : request.getSecurityContext().getUserPrincipal();
                yield principal == null ? "" : principal.getName();
            }
            case HEADER -> {
                List<String> values = request.getHeaders().get(settings.scope().headerName());
                yield values == null || values.isEmpty() || values.get(0).isBlank() ? null : String.join(",", values);
            }
            case GLOBAL -> "";
        };
    }

    /** The path relative to the application root, percent-encoded, with exactly one leading slash. */
    static String path(UriInfo uri) {
        String path = uri.getPath(false);
        int start = 0;
        while (start < path.length() && path.charAt(start) == '/') {
            start++;
        }
        return "/" + path.substring(start);
    }

    private static List<Map.Entry<String, String>> query(UriInfo uri) {
        if (uri.getRequestUri().getRawQuery() == null) {
            return List.of(); // most guarded requests: no map of parameters to build
        }
        MultivaluedMap<String, String> parameters = uri.getQueryParameters(false);
        List<Map.Entry<String, String>> query = new ArrayList<>();
        parameters.forEach((name, values) -> values.forEach(value -> query.add(Map.entry(name, value))));
        return query;
    }

    private static boolean isJson(MediaType type) {
        return type != null && "application".equalsIgnoreCase(type.getType())
                && ("json".equalsIgnoreCase(type.getSubtype()) || type.getSubtype().toLowerCase(Locale.ROOT).endsWith("+json"));
    }

    @Override
    public String toString() {
        return "IdempotencyRequestFilter[" + endpoint + "]";
    }
}
