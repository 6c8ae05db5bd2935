package io.idemkey.openapi;

import io.idemkey.cdi.IdempotencyExtension;
import io.idemkey.config.IdempotencySettings;
import io.idemkey.core.GuardedEndpoint;
import org.eclipse.microprofile.openapi.OASFactory;
import org.eclipse.microprofile.openapi.OASFilter;
import org.eclipse.microprofile.openapi.models.Components;
import org.eclipse.microprofile.openapi.models.OpenAPI;
import org.eclipse.microprofile.openapi.models.Operation;
import org.eclipse.microprofile.openapi.models.PathItem;
import org.eclipse.microprofile.openapi.models.headers.Header;
import org.eclipse.microprofile.openapi.models.media.Content;
import org.eclipse.microprofile.openapi.models.media.Schema;
import org.eclipse.microprofile.openapi.models.parameters.Parameter;
import org.eclipse.microprofile.openapi.models.responses.APIResponse;
import org.eclipse.microprofile.openapi.models.responses.APIResponses;

import java.math.BigDecimal;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.logging.Logger;

/**
 * Documents every operation Idemkey guards in the application's OpenAPI document: the
 * {@code Idempotency-Key} request header (required or not, its syntax, how long a key is replayed),
 * the problem answers (400, 409, 413, 422, 503, and 429 with a rate limit) and the
 * {@code Idempotent-Replayed} response header, plus an {@code x-idempotency} extension with the
 * policy in figures.
 *
 * <p>It is the default {@code mp.openapi.filter} of an application that has Idemkey (the jar's
 * {@code META-INF/microprofile-config.properties}, at ordinal 50, below the application's own). An
 * application with its own filter keeps Idemkey's by extending this class (and calling
 * {@code super.filterOpenAPI(openAPI)} if it overrides that method).
 */
public class IdempotencyOASFilter implements OASFilter {

    static final String PROBLEM_SCHEMA = "IdempotencyProblem";
    static final String EXTENSION = "x-idempotency";

    private static final Logger LOG = Logger.getLogger(IdempotencyOASFilter.class.getName());
    private static volatile boolean linkageReported;

    @Override
    public void filterOpenAPI(OpenAPI openAPI) {
        try {
            documentGuardedOperations(openAPI);
        } catch (LinkageError | RuntimeException e) {
            // a MicroProfile OpenAPI whose models differ from the ones Idemkey knows (or behave in a way
            // it did not expect): the application's document must come out whole, with or without
            // Idemkey's additions (the problem schema goes in before any operation refers to it)
            if (!linkageReported) {
                linkageReported = true;
                LOG.warning("Idemkey: guarded operations are not documented in /openapi: this server's MicroProfile"
                        + " OpenAPI is not one Idemkey supports (3.x, 4.x): " + e);
            }
        }
    }

    private void documentGuardedOperations(OpenAPI openAPI) {
        Optional<IdempotencyExtension> extension = IdempotencyExtension.current();
        if (extension.isEmpty() || extension.get().settings().isEmpty() || openAPI.getPaths() == null
                || openAPI.getPaths().getPathItems() == null) {
            return;
        }

        IdempotencySettings settings = extension.get().settings().get();
        List<GuardedEndpoint> endpoints = extension.get().endpoints();
        String applicationPath = applicationPath(openAPI.getPaths().getPathItems().keySet(), endpoints);
        List<Map.Entry<Operation, GuardedEndpoint>> guardedOperations = new java.util.ArrayList<>();
        for (Map.Entry<String, PathItem> path : openAPI.getPaths().getPathItems().entrySet()) {
            Map<PathItem.HttpMethod, Operation> operations = path.getValue().getOperations();
            if (operations == null) {
                continue;
            }
            for (Map.Entry<PathItem.HttpMethod, Operation> operation : operations.entrySet()) {
                match(endpoints, operation.getKey().name(), path.getKey(), applicationPath)
                        .ifPresent(guarded -> guardedOperations.add(Map.entry(operation.getValue(), guarded)));
            }
        }
        if (!guardedOperations.isEmpty()) {
            addProblemSchema(openAPI); // first: a failure later leaves no reference to a missing schema
            guardedOperations.forEach(guarded -> document(guarded.getKey(), guarded.getValue(), settings));
        }
    }

    /**
     * The application path the document's paths start with ({@code /api}), while the endpoints' are
     * relative to it: the prefix that most guarded endpoints' templates complete into a document
     * path (the shortest where that ties), so that {@code /admin/orders} is not taken for
     * {@code /orders}.
     */
    static String applicationPath(Set<String> documentPaths, List<GuardedEndpoint> endpoints) {
        Map<String, Integer> votes = new HashMap<>();
        for (GuardedEndpoint endpoint : endpoints) {
            String template = normalize(endpoint.pathTemplate());
            if (template.equals("/")) {
                continue; // says nothing about the prefix
            }
            for (String documentPath : documentPaths) {
                String path = normalize(documentPath);
                String prefix = path.substring(0, Math.max(0, path.length() - template.length()));
                if (path.endsWith(template) && (prefix.isEmpty() || prefix.startsWith("/") && !prefix.endsWith("/"))) {
                    votes.merge(prefix, 1, Integer::sum);
                }
            }
        }
        return votes.entrySet().stream()
                .max(Comparator.<Map.Entry<String, Integer>>comparingInt(Map.Entry::getValue)
                        .thenComparing(e -> -e.getKey().length()))
                .map(Map.Entry::getKey).orElse("");
    }

    /** The guarded endpoint at this document path: the application path followed by its template. */
    static Optional<GuardedEndpoint> match(List<GuardedEndpoint> endpoints, String httpMethod, String documentPath,
                                           String applicationPath) {
        String path = normalize(documentPath);
        for (GuardedEndpoint endpoint : endpoints) {
            String template = normalize(endpoint.pathTemplate());
            String expected = normalize(applicationPath + (template.equals("/") ? "" : template));
            if (endpoint.httpMethod().equalsIgnoreCase(httpMethod) && path.equals(expected)) {
                return Optional.of(endpoint);
            }
        }
        return Optional.empty();
    }

    /** {@code /orders/{id: [0-9]+}/} → {@code /orders/{id}}. */
    static String normalize(String path) {
        String normalized = path.replaceAll("\\{\\s*([^:}\\s]+)\\s*(:[^}]*)?}", "{$1}").replaceAll("/+", "/");
        if (normalized.length() > 1 && normalized.endsWith("/")) {
            normalized = normalized.substring(0, normalized.length() - 1);
        }
        return normalized.startsWith("/") ? normalized : "/" + normalized;
    }

    private static void document(Operation operation, GuardedEndpoint endpoint, IdempotencySettings settings) {
        long ttlHours = endpoint.policy().ttl().toHours();
        if (operation.getParameters() == null || operation.getParameters().stream().noneMatch(p ->
                p.getIn() == Parameter.In.HEADER && settings.header().equalsIgnoreCase(p.getName()))) {
            operation.addParameter(OASFactory.createParameter()
                    .name(settings.header())
                    .in(Parameter.In.HEADER)
                    .required(endpoint.policy().required())
                    .description("A unique key for this operation (a UUID), reused on every retry of it: the"
                            + " operation runs at most once per key, and a retry with the same key within "
                            + ttlHours + " hours gets the first response again, marked " + settings.replayedHeader()
                            + ": true. An RFC 8941 string (\"8e03978e-40d5-43e8-bc93-6894a57f9324\") or a bare"
                            + " token of 1 to " + settings.maxKeyLength() + " visible ASCII characters"
                            + " (draft-ietf-httpapi-idempotency-key-header)."
                            + (endpoint.policy().required() ? "" : " Without it the request runs unprotected."))
                    .schema(SchemaTypes.typed(OASFactory.createSchema(), Schema.SchemaType.STRING).minLength(1)
                            .maxLength(settings.maxKeyLength() + 2))
                    .example("\"8e03978e-40d5-43e8-bc93-6894a57f9324\""));
        }
        Map<String, Object> policy = new LinkedHashMap<>(); // durations in ISO-8601: PT24H
        policy.put("header", settings.header());
        policy.put("required", endpoint.policy().required());
        policy.put("replay-window", endpoint.policy().ttl().toString());
        policy.put("lock-ttl", endpoint.policy().lockTtl().toString());
        policy.put("replayed-header", settings.replayedHeader());
        settings.rateLimit().ifPresent(limit -> policy.put("rate-limit-per-key",
                Map.of("requests", limit.permits(), "window", limit.window().toString())));
        operation.addExtension(EXTENSION, policy);

        APIResponses responses = operation.getResponses();
        if (responses == null) {
            responses = OASFactory.createAPIResponses();
            operation.setResponses(responses);
        }
        Header replayed = OASFactory.createHeader()
                .description("true when this is the recorded response of an earlier request with the same "
                        + settings.header() + " (kept " + ttlHours + " hours), replayed without running the operation again")
                .schema(SchemaTypes.typed(OASFactory.createSchema(), Schema.SchemaType.STRING).enumeration(List.of("true")));
        if (responses.getAPIResponses() != null) {
            for (Map.Entry<String, APIResponse> response : responses.getAPIResponses().entrySet()) {
                if (response.getKey().startsWith("2") || response.getKey().startsWith("4") || response.getKey().equals("default")) {
                    response.getValue().addHeader(settings.replayedHeader(), replayed);
                }
            }
        }
        problem(responses, "400", settings.header() + " missing or invalid (problem types key-missing, key-invalid)", false);
        problem(responses, "409", "A request with this " + settings.header() + " is still being processed: retry with the"
                + " same key after Retry-After (request-in-progress)", true);
        problem(responses, "413", "The request body is larger than Idemkey buffers (request-too-large)", false);
        problem(responses, "422", "This " + settings.header() + " was used for a different request: use a new key"
                + " (key-reused)", false);
        if (settings.rateLimit().isPresent()) {
            problem(responses, "429", "This " + settings.header() + " was sent more often than "
                    + settings.rateLimit().get() + " allows: retry after Retry-After (rate-limited)", true);
        }
        problem(responses, "503", "Idempotency cannot be guaranteed right now (the store is unreachable): retry with"
                + " the same key after Retry-After (store-unavailable)", true);
    }

    private static void problem(APIResponses responses, String status, String description, boolean retryAfter) {
        if (responses.hasAPIResponse(status)) {
            return; // the application documented it: leave its words alone
        }
        Content content = OASFactory.createContent().addMediaType("application/problem+json",
                OASFactory.createMediaType().schema(OASFactory.createSchema().ref(PROBLEM_SCHEMA)));
        APIResponse response = OASFactory.createAPIResponse().description(description).content(content);
        if (retryAfter) {
            response.addHeader("Retry-After", OASFactory.createHeader().description("Seconds to wait before retrying")
                    .schema(SchemaTypes.typed(OASFactory.createSchema(), Schema.SchemaType.INTEGER).minimum(BigDecimal.ONE)));
        }
        responses.addAPIResponse(status, response);
    }

    private static void addProblemSchema(OpenAPI openAPI) {
        Components components = openAPI.getComponents();
        if (components == null) {
            components = OASFactory.createComponents();
            openAPI.setComponents(components);
        }
        if (components.getSchemas() != null && components.getSchemas().containsKey(PROBLEM_SCHEMA)) {
            return;
        }
        components.addSchema(PROBLEM_SCHEMA, SchemaTypes.typed(OASFactory.createSchema(), Schema.SchemaType.OBJECT)
                .description("An RFC 9457 problem answered by Idemkey; type is one of"
                        + " https://idemkey.io/problems/{key-missing, key-invalid, key-reused, request-in-progress,"
                        + " request-too-large, rate-limited, store-unavailable}")
                .addProperty("type", SchemaTypes.typed(OASFactory.createSchema(), Schema.SchemaType.STRING).format("uri"))
                .addProperty("title", SchemaTypes.typed(OASFactory.createSchema(), Schema.SchemaType.STRING))
                .addProperty("status", SchemaTypes.typed(OASFactory.createSchema(), Schema.SchemaType.INTEGER))
                .addProperty("detail", SchemaTypes.typed(OASFactory.createSchema(), Schema.SchemaType.STRING)));
    }

}
