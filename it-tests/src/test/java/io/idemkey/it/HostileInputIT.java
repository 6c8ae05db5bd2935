package io.idemkey.it;

import io.idemkey.core.RecordKey;
import io.idemkey.testing.RedisRecords;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

import java.io.ByteArrayOutputStream;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.zip.DeflaterOutputStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Hostile clients: malformed, oversized and odd headers and bodies get a clear 4xx (Idemkey's own
 * as problem+json), never a 5xx, never a hang, never a record stuck in progress.
 */
@RunAsClient
class HostileInputIT extends ClientOfOneDeployment {

    private static final String HEAD = "POST {path}guarded/echo HTTP/1.1\r\nHost: localhost\r\n"
            + "Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n";

    @Deployment
    static WebArchive deployment() {
        return Deployments.guardedApp("hostile", Map.of());
    }

    @Test
    void malformedKeyHeadersAreRefusedWith400ProblemAndCreateNoRecord() {
        List<String> values = new ArrayList<>(List.of(
                "k".repeat(256), "k".repeat(4000), "\"unterminated", "trailing\"", "\"bad\\escape\"", "\"a\" extra",
                "\"\"", "", "   ", "a,b", "\"a\", \"b\"", "has space", "tab\there",
                "caf\u00e9", "\u00ff\u00fe", "\u00c3\u00a9"));
        for (char c = 1; c < 0x20; c++) {
            if (c != '\t' && c != '\r' && c != '\n') {
                values.add("ctl" + c + "x");
            }
        }
        values.add("del\u007fx");
        long records = records();
        List<String> answeredByIdemkey = new ArrayList<>();
        for (String value : values) {
            Http.RawResponse response = http.raw(HEAD + "Idempotency-Key: " + value + "\r\n\r\n", "{}".getBytes());
            assertEquals(400, response.status(), printable(value) + ": " + response.head());
            // Idemkey's own answer, or the HTTP container's bare refusal of a byte it does not accept
            // in a header at all (Grizzly on Payara refuses control and non-ASCII bytes itself)
            boolean refusedByContainer = response.body().isEmpty() && !response.head().toLowerCase(Locale.ROOT).contains("content-type");
            assertTrue(response.isProblem() || refusedByContainer, printable(value) + ": " + response.head() + response.body());
            if (response.isProblem()) {
                assertTrue(response.body().contains("\"type\":\"https://idemkey.io/problems/key-invalid\""), response.body());
                answeredByIdemkey.add(printable(value));
            }
        }
        System.out.println("Idempotency-Key values refused by Idemkey with problem+json: " + answeredByIdemkey.size()
                + " of " + values.size());
        assertTrue(answeredByIdemkey.size() >= 10, "the values every container lets through reach Idemkey: " + answeredByIdemkey);
        String key = Http.newKey();
        Http.RawResponse twice = http.raw(HEAD + "Idempotency-Key: " + key + "\r\nIdempotency-Key: " + key + "\r\n\r\n",
                "{}".getBytes());
        assertEquals(400, twice.status());
        assertTrue(twice.isProblem());
        assertTrue(records() <= records, "no record was created");
    }

    @Test
    void headerOf64KilobytesIsRefusedWithA4xxQuickly() {
        long records = records();
        long start = System.nanoTime();
        Http.RawResponse response = http.raw(HEAD + "Idempotency-Key: " + "k".repeat(64 * 1024) + "\r\n\r\n", "{}".getBytes());
        assertTrue(response.status() >= 400 && response.status() < 500, "status " + response.status());
        assertTrue(System.nanoTime() - start < 10_000_000_000L, "answered without hanging");
        assertTrue(response.isProblem() || !response.body().contains("idemkey.io"),
                "if Idemkey answers (the container may refuse first), it answers problem+json: " + response.body());
        assertTrue(records() <= records, "no record was created");
    }

    @Test
    void malformedJsonIsA4xxAndReleasesTheKeySoTheCorrectedRetryRuns() {
        // (not trailing garbage after a complete value: Yasson reads the value and ignores the rest)
        for (String malformed : List.of("{\"name\": ", "{name: 'n'}", "[1,2", "\"just a string",
                "nul", "{\"name\":\"n\",}", "\u0000\u0001")) {
            String key = Http.newKey();
            HttpResponse<String> refused = http.postJson("guarded/payments", key, malformed);
            assertTrue(refused.statusCode() >= 400 && refused.statusCode() < 500, malformed + ": " + refused.statusCode());
            assertNotStuck(key);
            assertEquals(201, http.postJson("guarded/payments", key, "{\"name\":\"n\"}").statusCode(), malformed);
        }
    }

    @Test
    void emptyBodyIsA4xxAndReleasesTheKey() {
        String key = Http.newKey();
        HttpResponse<String> refused = http.postJson("guarded/payments", key, "");
        assertEquals(400, refused.statusCode());
        assertNotStuck(key);
    }

    @Test
    void bodyOfTenMegabytesIsRefusedWith413WithOrWithoutContentLength() {
        byte[] tenMegabytes = ("{\"name\":\"" + "x".repeat(10 << 20) + "\"}").getBytes(StandardCharsets.UTF_8);
        String key = Http.newKey();
        HttpResponse<String> declared = http.send(http.request("guarded/payments").header(Http.KEY, key)
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofByteArray(tenMegabytes)).build());
        assertEquals(413, declared.statusCode());
        assertTrue(declared.body().contains("https://idemkey.io/problems/request-too-large"));

        HttpResponse<String> chunked = http.send(http.request("guarded/payments").header(Http.KEY, key)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(tenMegabytes))).build());
        assertEquals(413, chunked.statusCode());
        assertNotStuck(key);
        assertEquals(0, http.executions(key));
    }

    @Test
    void aBodyAFilterDecodedIsFingerprintedWholeNotCutAtItsContentLength() {
        String padding = "a".repeat(4000);
        byte[] first = deflated("{\"note\":\"" + padding + "\",\"amount\":1}");
        byte[] second = deflated("{\"note\":\"" + padding + "\",\"amount\":2}");
        assertEquals(first.length, second.length, "both deflate to the same length: cut there, they would be the same");
        String key = Http.newKey();
        assertEquals(201, deflatedPost(key, first).status());
        Http.RawResponse other = deflatedPost(key, second);
        assertEquals(422, other.status(), "the same key with another body: " + other.head() + other.body());
        assertEquals(1, http.executions(key));
    }

    @Test
    void aBodyAFilterDecodedBeyondTheLimitIsRefusedWith413() {
        byte[] twoMegabytes = deflated("{\"note\":\"" + "a".repeat(2 << 20) + "\"}");
        String key = Http.newKey();
        Http.RawResponse response = deflatedPost(key, twoMegabytes);
        assertEquals(413, response.status(), twoMegabytes.length + " B deflated: " + response.head() + response.body());
        assertNotStuck(key);
        assertEquals(0, http.executions(key));
    }

    private Http.RawResponse deflatedPost(String key, byte[] body) {
        return http.raw("POST {path}guarded/echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                + "X-Deflated-Body: yes\r\nContent-Length: " + body.length + "\r\nConnection: close\r\n"
                + Http.KEY + ": " + key + "\r\n\r\n", body);
    }

    private static byte[] deflated(String json) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (DeflaterOutputStream deflating = new DeflaterOutputStream(out)) {
            deflating.write(json.getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    @Test
    void jsonNestedOneHundredThousandDeepNeverBreaksIdemkey() {
        String deep = "[".repeat(100_000) + "]".repeat(100_000);
        String key = Http.newKey();
        // a String endpoint takes it as it is: fingerprinted as raw bytes, recorded and replayed
        HttpResponse<String> first = http.postJson("guarded/echo", key, deep);
        assertEquals(201, first.statusCode());
        assertEquals(first.body(), http.postJson("guarded/echo", key, deep).body());
        assertEquals(422, http.postJson("guarded/echo", key, deep + " ").statusCode(), "raw bytes: any change is another request");

        // a JSON-B endpoint: its reader refuses it (the application's answer), and the key is released
        String other = Http.newKey();
        HttpResponse<String> refused = http.postJson("guarded/payments", other, "{\"name\":\"n\",\"amount\":" + deep + "}");
        assertTrue(refused.statusCode() >= 400 && refused.statusCode() < 500, "status " + refused.statusCode());
        assertNotStuck(other);
    }

    @Test
    void nonJsonMediaTypesAreRefusedBeforeAnyKeyIsTaken() {
        String key = Http.newKey();
        for (String type : List.of("text/plain", "application/xml", "application/octet-stream")) {
            HttpResponse<String> refused = http.send(http.request("guarded/payments").header(Http.KEY, key)
                    .header("Content-Type", type).POST(HttpRequest.BodyPublishers.ofString("name=n")).build());
            assertEquals(415, refused.statusCode(), type);
        }
        assertNotStuck(key);
        assertEquals(201, http.postJson("guarded/payments", key, "{\"name\":\"n\"}").statusCode());
    }

    @Test
    void invalidUtf8IsNeverA5xxAndDifferentBytesAreDifferentRequests() {
        byte[] first = bytes("{\"name\":\"", new byte[]{(byte) 0xff, (byte) 0xfe}, "\"}");
        byte[] second = bytes("{\"name\":\"", new byte[]{(byte) 0xc3, (byte) 0x28}, "\"}");
        String key = Http.newKey();
        HttpResponse<String> answer = postBytes("guarded/echo", key, first);
        assertTrue(answer.statusCode() < 500, "status " + answer.statusCode());
        assertEquals(answer.body(), postBytes("guarded/echo", key, first).body(), "the same bytes: replayed");
        assertEquals(422, postBytes("guarded/echo", key, second).statusCode(), "other bytes: another request");

        String payment = Http.newKey();
        HttpResponse<String> paymentAnswer = postBytes("guarded/payments", payment, first);
        assertTrue(paymentAnswer.statusCode() < 500, "status " + paymentAnswer.statusCode());
        assertNotStuck(payment);
    }

    private HttpResponse<String> postBytes(String path, String key, byte[] body) {
        return http.send(http.request(path).header(Http.KEY, key).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build());
    }

    /** The key's record is gone or completed: nothing waits for a lease to run out. */
    private static void assertNotStuck(String key) {
        try (Jedis redis = TestRedis.get().client()) {
            String state = RedisRecords.state(redis, RecordKey.of("idempotency:", "", key));
            assertNotEquals("P", state, "the record of " + key + " is stuck in progress");
        }
    }

    private static long records() {
        try (Jedis redis = TestRedis.get().client()) {
            return redis.dbSize();
        }
    }

    private static byte[] bytes(String before, byte[] middle, String after) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(before.getBytes(StandardCharsets.UTF_8));
        out.writeBytes(middle);
        out.writeBytes(after.getBytes(StandardCharsets.UTF_8));
        return out.toByteArray();
    }

    private static String printable(String value) {
        StringBuilder out = new StringBuilder();
        for (char c : value.toCharArray()) {
            out.append(c < 0x20 || c > 0x7e ? String.format("\\u%04x", (int) c) : String.valueOf(c));
        }
        return out.length() > 40 ? out.substring(0, 40) + "..." : out.toString();
    }
}
