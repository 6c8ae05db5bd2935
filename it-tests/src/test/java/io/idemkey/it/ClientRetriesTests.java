package io.idemkey.it;

import io.idemkey.it.client.TransferResource;
import io.idemkey.it.client.TransfersApi;
import io.idemkey.testing.RedisServer;
import jakarta.json.JsonObject;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The client side on this run's server: callers in the application call the shared
 * {@link TransfersApi} (implemented by the same application) through a {@link LossyProxy}, as a
 * MicroProfile Rest Client ({@code rest-client}: the platform's, with nothing but the interface's
 * {@code @IdempotencyKey}) and through {@code IdempotentRequests} on the platform's JAX-RS client
 * ({@code jaxrs}). Every transfer is booked in the application; the test reads the bookings.
 *
 * <p>These cases are the client's core, one answer lost or replaced at a time: {@link ClientRetriesIT}
 * adds the lossy network and the Redis outages (Payara Micro, Open Liberty), {@link WildFlyRestClientIT}
 * runs them alone on WildFly (MicroProfile Rest Client 4).
 */
abstract class ClientRetriesTests {

    static RedisServer redis;
    static LossyProxy proxy;
    static ServerProcess server;
    static Http http;

    @BeforeAll
    static void start() throws IOException {
        redis = RedisServer.start();
        int port = ServerProcess.freePort();
        proxy = LossyProxy.to(port);
        Map<String, String> config = new LinkedHashMap<>();
        config.put("idempotency.redis.url", redis.url());
        config.put("idempotency.redis.connect-timeout-ms", "500");
        config.put("idempotency.redis.read-timeout-ms", "500");
        config.put("transfers/mp-rest/url", "http://127.0.0.1:" + proxy.port() + "/clients/api");
        config.put("transfers/mp-rest/connectTimeout", "2000");
        config.put("transfers/mp-rest/readTimeout", "1000");
        // The Rest Client's policy from its method's and its interface's overrides: with the global
        // properties alone (2 attempts, waits from 1 s) its calls would not ride out the lossy tests.
        // The JAX-RS callers build theirs in code (CallerResource), or take the global one (policy=global).
        config.put(TransfersApi.class.getName() + "/transfer/idempotency.client.max-attempts", "12");
        config.put(TransfersApi.class.getName() + "/idempotency.client.initial-backoff-ms", "20");
        // The Rest Client leaves 503 out (the JAX-RS callers keep the default, which retries it): the
        // application's own 503 is final, Idemkey's store-unavailable 503 still retried.
        config.put(TransfersApi.class.getName() + "/idempotency.client.retry-statuses", "409,429,502,504");
        config.put("idempotency.client.max-attempts", "2");
        config.put("idempotency.client.initial-backoff-ms", "1000");
        Map<String, String> misconfigured = new LinkedHashMap<>(config);
        misconfigured.put(TransfersApi.class.getName() + "/transfer/idempotency.client.max-backoff-ms", "10");
        // the global policy is checked on its own: both are reported (a policy stops at its first invalid value)
        misconfigured.put("idempotency.client.retry-statuses", "409,5xx");
        Path directory = Files.createDirectories(Path.of("target", "client-retries"));
        // the sound application first: Payara Micro stops initializing the ones after a failed one
        List<Path> wars = List.of(Deployments.export(directory, callers("clients", config)),
                Deployments.export(directory, callers("clients-misconfigured", misconfigured)));
        ServerProcess.Kind kind = ServerProcess.Kind.ofThisRun();
        // The callers run on the server's request threads and call it back: Open Liberty's executor
        // starts at 2 threads per CPU and grows every 1.5 s, so on a small machine 8 callers would hold
        // every thread their own calls wait for (their first operations time out until it has grown).
        server = kind == ServerProcess.Kind.LIBERTY
                ? LibertyServer.startWithConfig(wars, port, Map.of(), List.of("mpRestClient-3.0"), "<executor coreThreads=\"32\"/>")
                : ServerProcess.start(kind, wars, port, Map.of());
        http = new Http(server.uri("clients"));
    }

    private static WebArchive callers(String name, Map<String, String> config) {
        return ShrinkWrap.create(WebArchive.class, name + ".war")
                .addPackage(TransfersApi.class.getPackage())
                .addAsResource(new StringAsset(Deployments.properties(config)), "META-INF/microprofile-config.properties")
                .addAsLibraries(Deployments.libraries());
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
        if (proxy != null) {
            proxy.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    @BeforeEach
    void reliableNetworkAndRedisUp() {
        proxy.reliable();
        if (!redis.isRunning()) {
            redis.restart();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"rest-client", "jaxrs"})
    void anAnswerLostAfterTheServerRanIsRetriedAndTheCallerGetsTheReplay(String form) {
        String id = "lost-" + form + "-" + UUID.randomUUID();
        long droppedBefore = proxy.dropped();
        // two: the JDK's HttpURLConnection (under Jersey on Payara Micro) silently resends a POST once itself
        proxy.dropNext(2);

        JsonObject seen = call(form, "prefix=" + id);

        assertEquals(2, proxy.dropped() - droppedBefore, "the first two answers were lost on the way");
        assertEquals(List.of(), seen.getJsonArray("errors"), seen + "\n" + server.log());
        assertEquals(1, seen.getInt("ok"));
        assertEquals(1, seen.getInt("replayed"), "the retry got the first execution's answer, marked as a replay: " + seen);
        assertEquals(Map.of(id, 1), bookings(id), "the transfer took effect once");
    }

    @ParameterizedTest
    @ValueSource(strings = {"rest-client", "jaxrs"})
    void aMethodThatFailedWith500AfterItsEffectIsNotRunAgain(String form) {
        String id = TransferResource.FAILS_AFTER_BOOKING + form + "-" + UUID.randomUUID();

        JsonObject seen = call(form, "prefix=" + id);

        assertEquals(500, statusSeen(seen), seen.toString());
        assertEquals(Map.of(id, 1), bookings(id), "the server released the key; a retry would have booked it again");
    }

    @Test
    void anApplicationsOwn503IsFinalWhereTheInterfaceLeaves503OutOfItsRetriedStatuses() {
        String id = TransferResource.UNAVAILABLE_AFTER_BOOKING + UUID.randomUUID();

        JsonObject seen = call("rest-client", "prefix=" + id); // TransfersApi: retry-statuses=409,429,502,504

        assertEquals(503, statusSeen(seen), seen.toString());
        assertEquals(Map.of(id, 1), bookings(id));
    }

    @ParameterizedTest
    @CsvSource({"rest-client, 502", "rest-client, 504", "jaxrs, 502", "jaxrs, 504"})
    void aGatewaysAnswerAfterTheServerRanIsRetriedAndTheCallerGetsTheReplay(String form, int status) {
        String id = "gateway-" + status + "-" + form + "-" + UUID.randomUUID();
        long gatewayAnswersBefore = proxy.gatewayAnswers();
        proxy.answerAsGatewayNext(1, status);

        JsonObject seen = call(form, "prefix=" + id);

        assertEquals(1, proxy.gatewayAnswers() - gatewayAnswersBefore, "the server's first answer was replaced by " + status);
        assertEquals(List.of(), seen.getJsonArray("errors"), seen + "\n" + server.log());
        assertEquals(1, seen.getInt("replayed"), "the retry got the first execution's answer: " + seen);
        assertEquals(Map.of(id, 1), bookings(id), "the transfer took effect once");
    }

    @ParameterizedTest
    @ValueSource(strings = {"rest-client", "jaxrs"})
    void aKeyReusedForAnotherRequestEndsInKeyReusedExceptionCarryingTheProblem(String form) {
        String id = "reused-" + form + "-" + UUID.randomUUID();
        String key = "caller-kept-" + UUID.randomUUID();

        JsonObject first = call(form, "amount=100&key=" + key + "&prefix=" + id);
        JsonObject again = call(form, "amount=100&key=" + key + "&prefix=" + id);
        JsonObject other = call(form, "amount=200&key=" + key + "&prefix=" + id);

        assertEquals(1, first.getInt("ok"), first.toString());
        assertEquals(1, again.getInt("replayed"), "the caller's own key is the operation's key: " + again);
        JsonObject error = other.getJsonArray("errors").getJsonObject(0);
        assertEquals("io.idemkey.client.KeyReusedException", error.getString("error"), other.toString());
        assertEquals(422, error.getInt("status"));
        assertEquals(key, error.getString("key"));
        assertEquals("https://idemkey.io/problems/key-reused", error.getString("problemType"));
        assertEquals(Map.of(id, 1), bookings(id));
    }

    @Test
    void theSharedInterfacesAnnotationGuardsTheServersMethodToo() {
        String id = "direct-" + UUID.randomUUID();
        String body = "{\"id\":\"" + id + "\",\"amount\":5}";

        assertEquals(400, http.postJson("api/transfers", null, body).statusCode(), "the key is required");
        String key = Http.newKey();
        HttpResponse<String> first = http.postJson("api/transfers", key, body);
        HttpResponse<String> retry = http.postJson("api/transfers", key, body);

        assertEquals(201, first.statusCode(), first.body());
        assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse(null));
        assertEquals(Map.of(id, 1), bookings(id));
    }

    @Test
    void anInvalidRetrySettingOfARestClientMethodFailsTheDeploymentNamingTheProperty() {
        assertTrue(server.log().contains("Invalid Idemkey configuration: " + TransfersApi.class.getName()
                + "/transfer/idempotency.client.max-backoff-ms must be between 20 and 600000, not 10"), server.log());
        assertTrue(server.log().contains("Invalid Idemkey configuration: idempotency.client.retry-statuses must list HTTP"
                + " statuses from 400 to 599 separated by commas, not '409,5xx'"), server.log());
        assertEquals(404, new Http(server.uri("clients-misconfigured")).get("api/effects?prefix=x").statusCode(),
                "the application is not serving");
    }

    /** The status of a single operation's final answer: thrown by the Rest Client, or returned to the JAX-RS caller. */
    static int statusSeen(JsonObject seen) {
        if (!seen.getJsonArray("errors").isEmpty()) {
            return seen.getJsonArray("errors").getJsonObject(0).getInt("status");
        }
        JsonObject statuses = seen.getJsonObject("statuses");
        assertEquals(1, statuses.size(), seen.toString());
        return Integer.parseInt(statuses.keySet().iterator().next());
    }

    /** One caller's run: {@code POST /api/callers/<form>?<query>}. */
    static JsonObject call(String form, String query) {
        HttpRequest request = http.request("api/callers/" + form + "?" + query).timeout(Duration.ofMinutes(3))
                .POST(HttpRequest.BodyPublishers.noBody()).build();
        HttpResponse<String> response = http.send(request);
        assertEquals(200, response.statusCode(), response.body() + "\n" + server.log());
        return Http.json(response);
    }

    static Map<String, Integer> bookings(String prefix) {
        JsonObject all = Http.json(http.get("api/effects?prefix=" + prefix));
        Map<String, Integer> counts = new LinkedHashMap<>();
        all.forEach((id, count) -> counts.put(id, ((jakarta.json.JsonNumber) count).intValue()));
        return counts;
    }
}
