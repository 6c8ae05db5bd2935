package io.idemkey.it;

import jakarta.json.Json;
import jakarta.json.JsonArray;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import jakarta.json.JsonValue;

import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a server publishes about its applications, read as a monitoring system or an API portal
 * would: MicroProfile Metrics ({@code /metrics}, Prometheus text) and MicroProfile OpenAPI
 * ({@code /openapi}, as JSON).
 */
final class ServerDocuments {

    private final URI server;
    private final HttpClient client = HttpClient.newHttpClient();

    /** @param anyUriOnTheServer an application's URI: the documents are at the server's root */
    ServerDocuments(URI anyUriOnTheServer) {
        this.server = anyUriOnTheServer.resolve("/");
    }

    /** The application scope of {@code /metrics}. */
    String metrics() {
        HttpResponse<String> response = get("metrics?scope=application", "text/plain");
        if (response.statusCode() != 200) {
            throw new AssertionError("/metrics answered " + response.statusCode() + ": " + response.body());
        }
        return response.body();
    }

    /**
     * The value of a metric line, summed over the lines whose name is {@code name} (Prometheus form,
     * {@code idempotency_acquired_total}) and whose labels contain every one of {@code labels}
     * ({@code endpoint="POST /orders"}); 0 if there is none.
     */
    static double value(String metrics, String name, String... labels) {
        double sum = 0;
        Matcher line = Pattern.compile("(?m)^" + Pattern.quote(name) + "\\{([^}]*)}\\s+(\\S+)$").matcher(metrics);
        outer:
        while (line.find()) {
            for (String label : labels) {
                if (!line.group(1).contains(label)) {
                    continue outer;
                }
            }
            sum += Double.parseDouble(line.group(2));
        }
        return sum;
    }

    /** {@code /openapi} as JSON. */
    JsonObject openApi() {
        HttpResponse<String> response = get("openapi?format=JSON", "application/json");
        if (response.statusCode() != 200) {
            throw new AssertionError("/openapi answered " + response.statusCode() + ": " + response.body());
        }
        try (JsonReader reader = Json.createReader(new StringReader(response.body()))) {
            return reader.readObject();
        }
    }

    /** The operation of the document at this path and HTTP method ({@code post}). */
    static JsonObject operation(JsonObject openApi, String path, String method) {
        JsonObject paths = openApi.getJsonObject("paths");
        JsonObject item = paths.getJsonObject(path);
        if (item == null) { // WildFly's document paths start with the context root: /observability/guarded/echo
            item = paths.entrySet().stream()
                    .filter(e -> e.getKey().endsWith(path) && e.getKey().substring(0, e.getKey().length() - path.length())
                            .matches("/[^/]+"))
                    .map(e -> e.getValue().asJsonObject()).findFirst().orElse(null);
        }
        if (item == null || !item.containsKey(method)) {
            throw new AssertionError("no " + method + " " + path + " in " + openApi.getJsonObject("paths").keySet());
        }
        return item.getJsonObject(method);
    }

    /** The header parameter of an operation with this name, or null. */
    static JsonObject headerParameter(JsonObject operation, String name) {
        JsonArray parameters = operation.getJsonArray("parameters");
        if (parameters == null) {
            return null;
        }
        for (JsonValue value : parameters) {
            JsonObject parameter = value.asJsonObject();
            if ("header".equals(parameter.getString("in", "")) && name.equalsIgnoreCase(parameter.getString("name", ""))) {
                return parameter;
            }
        }
        return null;
    }

    private HttpResponse<String> get(String path, String accept) {
        try {
            return client.send(HttpRequest.newBuilder(server.resolve(path)).header("Accept", accept)
                    .timeout(Duration.ofSeconds(60)).GET().build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
