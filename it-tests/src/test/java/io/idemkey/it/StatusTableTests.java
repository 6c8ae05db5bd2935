package io.idemkey.it;

import io.idemkey.testing.RedisMonitor;
import io.idemkey.testing.RedisServer;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Every row of SPEC's status table, over real HTTP, against a real server and a real Redis: on the
 * test servers ({@link StatusTableIT}) and on an Open Liberty with only the features Idemkey
 * documents ({@link MinimalFeaturesIT}).
 */
abstract class StatusTableTests {

    /** The test application under {@link #CONTEXT} on the server of the subclass. */
    Http http;

    static final String CONTEXT = "status-table";

    /** The configuration every status-table deployment has: the form endpoints' request id is replayed. */
    static final Map<String, String> CONFIG = Map.of("idempotency.replay-headers", "Request-Id");

    /** The test application with the configuration every status-table deployment has. */
    static WebArchive deployment(Map<String, String> extraConfig) {
        Map<String, String> config = new java.util.LinkedHashMap<>(CONFIG);
        config.putAll(extraConfig);
        return Deployments.guardedApp(CONTEXT, config);
    }

    /** The test application as a JDBC-only application builds it: no Jedis in its WAR, no Redis configured. */
    static WebArchive deploymentWithoutJedis(Map<String, String> storeConfig) {
        Map<String, String> config = new java.util.LinkedHashMap<>(CONFIG);
        config.putAll(storeConfig);
        config.put(Deployments.SLOW_LEASE, "1");
        return Deployments.jdbcOnlyApp(CONTEXT, config);
    }

    /** Whether the server validates beans (Bean Validation is the application's choice, not Idemkey's). */
    abstract boolean validatesBeans();

    @Test
    void missingKeyIsRefusedWith400Problem() {
        HttpResponse<String> response = http.postJson("guarded/echo", null, "{}");
        assertEquals(400, response.statusCode());
        assertEquals("application/problem+json", contentType(response));
        assertTrue(response.body().contains("https://idemkey.io/problems/key-missing"), response.body());
        assertTrue(response.body().contains("\"status\":400"), response.body());
    }

    @Test
    void firstRequestRunsAndRetryIsReplayedByteForByte() {
        String key = Http.newKey();
        HttpResponse<String> first = http.postJson("guarded/echo", key, "{\"a\":1,\"b\":[1,2]}");
        HttpResponse<String> retry = http.postJson("guarded/echo", key, "{ \"b\": [1, 2], \"a\": 1 }");

        assertEquals(201, first.statusCode());
        assertEquals(201, retry.statusCode());
        assertEquals(first.body(), retry.body());
        assertEquals(contentType(first), contentType(retry));
        assertEquals(first.headers().firstValue("Location"), retry.headers().firstValue("Location"));
        assertEquals(first.headers().firstValue("ETag"), retry.headers().firstValue("ETag"));
        assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse(null));
        assertFalse(first.headers().firstValue("Idempotent-Replayed").isPresent());
        assertFalse(retry.headers().firstValue("Set-Cookie").isPresent(), "cookies are never replayed");
        assertFalse(retry.headers().firstValue("X-Not-Replayed").isPresent());
        assertEquals(1, http.executions(key));
    }

    @Test
    void methodReceivesTheBodyAndTheKeyHeaderExactlyAsSent() {
        String key = "\"" + Http.newKey() + "\"";
        String body = "{ \"z\" : [3, 1.50, {\"clientTimestamp\": \"t1\"}],\n  \"a\": \"caf\u00e9 \\u00e9\", \"clientTimestamp\": \"t1\" }";
        HttpResponse<String> first = http.postJson("guarded/received", key, body);
        assertEquals(200, first.statusCode(), first.body());
        var received = Http.json(first);
        assertEquals(body, received.getString("body"), "member order, spacing, numbers and excluded fields untouched");
        assertEquals(key, received.getString("header"), "the header as the client sent it, quotes included");
        assertEquals(first.body(), http.postJson("guarded/received", key, body.replace("t1", "t2")).body());
    }

    @Test
    void quotedAndBareFormsAreTheSameKey() {
        String key = Http.newKey();
        HttpResponse<String> bare = http.postJson("guarded/echo", key, "{}");
        HttpResponse<String> quoted = http.postJson("guarded/echo", "\"" + key + "\"", "{}");
        assertEquals(bare.body(), quoted.body());
        assertEquals("true", quoted.headers().firstValue("Idempotent-Replayed").orElse(null));
        assertEquals(1, http.executions(key));
    }

    @Test
    void invalidKeysAreRefusedWith400() {
        String tooLong = "k".repeat(256);
        for (String key : new String[]{tooLong, "\"\"", "\"unterminated", "two words", "a,b", "\"a\", \"b\""}) {
            HttpResponse<String> response = http.postJson("guarded/echo", key, "{}");
            assertEquals(400, response.statusCode(), key);
            assertTrue(response.body().contains("https://idemkey.io/problems/key-invalid"), response.body());
        }
        assertEquals(201, http.postJson("guarded/echo", "k".repeat(255), "{}").statusCode(), "255 is the limit");
    }

    @Test
    void keyWithControlCharactersOrSentTwiceIsRefusedWith400() {
        String head = "POST {path}guarded/echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                + "Content-Length: 2\r\nConnection: close\r\n";
        assertEquals(400, http.rawStatus(head + "Idempotency-Key: abc\u0001def\r\n\r\n", "{}".getBytes()));
        assertEquals(400, http.rawStatus(head + "Idempotency-Key: abc\u00e9def\r\n\r\n", "{}".getBytes()));
        assertEquals(400, http.rawStatus(head + "Idempotency-Key: abc\tdef\r\n\r\n", "{}".getBytes()));
        String key = Http.newKey();
        assertEquals(400, http.rawStatus(head + "Idempotency-Key: " + key + "\r\nIdempotency-Key: " + key + "\r\n\r\n",
                "{}".getBytes()));
        assertEquals(0, http.executions(key));
    }

    @Test
    void sameKeyWithDifferentBodyIsRefusedWith422() {
        String key = Http.newKey();
        assertEquals(201, http.postJson("guarded/echo", key, "{\"amount\":100}").statusCode());
        HttpResponse<String> reused = http.postJson("guarded/echo", key, "{\"amount\":999}");
        assertEquals(422, reused.statusCode());
        assertTrue(reused.body().contains("https://idemkey.io/problems/key-reused"), reused.body());
        // the status line as written: the standard phrase, not the server's own for a code its table lacks
        Http.RawResponse raw = http.rawPostJson("guarded/echo", key, "{\"amount\":999}");
        assertEquals("HTTP/1.1 422 Unprocessable Content", raw.statusLine(), raw.head());
        assertEquals("HTTP/1.1 201 Created", http.rawPostJson("guarded/echo", key, "{\"amount\":100}").statusLine(),
                "a replay");
        assertEquals(1, http.executions(key));
    }

    @Test
    void sameKeyOnAnotherMethodOrPathIsRefusedWith422() {
        String key = Http.newKey();
        assertEquals(201, http.postJson("guarded/echo", key, "{}").statusCode());
        assertEquals(422, http.send(http.request("guarded/echo").header(Http.KEY, key)
                .header("Content-Type", "application/json")
                .method("PATCH", HttpRequest.BodyPublishers.ofString("{}")).build()).statusCode());
        assertEquals(422, http.postJson("guarded/echo?x=1", key, "{}").statusCode());
    }

    @Test
    void excludedFieldsDoNotChangeTheFingerprint() {
        String key = Http.newKey();
        HttpResponse<String> first = http.postJson("guarded/payments", key,
                "{\"name\":\"n\",\"amount\":5,\"clientTimestamp\":\"t1\",\"requestNonce\":\"n1\"}");
        HttpResponse<String> retry = http.postJson("guarded/payments", key,
                "{\"name\":\"n\",\"amount\":5,\"CLIENTTIMESTAMP\":\"t2\",\"requestNonce\":\"n2\"}");
        assertEquals(201, first.statusCode());
        assertEquals(first.body(), retry.body());
        assertEquals(1, http.executions(key));
    }

    @Test
    void serverErrorReleasesTheKeySoTheRetryRunsAgain() {
        String key = Http.newKey();
        assertEquals(500, http.post("guarded/server-error", key).statusCode());
        assertEquals(500, http.post("guarded/server-error", key).statusCode());
        assertEquals(2, http.executions(key));
    }

    @Test
    void unmappedExceptionReleasesTheKeySoTheRetryRunsAgain() {
        String key = Http.newKey();
        assertEquals(500, http.post("guarded/unmapped-exception", key).statusCode());
        assertEquals(500, http.post("guarded/unmapped-exception", key).statusCode());
        assertEquals(2, http.executions(key));
    }

    @Test
    void requestThatEndsWithoutAWrittenResponseReleasesItsKeyAtTheEnd() throws Exception {
        // An application response filter fails: no response filter of Idemkey's runs, no entity is written.
        String key = Http.newKey();
        HttpRequest failing = http.request("guarded/no-content").header(Http.KEY, key).header("X-Fail-Response", "yes")
                .POST(HttpRequest.BodyPublishers.noBody()).build();
        assertEquals(500, http.send(failing).statusCode());
        HttpResponse<String> retry = http.post("guarded/no-content", key);
        long deadline = System.nanoTime() + 3_000_000_000L; // the key is released as the request ends
        while (retry.statusCode() == 409 && System.nanoTime() < deadline) {
            Thread.sleep(50);
            retry = http.post("guarded/no-content", key);
        }
        assertEquals(204, retry.statusCode(), "released, not held until the lease runs out: the retry ran");
        assertEquals(2, http.executions(key));
    }

    @Test
    void replayOfARecorded422CarriesTheStandardPhrase() {
        String key = Http.newKey();
        Http.RawResponse first = http.rawPostJson("guarded/unprocessable", key, "{}");
        Http.RawResponse replay = http.rawPostJson("guarded/unprocessable", key, "{}");
        assertEquals(422, first.status(), first.head());
        // the first answer is the application's own, with the server's phrase; the replay is Idemkey's
        assertEquals("HTTP/1.1 422 Unprocessable Content", replay.statusLine(), replay.head());
        assertTrue(replay.head().toLowerCase(java.util.Locale.ROOT).contains("idempotent-replayed: true"), replay.head());
        assertEquals(first.body(), replay.body());
        assertEquals(1, http.executions(key));
    }

    @Test
    void businessFailure4xxIsRecordedAndReplayed() {
        String key = Http.newKey();
        HttpResponse<String> first = http.post("guarded/business-failure", key);
        HttpResponse<String> retry = http.post("guarded/business-failure", key);
        assertEquals(402, first.statusCode());
        assertEquals(402, retry.statusCode());
        assertEquals(first.body(), retry.body());
        assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse(null));
        assertEquals(1, http.executions(key));
    }

    @Test
    void failureMarkedRetryableReleasesTheKey() {
        String key = Http.newKey();
        assertEquals(409, http.post("guarded/retryable-failure", key).statusCode());
        HttpResponse<String> retry = http.post("guarded/retryable-failure", key);
        assertEquals(409, retry.statusCode());
        assertFalse(retry.headers().firstValue("Idempotent-Replayed").isPresent());
        assertEquals(2, http.executions(key));
    }

    @Test
    void requestRefusedByBeanValidationReleasesTheKeySoTheCorrectedRetryRuns() {
        assumeTrue(validatesBeans(), "this server has no Bean Validation");
        String key = Http.newKey();
        assertEquals(400, http.postJson("guarded/payments", key, "{\"amount\":5}").statusCode());
        assertEquals(0, http.executions(key));
        HttpResponse<String> corrected = http.postJson("guarded/payments", key, "{\"name\":\"n\",\"amount\":5}");
        assertEquals(201, corrected.statusCode(), corrected.body());
        assertEquals(1, http.executions(key));
    }

    @Test
    void unreadableEntityReleasesTheKey() {
        String key = Http.newKey();
        HttpResponse<String> malformed = http.postJson("guarded/payments", key, "{\"name\": ");
        assertEquals(400, malformed.statusCode(), malformed.body());
        HttpResponse<String> corrected = http.postJson("guarded/payments", key, "{\"name\":\"n\",\"amount\":5}");
        assertEquals(201, corrected.statusCode(), corrected.body());
        assertEquals(1, http.executions(key));
    }

    @Test
    void responseWithoutEntityIsRecordedAndReplayed() {
        String key = Http.newKey();
        HttpResponse<String> first = http.post("guarded/no-content", key);
        HttpResponse<String> retry = http.post("guarded/no-content", key);
        assertEquals(204, first.statusCode());
        assertEquals(204, retry.statusCode());
        assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse(null));
        assertEquals(1, http.executions(key));
    }

    @Test
    void plainTextEntityIsFingerprintedRaw() {
        String key = Http.newKey();
        HttpResponse<String> first = http.send(http.request("guarded/text").header(Http.KEY, key)
                .header("Content-Type", "text/plain").POST(HttpRequest.BodyPublishers.ofString("a b")).build());
        HttpResponse<String> same = http.send(http.request("guarded/text").header(Http.KEY, key)
                .header("Content-Type", "text/plain").POST(HttpRequest.BodyPublishers.ofString("a b")).build());
        HttpResponse<String> spaced = http.send(http.request("guarded/text").header(Http.KEY, key)
                .header("Content-Type", "text/plain").POST(HttpRequest.BodyPublishers.ofString("a  b")).build());
        assertEquals(200, first.statusCode());
        assertEquals(first.body(), same.body());
        assertEquals(422, spaced.statusCode());
    }

    /** A form as a client encodes it: a repeated field, a space as {@code +}, reserved characters percent-encoded. */
    static final String ASCII_FORM = "amount=100&currency=eur&tag=a&tag=b+c&tag=x%26y%3Dz";
    /** And a non-ASCII value, UTF-8 percent-encoded. */
    static final String FORM = ASCII_FORM + "&tag=caf%C3%A9";
    static final String FORM_FIELDS =
            "{\"amount\":[\"100\"],\"currency\":[\"eur\"],\"tag\":[\"a\",\"b c\",\"x&y=z\",\"caf\u00e9\"]}";

    @Test
    void everyKindOfFormEndpointReceivesTheFieldsAndIsReplayedByteForByte() {
        for (String kind : new String[]{"params", "map", "form", "bean"}) {
            String key = Http.newKey();
            HttpResponse<String> first = http.postForm("forms/" + kind, key, FORM);
            assertEquals(201, first.statusCode(), kind + ": " + first.body());
            assertEquals(FORM_FIELDS, Http.json(first).getJsonObject("fields").toString(), kind);

            HttpResponse<String> retry = http.postForm("forms/" + kind, key, FORM);
            assertEquals(201, retry.statusCode(), kind);
            assertEquals(first.body(), retry.body(), kind);
            assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse(null), kind);
            assertTrue(first.headers().firstValue("Request-Id").orElse("").startsWith("req_"), kind);
            assertEquals(first.headers().firstValue("Request-Id"), retry.headers().firstValue("Request-Id"),
                    kind + ": the header idempotency.replay-headers names is replayed");

            HttpResponse<String> changed = http.postForm("forms/" + kind, key, FORM.replace("amount=100", "amount=999"));
            assertEquals(422, changed.statusCode(), kind + ": " + changed.body());
            assertTrue(changed.body().contains("https://idemkey.io/problems/key-reused"), changed.body());
            assertEquals(1, http.executions(key), kind);
        }
    }

    /**
     * ASCII: for a non-ASCII value without a charset, an unguarded {@code @FormParam} on Open Liberty
     * follows the servlet's request encoding (ISO-8859-1), a guarded one UTF-8, as every form entity does.
     */
    @Test
    void guardedFormEndpointsReceiveTheFieldsTheUnguardedOnesDo() {
        for (String kind : new String[]{"params", "map", "form", "bean"}) {
            HttpResponse<String> unguarded = http.send(http.request("forms/unguarded-" + kind)
                    .header("X-Run", Http.newKey()).header("Content-Type", "application/x-www-form-urlencoded")
                    .POST(HttpRequest.BodyPublishers.ofString(ASCII_FORM)).build());
            HttpResponse<String> guarded = http.postForm("forms/" + kind, Http.newKey(), ASCII_FORM);
            assertEquals(201, unguarded.statusCode(), kind + ": " + unguarded.body());
            assertEquals(201, guarded.statusCode(), kind + ": " + guarded.body());
            assertEquals(Http.json(unguarded).getJsonObject("fields"), Http.json(guarded).getJsonObject("fields"), kind);
        }
    }

    @Test
    void requestWhileTheFirstIsRunningGets409WithRetryAfter() throws Exception {
        String key = Http.newKey();
        Http.Held first = http.hold(key);
        HttpResponse<String> concurrent;
        try (first) {
            concurrent = http.post("guarded/held", key);
        }
        assertEquals(409, concurrent.statusCode());
        assertTrue(concurrent.body().contains("https://idemkey.io/problems/request-in-progress"));
        long retryAfter = Long.parseLong(concurrent.headers().firstValue("Retry-After").orElseThrow());
        assertTrue(retryAfter >= 1, "Retry-After " + retryAfter);
        assertEquals(200, first.answer().statusCode());
        assertEquals(first.answer().body(), http.post("guarded/held", key).body());
        assertEquals(1, http.executions(key));
    }

    @Test
    void methodSlowerThanLockTtlIsNeverRunTwice() throws Exception {
        // lockTtlSeconds is 1 for /slow (configuration override): the lease is renewed while it runs 3 s.
        String key = Http.newKey();
        var first = CompletableFuture.supplyAsync(() -> http.post("guarded/slow?millis=3000", key));
        http.awaitExecution(key);
        for (int i = 0; i < 10; i++) {
            Thread.sleep(200);
            HttpResponse<String> retry = http.post("guarded/slow?millis=3000", key);
            if (first.isDone() || retry.headers().firstValue("Idempotent-Replayed").isPresent()) {
                break; // the first completed meanwhile (a loaded machine reaches the end of its 3 s)
            }
            assertEquals(409, retry.statusCode(), "retry " + i + " while the first runs");
            assertEquals("1", retry.headers().firstValue("Retry-After").orElse(null),
                    "the lease is 1 s (the override took effect), so only its renewal keeps the key");
        }
        assertEquals(200, first.get().statusCode());
        assertEquals(1, http.executions(key));
    }

    @Test
    void immediateRetryAfterTheResponseIsReplayedNeverRefused() {
        for (int i = 0; i < 50; i++) {
            String key = Http.newKey();
            HttpResponse<String> first = http.postJson("guarded/echo", key, "{}");
            HttpResponse<String> retry = http.postJson("guarded/echo", key, "{}");
            assertEquals(201, retry.statusCode(), "iteration " + i);
            assertEquals(first.body(), retry.body());
        }
    }

    @Test
    void retryThatWaitsForTheInFlightRequestIsReplayed() throws Exception {
        String key = Http.newKey();
        var first = CompletableFuture.supplyAsync(() -> http.post("guarded/wait?millis=1000", key));
        http.awaitExecution(key);
        HttpResponse<String> waiting = http.post("guarded/wait?millis=1000", key);
        assertEquals(200, waiting.statusCode());
        assertEquals(first.get().body(), waiting.body());
        assertEquals("true", waiting.headers().firstValue("Idempotent-Replayed").orElse(null));
        assertEquals(1, http.executions(key));
    }

    @Test
    void optionalKeyLetsRequestsWithoutOneRunUnprotected() {
        String run = Http.newKey();
        var request = http.request("guarded/optional").header("X-Run", run)
                .POST(HttpRequest.BodyPublishers.noBody()).build();
        assertEquals(200, http.send(request).statusCode());
        assertEquals(200, http.send(request).statusCode());
        assertEquals(2, http.executions(run));
    }

    @Test
    void unguardedHttpMethodsPass() {
        String key = Http.newKey();
        var put = http.request("guarded/echo").header(Http.KEY, key).header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString("{}")).build();
        assertEquals(201, http.send(put).statusCode());
        assertEquals(201, http.send(put).statusCode());
        assertEquals(2, http.executions(key));
        assertEquals(200, http.get("class-level").statusCode(), "GET on a class-level guarded resource passes");
    }

    @Test
    void classLevelAnnotationGuardsThePostMethods() {
        String key = Http.newKey();
        assertEquals(400, http.post("class-level", null).statusCode());
        HttpResponse<String> first = http.post("class-level", key);
        HttpResponse<String> retry = http.post("class-level", key);
        assertEquals(first.body(), retry.body());
        assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse(null));
    }

    @Test
    void requestLargerThanTheLimitIsRefusedWith413() {
        String key = Http.newKey();
        String big = "{\"name\":\"" + "x".repeat((1 << 20) + 10) + "\"}";
        HttpResponse<String> response = http.postJson("guarded/payments", key, big);
        assertEquals(413, response.statusCode());
        assertTrue(response.body().contains("https://idemkey.io/problems/request-too-large"));
        assertEquals(0, http.executions(key));
    }

    @Test
    void declaredLengthBeyondTwoGigabytesIsRefusedWith413NotAServerError() {
        String key = Http.newKey();
        String head = "POST {path}guarded/echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                + "Idempotency-Key: " + key + "\r\nContent-Length: 3000000000\r\nConnection: close\r\n\r\n";
        Http.RawResponse response = http.raw(head, "{}".getBytes());
        if ("wildfly".equals(System.getProperty("idemkey.server"))) {
            // Undertow refuses a length beyond 2^31-1 itself, before any application code runs
            assertEquals(400, response.status(), response.head());
            assertFalse(response.isProblem(), "the server's answer, not Idemkey's: " + response.body());
        } else {
            assertEquals(413, response.status());
        }
        assertEquals(0, http.executions(key));
    }

    @Test
    void firstExecutionCostsTwoStoreRoundTripsConflictOneCachedReplayNone() throws Exception {
        http.postJson("guarded/echo", Http.newKey(), "{}"); // scripts cached, connections open
        try (StoreCalls calls = countStoreCalls()) {
            String call = calls.name();
            String key = Http.newKey();
            http.postJson("guarded/echo", key, "{}");
            assertEquals(List.of(call, call), calls.take(), "first: acquire + complete");
            http.postJson("guarded/echo", key, "{}");
            assertEquals(List.of(), calls.take(), "replay: from this server's cache of completed records");

            // held until released, on a 30 s lease: in progress, and no renewal for its first 10 s
            String held = Http.newKey();
            Http.Held first = http.hold(held);
            try (first) {
                calls.take();
                assertEquals(409, http.post("guarded/held", held).statusCode());
                assertEquals(List.of(call), calls.take(), "conflict: acquire only");
            }
            assertEquals(200, first.answer().statusCode());
        }
    }

    /** The application's calls to its store, counted from its start: one entry per round trip. */
    interface StoreCalls extends AutoCloseable {

        /** The name of each round trip Idemkey makes. */
        String name();

        /** The round trips since the last call. */
        List<String> take();

        @Override
        void close();
    }

    /** Counts the Redis commands the application sends (MONITOR); a subclass on another store counts its calls. */
    StoreCalls countStoreCalls() {
        return redisCalls();
    }

    /** The commands the shared test Redis receives from clients (MONITOR). */
    static StoreCalls redisCalls() {
        return redisCalls(List.of(TestRedis.get()));
    }

    /**
     * The round trips to these Redis servers (MONITOR on each, together): each script call
     * ({@code evalsha}), and each acquire ({@code set} and {@code pttl} in one write: the store's
     * unit tests count Redis's socket reads); any other command, one more.
     */
    static StoreCalls redisCalls(List<RedisServer> servers) {
        List<RedisMonitor> monitors = servers.stream().map(RedisMonitor::start).toList();
        return new StoreCalls() {
            @Override
            public String name() {
                return "round trip";
            }

            @Override
            public List<String> take() {
                List<String> sent = new ArrayList<>();
                monitors.forEach(monitor -> sent.addAll(monitor.takeClientCommands()));
                sent.removeIf("pttl"::equals); // an acquire's second command
                return Collections.nCopies(sent.size(), name());
            }

            @Override
            public void close() {
                monitors.forEach(RedisMonitor::close);
            }
        };
    }

    /** Stops the application's store (an outage); a subclass on another store stops that one. */
    void stopStore() {
        TestRedis.get().stop();
    }

    /** Brings the store back, with its records. */
    void restartStore() {
        TestRedis.get().restart();
    }

    @Test
    void storeUnreachableFailsClosedWith503AndTheMethodDoesNotRun() {
        String key = Http.newKey();
        stopStore();
        try {
            long start = System.nanoTime();
            HttpResponse<String> response = http.postJson("guarded/payments", key, "{\"name\":\"n\"}");
            long millis = (System.nanoTime() - start) / 1_000_000;
            assertEquals(503, response.statusCode());
            assertTrue(response.body().contains("https://idemkey.io/problems/store-unavailable"));
            assertEquals("1", response.headers().firstValue("Retry-After").orElse(null));
            assertTrue(millis < 3000, "answered in " + millis + " ms");

            String openKey = Http.newKey();
            HttpResponse<String> open = http.post("guarded/fail-open", openKey);
            assertEquals(200, open.statusCode(), "fail-open endpoints run unprotected");
            assertEquals(1, http.executions("open:" + openKey));
        } finally {
            restartStore();
        }
        assertEquals(0, http.executions(key));
        HttpResponse<String> afterRecovery = http.postJson("guarded/payments", key, "{\"name\":\"n\"}");
        assertEquals(201, afterRecovery.statusCode(), "the first request after the store returns succeeds");
        assertEquals(1, http.executions(key));
    }

    private static String contentType(HttpResponse<String> response) {
        return response.headers().firstValue("Content-Type").orElse("").split(";")[0].trim();
    }
}
