package io.idemkey.it.app;

import io.idemkey.FailureMode;
import io.idemkey.IdempotencyContext;
import io.idemkey.IdempotencyKey;
import io.idemkey.cdi.IdempotencyRuntime;
import jakarta.json.Json;
import jakarta.json.JsonObjectBuilder;
import jakarta.inject.Inject;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.PATCH;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.NewCookie;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;

import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Endpoints for the integration tests. Each guarded method counts its executions per key and answers
 * with a body that differs on every execution (a fresh UUID), so a replay is recognisable.
 */
@Path("/guarded")
@Produces(MediaType.APPLICATION_JSON)
public class GuardedResource {

    /** The requests {@code held}, by key as {@link IdempotencyContext#key()} reads it (unquoted): a fresh key per test. */
    private static final Map<String, CountDownLatch> HELD = new ConcurrentHashMap<>();

    @Inject
    Executions executions;

    @Inject
    IdempotencyContext idempotency;

    @Context
    HttpHeaders headers;

    @Inject
    IdempotencyRuntime runtime;

    @POST
    @Path("/echo")
    @Consumes(MediaType.APPLICATION_JSON)
    @IdempotencyKey
    public Response echo(String body) {
        int execution = executions.record(key());
        String id = UUID.randomUUID().toString();
        return Response.created(URI.create("/things/" + id))
                .entity("{\"id\":\"" + id + "\",\"execution\":" + execution + "}")
                .tag(id)
                .header("X-Not-Replayed", "x")
                .cookie(new NewCookie.Builder("session").value("secret").build())
                .build();
    }

    /** A path parameter and query parameters, for fingerprints of encoded paths. */
    @POST
    @Path("/items/{name}")
    @Consumes(MediaType.APPLICATION_JSON)
    @IdempotencyKey
    public Response item(@PathParam("name") String name, @QueryParam("a") List<String> a) {
        return Response.status(201).entity(Json.createObjectBuilder().add("name", name).add("a", String.join(",", a))
                .add("execution", executions.record(key())).add("id", UUID.randomUUID().toString()).build().toString())
                .build();
    }

    /** Answers with what it received: the entity as a string and the raw Idempotency-Key header. */
    @POST
    @Path("/received")
    @Consumes(MediaType.APPLICATION_JSON)
    @IdempotencyKey(excludeFields = "clientTimestamp")
    public Response received(String body, @HeaderParam("Idempotency-Key") String header) {
        int execution = executions.record(key());
        return Response.ok(Json.createObjectBuilder().add("body", body).add("header", header)
                .add("execution", execution).build().toString()).build();
    }

    @PATCH
    @Path("/echo")
    @Consumes(MediaType.APPLICATION_JSON)
    @IdempotencyKey
    public Response patch(String body) {
        return echo(body);
    }

    @PUT
    @Path("/echo")
    @Consumes(MediaType.APPLICATION_JSON)
    @IdempotencyKey
    public Response put(String body) {
        return echo(body);
    }

    @POST
    @Path("/payments")
    @Consumes(MediaType.APPLICATION_JSON)
    @IdempotencyKey(excludeFields = {"clientTimestamp", "requestNonce"}, failureMode = FailureMode.CLOSED)
    public Response pay(@Valid @NotNull Payload payload) {
        int execution = executions.record(key());
        return Response.status(201).entity("{\"paid\":" + payload.amount + ",\"execution\":" + execution
                + ",\"id\":\"" + UUID.randomUUID() + "\"}").build();
    }

    @POST
    @Path("/text")
    @Consumes(MediaType.TEXT_PLAIN)
    @Produces(MediaType.TEXT_PLAIN)
    @IdempotencyKey
    public String text(String body) {
        return "execution " + executions.record(key()) + " " + UUID.randomUUID();
    }

    @POST
    @Path("/no-content")
    @IdempotencyKey
    public Response noContent() {
        executions.record(key());
        return Response.noContent().header("X-Execution", UUID.randomUUID().toString()).build();
    }

    @POST
    @Path("/server-error")
    @IdempotencyKey
    public Response serverError() {
        executions.record(key());
        return Response.status(500).entity("{\"error\":\"boom\"}").build();
    }

    @POST
    @Path("/unmapped-exception")
    @IdempotencyKey
    public Response unmappedException() {
        executions.record(key());
        throw new IllegalStateException("unmapped");
    }

    @POST
    @Path("/business-failure")
    @IdempotencyKey
    public Response businessFailure() {
        int execution = executions.record(key());
        throw new BusinessException("insufficient funds, execution " + execution + " " + UUID.randomUUID());
    }

    /** A recorded answer whose code not every server's table names (Payara Micro writes {@code 422 CUSTOM}). */
    @POST
    @Path("/unprocessable")
    @IdempotencyKey
    public Response unprocessable() {
        int execution = executions.record(key());
        return Response.status(422).type(MediaType.APPLICATION_JSON)
                .entity("{\"error\":\"the order is closed\",\"execution\":" + execution + "}").build();
    }

    @POST
    @Path("/retryable-failure")
    @IdempotencyKey
    public Response retryableFailure() {
        executions.record(key());
        idempotency.markRetryable();
        return Response.status(409).entity("{\"error\":\"duplicate email, fix and retry\"}").build();
    }

    @POST
    @Path("/slow")
    @IdempotencyKey(lockTtlSeconds = 30) // 1 s in Deployments.guardedApp (SLOW_LEASE); the two-server pairs keep 30 s
    public Response slow(@QueryParam("millis") long millis) throws InterruptedException {
        int execution = executions.record(key());
        Thread.sleep(millis);
        return Response.ok("{\"execution\":" + execution + ",\"id\":\"" + UUID.randomUUID() + "\"}").build();
    }

    /**
     * Runs until {@code POST guarded/release?key=...} (at most 2 minutes), on the annotation's
     * lease (30 s, not overridden: its first renewal comes 10 s in): for tests that need a request
     * in progress while they look, without racing a sleep.
     */
    @POST
    @Path("/held")
    @IdempotencyKey
    public Response held() throws InterruptedException {
        String key = key();
        int execution = executions.record(key);
        if (!HELD.computeIfAbsent(key, k -> new CountDownLatch(1)).await(2, TimeUnit.MINUTES)) {
            throw new IllegalStateException("never released: " + key);
        }
        HELD.remove(key);
        return Response.ok("{\"execution\":" + execution + ",\"id\":\"" + UUID.randomUUID() + "\"}").build();
    }

    /** Lets the request {@code held} with this key (or the next one) answer. */
    @POST
    @Path("/release")
    public void release(@QueryParam("key") String key) {
        HELD.computeIfAbsent(key, k -> new CountDownLatch(1)).countDown();
    }

    @POST
    @Path("/optional")
    @IdempotencyKey(required = false)
    public Response optional(@HeaderParam("X-Run") String run) {
        return Response.ok("{\"execution\":" + executions.record(run) + "}").build();
    }

    @POST
    @Path("/fail-open")
    @IdempotencyKey(failureMode = FailureMode.OPEN)
    public Response failOpen(@HeaderParam("Idempotency-Key") String rawKey) {
        return Response.ok("{\"execution\":" + executions.record("open:" + rawKey) + "}").build();
    }

    @POST
    @Path("/wait")
    @IdempotencyKey(inFlightWaitSeconds = 10)
    public Response waitForInFlight(@QueryParam("millis") long millis) throws InterruptedException {
        int execution = executions.record(key());
        Thread.sleep(millis);
        return Response.ok("{\"execution\":" + execution + ",\"id\":\"" + UUID.randomUUID() + "\"}").build();
    }

    /** Sleeps as long as X-Sleep-Millis says (a header: not part of the fingerprint). */
    @POST
    @Path("/crashable")
    @IdempotencyKey(lockTtlSeconds = 2)
    public Response crashable(@HeaderParam("X-Sleep-Millis") long millis) throws InterruptedException {
        int execution = executions.record(key());
        Thread.sleep(millis);
        return Response.ok("{\"execution\":" + execution + ",\"id\":\"" + UUID.randomUUID() + "\"}").build();
    }

    /** Who the server thinks is calling, with a fresh id per execution. */
    @POST
    @Path("/whoami")
    @IdempotencyKey
    public Response whoami(@Context SecurityContext security) {
        String caller = security.getUserPrincipal() == null ? "anonymous" : security.getUserPrincipal().getName();
        int execution = executions.record(caller + ":" + key());
        return Response.ok("{\"caller\":\"" + caller + "\",\"execution\":" + execution + ",\"id\":\""
                + UUID.randomUUID() + "\"}").build();
    }

    /** Behind the application's own access filters ({@link AccountAccessFilters}). */
    @POST
    @Path("/account")
    @IdempotencyKey
    public Response account(@Context SecurityContext security) {
        String caller = security.getUserPrincipal().getName();
        return Response.status(201).entity("{\"caller\":\"" + caller + "\",\"execution\":"
                + executions.record(caller + ":" + key()) + "}").build();
    }

    /** Idemkey's counters on this server. */
    @GET
    @Path("/metrics")
    public String metrics() {
        JsonObjectBuilder counters = Json.createObjectBuilder();
        runtime.engine().metrics().snapshot().forEach(counters::add);
        return counters.build().toString();
    }

    /**
     * How often the key's request ran. The key is a query parameter: test keys such as
     * {@code open:<key>} hold a colon, and Payara 7 answers a path with a colon with an error
     * before the application sees it (Jakarta Authorization 3's {@code URLPatternSpec}, docs/servers.md).
     */
    @GET
    @Path("/executions")
    @Produces(MediaType.TEXT_PLAIN)
    public int executions(@QueryParam("key") String key) {
        return executions.count(key);
    }

    /** The key Idemkey saw (unquoted), else the raw header: unprotected requests are counted too. */
    private String key() {
        return idempotency.key().orElseGet(() -> String.valueOf(headers.getHeaderString("Idempotency-Key")));
    }
}
