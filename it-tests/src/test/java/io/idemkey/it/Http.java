package io.idemkey.it;

import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/** A small HTTP client for the tests: real requests over loopback. */
public final class Http {

    public static final String KEY = "Idempotency-Key";

    private final URI base;
    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10)).build();

    public Http(URL base) {
        this(URI.create(base.toString()));
    }

    public Http(URI base) {
        this.base = URI.create(base.toString().endsWith("/") ? base.toString() : base + "/");
    }

    public static String newKey() {
        return UUID.randomUUID().toString();
    }

    public HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(base.resolve(path.startsWith("/") ? path.substring(1) : path))
                .timeout(Duration.ofSeconds(60));
    }

    /** A request as one of the test application's users (basic auth, password "pw"); anonymous when null. */
    public HttpRequest.Builder request(String path, String user) {
        HttpRequest.Builder request = request(path);
        if (user != null) {
            request.header("Authorization", "Basic " + Base64.getEncoder()
                    .encodeToString((user + ":pw").getBytes(StandardCharsets.UTF_8)));
        }
        return request;
    }

    /** POST a JSON body with the given key (none when null). */
    public HttpResponse<String> postJson(String path, String key, String json) {
        HttpRequest.Builder request = request(path).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json));
        if (key != null) {
            request.header(KEY, key);
        }
        return send(request.build());
    }

    /** POST an {@code application/x-www-form-urlencoded} body, as given, with the given key. */
    public HttpResponse<String> postForm(String path, String key, String form) {
        return send(request(path).header(KEY, key).header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(form)).build());
    }

    public HttpResponse<String> post(String path, String key) {
        HttpRequest.Builder request = request(path).POST(HttpRequest.BodyPublishers.noBody());
        if (key != null) {
            request.header(KEY, key);
        }
        return send(request.build());
    }

    /** POST without a body, with a key, as one of the test application's users (anonymous when null). */
    public HttpResponse<String> postAs(String user, String path, String key) {
        return send(request(path, user).header(KEY, key).POST(HttpRequest.BodyPublishers.noBody()).build());
    }

    public HttpResponse<String> get(String path) {
        return send(request(path).GET().build());
    }

    public int executions(String key) {
        return Integer.parseInt(get("guarded/executions?key=" + query(key)).body().trim());
    }

    /** A value as a query parameter's value: keys may hold a colon, which Payara 7 refuses in a path. */
    public static String query(String value) {
        return java.net.URLEncoder.encode(value, StandardCharsets.UTF_8);
    }

    /** One of Idemkey's counters on this server, such as {@code idempotency.fail.open}. */
    public long metric(String name) {
        JsonObject counters = json(get("guarded/metrics"));
        if (!counters.containsKey(name)) {
            throw new IllegalStateException("no metric " + name + " in " + counters);
        }
        return counters.getJsonNumber(name).longValue();
    }

    /**
     * Idemkey's check ({@code idempotency-store}) in the server's MicroProfile Health readiness
     * ({@code /health/ready}), which must answer the given status (200 when UP, 503 when DOWN).
     */
    public JsonObject storeCheck(int status) {
        HttpResponse<String> readiness = send(HttpRequest.newBuilder(base.resolve("/health/ready"))
                .timeout(Duration.ofSeconds(60)).GET().build());
        if (readiness.statusCode() != status) {
            throw new AssertionError("readiness answered " + readiness.statusCode() + ", not " + status + ": "
                    + readiness.body());
        }
        return json(readiness).getJsonArray("checks").getValuesAs(JsonObject.class).stream()
                .filter(check -> check.getString("name").equals("idempotency-store")).findFirst()
                .orElseThrow(() -> new AssertionError("no idempotency-store check in " + readiness.body()));
    }

    /**
     * A request to the test application's {@code guarded/held} with this key, started and running
     * (on a 30 s lease, until released): {@link Held#close()} releases it.
     */
    public Held hold(String key) throws InterruptedException {
        Held held = new Held(key, CompletableFuture.supplyAsync(() -> post("guarded/held", key)));
        try {
            awaitExecution(key);
        } catch (InterruptedException | RuntimeException | Error e) {
            held.close();
            throw e;
        }
        return held;
    }

    /** A request {@link #hold held} in progress. */
    public final class Held implements AutoCloseable {

        private final String key;
        private final CompletableFuture<HttpResponse<String>> answer;

        private Held(String key, CompletableFuture<HttpResponse<String>> answer) {
            this.key = key;
            this.answer = answer;
        }

        /** Its answer, once released. */
        public HttpResponse<String> answer() throws Exception {
            return answer.get();
        }

        /** Lets it answer. */
        @Override
        public void close() {
            post("guarded/release?key=" + query(key), null);
        }
    }

    /** Waits until the guarded method has started for this key (it counts its execution first). */
    public void awaitExecution(String key) throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (executions(key) == 0) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the request with key " + key + " did not start");
            }
            Thread.sleep(20);
        }
    }

    public static JsonObject json(HttpResponse<String> response) {
        try (JsonReader reader = Json.createReader(new StringReader(response.body()))) {
            return reader.readObject();
        }
    }

    public HttpResponse<String> send(HttpRequest request) {
        try {
            return client.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** An answer to {@link #raw}: the status, the head as text, the body. */
    public record RawResponse(int status, String head, String body) {
        /** The first line of the head, as the server wrote it: {@code HTTP/1.1 422 Unprocessable Content}. */
        public String statusLine() {
            return head.lines().findFirst().orElse("");
        }

        public boolean isProblem() {
            return head.toLowerCase(Locale.ROOT).contains("content-type: application/problem+json");
        }
    }

    /**
     * Sends raw bytes on a fresh connection (for header values a well-behaved client refuses to
     * send; {@code {path}} in the head is the application's base path) and reads the answer.
     */
    public RawResponse raw(String requestHead, byte[] body) {
        try (Socket socket = new Socket(base.getHost(), base.getPort())) {
            socket.setSoTimeout(30_000);
            OutputStream out = socket.getOutputStream();
            out.write(requestHead.replace("{path}", base.getPath()).getBytes(StandardCharsets.ISO_8859_1));
            try {
                out.write(body);
                out.flush();
            } catch (IOException refusedEarly) {
                // the server may answer and close before it read the whole body
            }
            InputStream in = socket.getInputStream();
            StringBuilder headText = new StringBuilder();
            while (!headText.toString().endsWith("\r\n\r\n")) {
                int c = in.read();
                if (c == -1) {
                    break;
                }
                headText.append((char) c);
            }
            String head = headText.toString().trim();
            Matcher length = Pattern.compile("(?im)^content-length:\\s*(\\d+)").matcher(head);
            // read the declared body (the server may keep the connection open), else until it closes
            byte[] bodyBytes = length.find() ? in.readNBytes(Integer.parseInt(length.group(1))) : in.readAllBytes();
            String bodyText = new String(bodyBytes, StandardCharsets.ISO_8859_1);
            return new RawResponse(Integer.parseInt(head.split(" ")[1]), head, bodyText);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** POST a JSON body with the given key on a fresh connection, to read the answer's head as it was written. */
    public RawResponse rawPostJson(String path, String key, String json) {
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        return raw("POST {path}" + path + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                + KEY + ": " + key + "\r\nContent-Length: " + body.length + "\r\nConnection: close\r\n\r\n", body);
    }

    public int rawStatus(String requestHead, byte[] body) {
        return raw(requestHead, body).status();
    }
}
