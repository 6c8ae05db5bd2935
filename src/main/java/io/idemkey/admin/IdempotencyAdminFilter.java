package io.idemkey.admin;

import io.idemkey.cdi.IdempotencyExtension;
import io.idemkey.cdi.IdempotencyRuntime;
import io.idemkey.config.AdminSettings;
import io.idemkey.core.RecordAdmin;
import io.idemkey.request.Problems;
import io.idemkey.spi.StoreInspection;
import io.idemkey.spi.StoreUnavailableException;
import jakarta.enterprise.inject.spi.CDI;
import jakarta.json.spi.JsonProvider;
import jakarta.json.stream.JsonGenerator;
import jakarta.json.stream.JsonGeneratorFactory;
import jakarta.ws.rs.HttpMethod;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.container.PreMatching;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;
import jakarta.ws.rs.ext.Provider;

import java.io.StringWriter;
import java.security.Principal;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The admin API: answers the requests under {@code <application path>/<idempotency.admin.path>/}
 * itself, before any resource is matched, and only where {@code idempotency.admin.enabled=true}.
 * Elsewhere it does nothing at all: the application answers those paths as it answers any path it
 * does not have (404), and no resource, OpenAPI operation or route exists for them. (A {@code @Path}
 * resource in Idemkey's jar would be found by every server's scanning in every application, enabled
 * or not; this provider is discovered the same way as {@code IdempotencyFeature}, and stays inert.)
 *
 * <p>Callers: the platform authenticates them (the application's Jakarta Security mechanism or the
 * server's realm, as for the application's own resources); here an anonymous caller gets 401, one not
 * in {@code idempotency.admin.role} 403 ({@link SecurityContext#isUserInRole}); neither answer names
 * the role. Operations, all answering JSON, problems as {@code application/problem+json} (a store that
 * fails, reachable or not, 503: never the container's own error page):
 * <ul>
 * <li>{@code GET keys?caller=<scope value>&key=<Idempotency-Key>[&body=true]}, {@code GET calls?scope=&key=}:
 *     the record, 404 if none; every look-up of a body in one audit line;</li>
 * <li>{@code DELETE keys?caller=&key=&reason=[&force=true]}, {@code DELETE calls?scope=&key=&reason=[&force=true]}:
 *     purge, 409 for a key in progress without {@code force}, 404 if none; one audit line each;</li>
 * <li>{@code GET stuck?older-than=<ISO-8601 duration or seconds>[&limit=100][&cursor=]}: a page of the keys
 *     in progress at least that long.</li>
 * </ul>
 */
@Provider
@PreMatching
public class IdempotencyAdminFilter implements ContainerRequestFilter {

    private static final Logger LOG = Logger.getLogger(IdempotencyAdminFilter.class.getName());
    private static final JsonGeneratorFactory JSON = JsonProvider.provider().createGeneratorFactory(Map.of());
    private static final int DEFAULT_LIMIT = 100;

    private final Problems problems = new Problems();
    /** The settings validated at deployment; disabled where validation did not run (the deployment failed). */
    private volatile AdminSettings settings;

    @Override
    public void filter(ContainerRequestContext request) {
        AdminSettings settings = settings();
        if (!settings.enabled()) {
            return; // nothing else: not even Idemkey's runtime is looked up
        }
        String path = request.getUriInfo().getPath();
        path = path.startsWith("/") ? path.substring(1) : path;
        if (!path.equals(settings.path()) && !path.startsWith(settings.path() + "/")) {
            return;
        }
        String operation = path.substring(settings.path().length()).replaceAll("^/+|/+$", "");
        SecurityContext security = request.getSecurityContext();
        Principal caller = security == null ? null : security.getUserPrincipal();
        if (caller == null) {
            // the details name no role: a caller probing the API learns nothing about who may use it
            request.abortWith(Response.fromResponse(problems.problem(Problems.Type.ADMIN_UNAUTHENTICATED,
                            "The idempotency admin API needs an authenticated caller."))
                    .header(HttpHeaders.WWW_AUTHENTICATE, "Basic").build());
            return;
        }
        if (!security.isUserInRole(settings.role())) {
            request.abortWith(problems.problem(Problems.Type.ADMIN_FORBIDDEN,
                    "The idempotency admin API is not open to this caller."));
            return;
        }
        RecordAdmin admin = CDI.current().select(IdempotencyRuntime.class).get().recordAdmin().orElseThrow();
        MultivaluedMap<String, String> query = request.getUriInfo().getQueryParameters();
        try {
            request.abortWith(answer(admin, settings, request.getMethod(), operation, query, caller.getName()));
        } catch (IllegalArgumentException e) {
            request.abortWith(problems.problem(Problems.Type.ADMIN_BAD_REQUEST, e.getMessage()));
        } catch (StoreUnavailableException e) {
            request.abortWith(problems.problem(Problems.Type.STORE_UNAVAILABLE,
                    "The idempotency store cannot be reached now: " + e.getMessage()));
        } catch (RuntimeException e) { // the store's own error (a reply it did not expect, a refused command)
            LOG.log(Level.SEVERE, "The idempotency admin API's " + request.getMethod() + " " + operation
                    + " failed in the store", e);
            request.abortWith(problems.problem(Problems.Type.STORE_UNAVAILABLE,
                    "The idempotency store failed to answer (" + e.getClass().getSimpleName()
                            + "); the server's log has the error."));
        }
    }

    private Response answer(RecordAdmin admin, AdminSettings settings, String method, String operation,
                            MultivaluedMap<String, String> query, String who) {
        boolean get = HttpMethod.GET.equals(method);
        boolean delete = HttpMethod.DELETE.equals(method);
        if ((operation.equals("keys") || operation.equals("calls")) && (get || delete)) {
            String storeKey = operation.equals("keys")
                    ? admin.requestStoreKey(param(query, "caller", true), param(query, "key", false))
                    : admin.callStoreKey(param(query, "scope", false), param(query, "key", false));
            if (get) {
                boolean body = flag(query, "body");
                if (body && !settings.showBodies()) {
                    admin.bodyRefused(storeKey, who);
                    return problems.problem(Problems.Type.ADMIN_FORBIDDEN, "Bodies are not shown: "
                            + AdminSettings.SHOW_BODIES + " is not true.");
                }
                return (body ? admin.lookUpWithBody(storeKey, who) : admin.lookUp(storeKey)).map(state -> json(g -> {
                    g.writeStartObject();
                    state(g, state);
                    g.writeEnd();
                })).orElseGet(() -> problems.problem(Problems.Type.ADMIN_NOT_FOUND, "No record lives under " + storeKey + "."));
            }
            String reason = query.getFirst("reason");
            RecordAdmin.checkReason(reason);
            boolean force = flag(query, "force");
            StoreInspection.Purge outcome = admin.purge(storeKey, force, who, reason);
            return switch (outcome) {
                case PURGED -> json(g -> g.writeStartObject().write("storeKey", storeKey).write("purged", true)
                        .write("forced", force).writeEnd());
                case ABSENT -> problems.problem(Problems.Type.ADMIN_NOT_FOUND, "No record lives under " + storeKey + ".");
                case IN_PROGRESS -> problems.problem(Problems.Type.ADMIN_KEY_IN_PROGRESS, "The key " + storeKey
                        + " is in progress: its request may still be running. Purge it with force=true only when you"
                        + " know it is not (its owner then loses the lease, and a retry runs again).");
            };
        }
        if (operation.equals("stuck") && get) {
            Duration olderThan = duration(param(query, "older-than", false));
            int limit = Optional.ofNullable(query.getFirst("limit")).map(IdempotencyAdminFilter::limit).orElse(DEFAULT_LIMIT);
            String cursor = Optional.ofNullable(query.getFirst("cursor")).orElse("");
            RecordAdmin.StuckPage page = admin.stuck(olderThan, cursor, limit);
            return json(g -> {
                g.writeStartObject().writeStartArray("records");
                for (RecordAdmin.KeyState state : page.records()) {
                    g.writeStartObject();
                    state(g, state);
                    g.writeEnd();
                }
                g.writeEnd().write("nextCursor", page.nextCursor()).writeEnd();
            });
        }
        return problems.problem(Problems.Type.ADMIN_BAD_REQUEST, method + " " + settings.path() + "/" + operation
                + " is not an operation of the admin API: GET or DELETE keys or calls, GET stuck.");
    }

    private static void state(JsonGenerator g, RecordAdmin.KeyState state) {
        g.write("storeKey", state.storeKey())
                .write("state", state.completed() ? "completed" : "in-progress")
                .write("fingerprint", state.fingerprint());
        if (state.completed()) {
            g.write("ttlLeftMs", state.timeLeft().toMillis()).write("sizeBytes", state.size());
            if (state.status() != null) {
                g.write("status", state.status());
            }
            if (state.age() != null) {
                g.write("ageMs", state.age().toMillis());
            }
            if (state.body() != null) {
                g.writeStartObject("response").writeStartArray("headers");
                state.body().headers().forEach(h -> g.writeStartObject().write("name", h.name()).write("value", h.value()).writeEnd());
                g.writeEnd();
                if (state.body().text() != null) {
                    g.write("body", state.body().text());
                } else {
                    g.write("unreadable", state.body().unreadable());
                }
                g.writeEnd();
            }
        } else {
            g.write("leaseLeftMs", state.timeLeft().toMillis());
            if (state.ownerAge() != null) {
                g.write("ownerAgeMs", state.ownerAge().toMillis());
            }
        }
    }

    private static String param(MultivaluedMap<String, String> query, String name, boolean mayBeEmpty) {
        List<String> values = query.get(name);
        if (values == null || values.isEmpty() || (!mayBeEmpty && values.get(0).isEmpty())) {
            throw new IllegalArgumentException("The query parameter '" + name + "' is required"
                    + (mayBeEmpty ? " (empty for the global scope)." : "."));
        }
        if (values.size() > 1) {
            throw new IllegalArgumentException("The query parameter '" + name + "' is given " + values.size() + " times.");
        }
        return values.get(0);
    }

    private static boolean flag(MultivaluedMap<String, String> query, String name) {
        String value = query.getFirst(name);
        if (value == null || value.equals("false")) {
            return false;
        }
        if (value.equals("true")) {
            return true;
        }
        throw new IllegalArgumentException("The query parameter '" + name + "' is true or false, not '" + value + "'.");
    }

    private static int limit(String value) {
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("The limit is a number from 1 to 1000, not '" + value + "'.");
        }
    }

    /** An ISO-8601 duration ({@code PT15M}) or whole seconds ({@code 900}). */
    static Duration duration(String value) {
        try {
            return value.chars().allMatch(Character::isDigit) && !value.isEmpty() && value.length() < 12
                    ? Duration.ofSeconds(Long.parseLong(value)) : Duration.parse(value);
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("The age '" + value + "' is neither whole seconds nor an ISO-8601"
                    + " duration such as PT15M.");
        }
    }

    private static Response json(java.util.function.Consumer<JsonGenerator> writer) {
        StringWriter out = new StringWriter();
        try (JsonGenerator generator = JSON.createGenerator(out)) {
            writer.accept(generator);
        }
        return Response.ok(out.toString(), MediaType.APPLICATION_JSON_TYPE).build();
    }

    private AdminSettings settings() {
        AdminSettings known = settings;
        if (known == null) {
            try {
                known = CDI.current().getBeanManager().getExtension(IdempotencyExtension.class).admin()
                        .orElse(AdminSettings.DISABLED);
            } catch (RuntimeException noExtension) { // not this application's CDI container (a shared library): off
                LOG.log(Level.WARNING, "Idemkey's admin API is off here: its settings cannot be read from CDI", noExtension);
                known = AdminSettings.DISABLED;
            }
            settings = known;
        }
        return known;
    }
}
