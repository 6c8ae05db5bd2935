package io.idemkey.client;

import jakarta.json.Json;
import jakarta.json.JsonException;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;

import java.io.StringReader;
import java.util.Optional;

/**
 * An RFC 9457 problem answer as the client received it: {@code type}, {@code title}, {@code status}
 * and {@code detail} where the body has them, and the body itself.
 */
public record Problem(String type, String title, int status, String detail, String body) {

    /** Idemkey's type of a 422 for a key sent again with another request. */
    public static final String KEY_REUSED = "https://idemkey.io/problems/key-reused";
    /**
     * Idemkey's type of a 503 for a request it could not guard: the method did not run (or, with the
     * JDBC store inside a transaction, its transaction was rolled back).
     */
    public static final String STORE_UNAVAILABLE = "https://idemkey.io/problems/store-unavailable";

    /**
     * Reads a problem+json body; a body that is no JSON object keeps only its text and the status.
     *
     * @param status the answer's status
     * @param body the answer's body, or {@code null}
     * @return the problem, members missing from the body empty
     */
    public static Problem parse(int status, String body) {
        if (body == null || body.isBlank()) {
            return new Problem(null, null, status, null, body == null ? "" : body);
        }
        try (JsonReader reader = Json.createReader(new StringReader(body))) {
            JsonObject object = reader.readObject();
            return new Problem(string(object, "type"), string(object, "title"),
                    object.get("status") instanceof JsonNumber n ? n.intValue() : status, string(object, "detail"), body);
        } catch (JsonException | IllegalStateException | ClassCastException notAProblem) {
            return new Problem(null, null, status, null, body);
        }
    }

    /**
     * Whether Idemkey refused the key because it was sent before with another request.
     *
     * @return whether the type is Idemkey's {@code key-reused}
     */
    public boolean keyReused() {
        return KEY_REUSED.equals(type);
    }

    /**
     * Whether Idemkey refused to run the request because its store was unavailable.
     *
     * @return whether the type is Idemkey's {@code store-unavailable}
     */
    public boolean storeUnavailable() {
        return STORE_UNAVAILABLE.equals(type);
    }

    /**
     * The detail, if the body had one.
     *
     * @return the {@code detail} member
     */
    public Optional<String> detailText() {
        return Optional.ofNullable(detail);
    }

    @Override
    public String toString() {
        return status + (type == null ? "" : " " + type) + (detail == null ? "" : ": " + detail);
    }

    private static String string(JsonObject object, String name) {
        JsonValue value = object.get(name);
        return value instanceof JsonString s ? s.getString() : null;
    }
}
