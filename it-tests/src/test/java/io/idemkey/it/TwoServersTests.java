package io.idemkey.it;

import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Seed 002's "two pods, same key": one Payara Micro and another server (Open Liberty, or WildFly in
 * {@link WildFlyTwoServersIT}) share one store (the subclass's). Every key is fired at both servers at the same moment and retried on both: exactly
 * one execution per key across the two, and the same bytes from both.
 */
abstract class TwoServersTests {

    private static final int KEYS = 120;

    /** The shared test application ({@code shared}) on Payara Micro. */
    abstract ServerProcess payara();

    /** The same on the other server (Open Liberty or WildFly). */
    abstract ServerProcess other();

    /** The round trips both servers make to the shared store. */
    abstract StatusTableTests.StoreCalls countStoreCalls();

    /** {Payara Micro, Open Liberty}, started side by side. */
    static ServerProcess[] startBoth(Function<ServerProcess.Kind, ServerProcess> start) throws Exception {
        CompletableFuture<ServerProcess> payara = CompletableFuture.supplyAsync(() -> start.apply(ServerProcess.Kind.PAYARA));
        ServerProcess liberty = start.apply(ServerProcess.Kind.LIBERTY);
        return new ServerProcess[] {payara.get(), liberty};
    }

    /**
     * {@code config} with {@code guarded/slow} on its annotation's 30 s lease instead of the test
     * application's 1 s: nothing here waits for a lease to run out, and a 1 s lease on a freshly
     * started JVM of a loaded machine can be lost (see {@link #warmUp}).
     */
    static Map<String, String> onALongLease(Map<String, String> config) {
        Map<String, String> longLease = new LinkedHashMap<>(config);
        longLease.put(Deployments.SLOW_LEASE, "30");
        return longLease;
    }

    /**
     * A few rounds of guarded requests on each freshly started server, 16 at a time as the tests
     * send them, before the tests: on a loaded 2-core machine a just-started JVM (the quick JIT only)
     * took longer than the test application's 1 s lease over its first concurrent requests (the
     * renewals did not get through: "decision=lost-lease ... durationMs=1171" for a 200 ms request),
     * so that their keys ran again, as documented for a lost lease. The pairs now deploy with a 30 s
     * lease ({@link #onALongLease}); WildFly's pair still warms up.
     */
    static void warmUp(ServerProcess... servers) throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(16);
        try {
            List<Future<HttpResponse<String>>> responses = new ArrayList<>();
            for (ServerProcess server : servers) {
                Http http = new Http(server.uri("shared"));
                for (int i = 0; i < 64; i++) {
                    responses.add(threads.submit(() -> http.post("guarded/slow?millis=0", Http.newKey())));
                }
            }
            for (Future<HttpResponse<String>> response : responses) {
                response.get();
            }
        } finally {
            threads.shutdownNow();
        }
    }

    @Test
    void everyKeyFiredAtBothServersAtOnceRunsExactlyOnceAndBothAnswerTheSameBytes() throws Exception {
        Http p = new Http(payara().uri("shared"));
        Http l = new Http(other().uri("shared"));
        ExecutorService threads = Executors.newFixedThreadPool(16);
        AtomicInteger conflicts = new AtomicInteger();
        try {
            List<Future<?>> keys = new ArrayList<>();
            for (int i = 0; i < KEYS; i++) {
                keys.add(threads.submit(() -> oneKey(p, l, conflicts)));
            }
            for (Future<?> key : keys) {
                key.get();
            }
        } finally {
            threads.shutdownNow();
        }
        System.out.printf("two servers: %d keys, %d met the other server's request in progress (409)%n",
                KEYS, conflicts.get());
        assertTrue(conflicts.get() > KEYS / 2, "the two requests of a key really overlapped: " + conflicts);
    }

    @Test
    void keyCompletedOnOneServerIsReplayedByTheOther() {
        Http p = new Http(payara().uri("shared"));
        Http l = new Http(other().uri("shared"));
        for (int i = 0; i < 10; i++) {
            String key = Http.newKey();
            Http first = i % 2 == 0 ? p : l;
            Http other = i % 2 == 0 ? l : p;
            HttpResponse<String> original = first.postJson("guarded/echo", key, "{\"n\":" + i + "}");
            HttpResponse<String> replay;
            try (StatusTableTests.StoreCalls calls = countStoreCalls()) {
                replay = other.postJson("guarded/echo", key, "{ \"n\" : " + i + " }");
                assertEquals(List.of(calls.name()), calls.take(), "a replay costs one round trip");
            }
            assertEquals(201, original.statusCode());
            assertEquals(201, replay.statusCode());
            assertEquals(original.body(), replay.body());
            assertEquals(original.headers().firstValue("Location"), replay.headers().firstValue("Location"));
            assertEquals("true", replay.headers().firstValue("Idempotent-Replayed").orElse(null));
            assertEquals(1, p.executions(key) + l.executions(key));
        }
    }

    @Test
    void encodedPathsAndQueriesFingerprintTheSameOnBothServers() {
        Http p = new Http(payara().uri("shared"));
        Http l = new Http(other().uri("shared"));
        String path = "guarded/items/caf%C3%A9%20au%20lait%2B1";
        for (Http[] servers : List.of(new Http[] {p, l}, new Http[] {l, p})) {
            String key = Http.newKey();
            HttpResponse<String> original = servers[0].postJson(path + "?b=2&a=1&a=%20x", key, "{}");
            assertEquals(201, original.statusCode(), original.body());
            assertTrue(original.body().contains("\"name\":\"caf\u00e9 au lait+1\",\"a\":\"1, x\""), original.body());
            HttpResponse<String> replay = servers[1].postJson(path + "?a=1&a=%20x&b=2", key, "{}");
            assertEquals(original.body(), replay.body(), "the same request, parameters in another order");
            assertEquals("true", replay.headers().firstValue("Idempotent-Replayed").orElse(null));
            assertEquals(422, servers[1].postJson(path.replace("%2B1", "%2B2") + "?b=2&a=1&a=%20x", key, "{}")
                    .statusCode(), "another path is another request");
            assertEquals(422, servers[1].postJson(path + "?b=2&a=1&a=x", key, "{}").statusCode(),
                    "another query is another request");
            assertEquals(1, p.executions(key) + l.executions(key));
        }
    }

    @Test
    void formCompletedOnOneServerIsReplayedByTheOther() {
        Http p = new Http(payara().uri("shared"));
        Http l = new Http(other().uri("shared"));
        for (String kind : new String[]{"params", "map", "form", "bean"}) {
            for (Http[] servers : List.of(new Http[] {p, l}, new Http[] {l, p})) {
                String key = Http.newKey();
                HttpResponse<String> original = servers[0].postForm("forms/" + kind, key, StatusTableTests.FORM);
                assertEquals(201, original.statusCode(), original.body());
                assertEquals(StatusTableTests.FORM_FIELDS, Http.json(original).getJsonObject("fields").toString(), kind);
                HttpResponse<String> replay = servers[1].postForm("forms/" + kind, key, StatusTableTests.FORM);
                assertEquals(original.body(), replay.body(), kind);
                assertEquals("true", replay.headers().firstValue("Idempotent-Replayed").orElse(null), kind);
                assertEquals(422, servers[1].postForm("forms/" + kind, key,
                        StatusTableTests.FORM.replace("amount=100", "amount=999")).statusCode(), kind);
                assertEquals(1, p.executions(key) + l.executions(key), kind);
            }
        }
    }

    private static Void oneKey(Http p, Http l, AtomicInteger conflicts) throws Exception {
        String key = Http.newKey();
        String path = "guarded/slow?millis=200"; // long enough for the two requests to overlap on a loaded machine
        CyclicBarrier together = new CyclicBarrier(2);
        CompletableFuture<HttpResponse<String>> atPayara = CompletableFuture.supplyAsync(() -> {
            await(together);
            return p.post(path, key);
        });
        HttpResponse<String> atLiberty;
        await(together);
        atLiberty = l.post(path, key);
        List<HttpResponse<String>> first = List.of(atPayara.get(), atLiberty);
        for (HttpResponse<String> response : first) {
            assertTrue(response.statusCode() == 200 || response.statusCode() == 409,
                    "first round: " + response.statusCode() + " " + response.body());
        }
        assertTrue(first.stream().anyMatch(r -> r.statusCode() == 200), "one of the two ran it");
        if (first.stream().anyMatch(r -> r.statusCode() == 409)) {
            conflicts.incrementAndGet();
        }

        String body = first.stream().filter(r -> r.statusCode() == 200).findFirst().orElseThrow().body();
        for (Http server : List.of(p, l, p, l)) {
            HttpResponse<String> retry = retryUntilNotInProgress(server, path, key);
            assertEquals(200, retry.statusCode());
            assertEquals(body, retry.body(), "byte-identical from both servers");
        }
        assertEquals(1, p.executions(key) + l.executions(key), "one execution across both servers");
        return null;
    }

    private static HttpResponse<String> retryUntilNotInProgress(Http server, String path, String key)
            throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        HttpResponse<String> response = server.post(path, key);
        while (response.statusCode() == 409 && System.nanoTime() < deadline) {
            Thread.sleep(20);
            response = server.post(path, key);
        }
        return response;
    }

    private static void await(CyclicBarrier barrier) {
        try {
            barrier.await();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
