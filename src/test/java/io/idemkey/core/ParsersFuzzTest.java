package io.idemkey.core;

import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import jakarta.json.Json;
import jakarta.json.JsonArray;
import jakarta.json.JsonException;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import jakarta.json.spi.JsonProvider;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Jazzer fuzz tests of the parsers that face hostile bytes: the key header, the JSON fingerprint (and
 * its byte tokenizer against the JSON-P path) and the stored-record codec (plain and sealed). {@code mvn test} runs them in regression mode over the
 * inputs committed under {@code src/test/resources/io/idemkey/core/ParsersFuzzTestInputs/}; with
 * {@code JAZZER_FUZZ=1} one of them fuzzes (docs/security.md).
 */
class ParsersFuzzTest {

    private static final Fingerprint FINGERPRINT = new Fingerprint();
    /** The reference path: JSON through JSON-P (Parsson here). */
    private static final Fingerprint JSON_P = new Fingerprint(JsonProvider.provider());
    private static final String SPEC;
    static {
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        SPEC = "fuzz:" + Base64.getEncoder().encodeToString(key);
    }
    private static final RecordCodec SEALED = new RecordCodec(RecordCipher.parse(SPEC), false);
    private static final String RECORD_KEY = "idempotency:h=fuzz";
    private static final byte[] STORED_FINGERPRINT = new byte[16];

    /** Any header lines: an answer, never an exception; a valid key is what the rules allow, and reads back the same. */
    @FuzzTest(maxDuration = "10m")
    void keyHeader(byte[] data) {
        List<String> lines = Arrays.asList(new String(data, StandardCharsets.ISO_8859_1).split("\n", -1));
        KeyHeader.Result result = KeyHeader.parse(lines.size() == 1 && lines.get(0).isEmpty() ? List.of() : lines, 64);
        if (result instanceof KeyHeader.Valid valid) {
            String key = valid.key();
            assertTrue(key.length() >= 1 && key.length() <= 64, key);
            assertTrue(key.chars().allMatch(c -> c >= 0x20 && c < 0x7f), key);
            String quoted = "\"" + key.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
            assertEquals(valid, KeyHeader.parse(List.of(quoted), 64), "the quoted form of the same key");
            if (key.chars().noneMatch(c -> c == '"' || c == ',' || c == ' ')) {
                assertEquals(valid, KeyHeader.parse(List.of(key), 64), "the bare form of the same key");
            }
        }
    }

    /**
     * Any entity: a fingerprint, never an exception (bodies that do not parse are hashed raw); two
     * re-serialisations of the same JSON value (members reversed, white space, escapes) fingerprint the
     * same; changing one value that is not excluded changes it.
     */
    @FuzzTest(maxDuration = "10m")
    void fingerprint(byte[] data) {
        byte[] digest = FINGERPRINT.of("POST", "/orders", List.of(Map.entry("a", "b")), true, data, Set.of("ts"));
        assertEquals(32, digest.length);
        assertArrayEquals(digest, FINGERPRINT.of("POST", "/orders", List.of(Map.entry("a", "b")), true, data, Set.of("ts")));
        JsonValue value;
        try (JsonReader reader = Json.createReader(new ByteArrayInputStream(data))) {
            value = reader.readValue();
        } catch (JsonException | IllegalStateException | NumberFormatException | ArithmeticException | StackOverflowError notJson) {
            // not a value JSON-P can hold (e.g. an exponent beyond BigDecimal: fuzzing found 1e4006666666666666), hashed raw
            return;
        }
        if (depth(value) >= Fingerprint.MAX_JSON_DEPTH - 1) {
            return;
        }
        if (hasLoneSurrogate(value.toString())) {
            // not Unicode text (RFC 8259 8.2): the fingerprint hashes such a body raw, as documented, so
            // its white space counts (fuzzing found "\ud83d...\ude00" apart)
            assertEquals(null, FINGERPRINT.canonicalJson(data, Set.of("ts")));
            return;
        }
        byte[] compact = utf8(write(value, false));
        byte[] spaced = utf8(write(value, true));
        byte[] a = FINGERPRINT.of("POST", "/orders", List.of(), true, compact, Set.of("ts"));
        byte[] b = FINGERPRINT.of("POST", "/orders", List.of(), true, spaced, Set.of("ts"));
        assertArrayEquals(a, b, () -> new String(compact, StandardCharsets.UTF_8) + " vs " + new String(spaced, StandardCharsets.UTF_8));
        JsonValue changed = changeOneLeaf(value);
        if (changed != null) {
            byte[] c = FINGERPRINT.of("POST", "/orders", List.of(), true, utf8(write(changed, false)), Set.of("ts"));
            assertFalse(Arrays.equals(a, c), () -> "a changed value kept the fingerprint: " + write(changed, false));
        }
    }

    /**
     * Any entity: the byte tokenizer (the default) gives exactly the JSON-P path's fingerprint, so the
     * same canonical form, or the same refusal (the raw bytes hashed: malformed, a lone surrogate, a
     * repeated member, too deep, a number JSON-P will not make a BigDecimal of). {@code "k"} is
     * excluded too, so that names such as the Kelvin sign, equal to it ignoring case, are tried.
     */
    @FuzzTest(maxDuration = "10m")
    @DictionaryEntries({"\\u", "\\ud83d", "\\ude00", "\\u00e9", "\\n", "\\/", "true", "false", "null", "e+", "E-", ".0",
            "-0", "\"ts\"", "\"k\"", "\"\u212a\"", "\u00e9", "\ud83d\ude00", "\u2028", "\ufeff", "[[[[", "{\"a\":", "123456789012345678"})
    void bytesEqualJsonP(byte[] data) {
        Set<String> excluded = Set.of("ts", "k");
        byte[] bytes = FINGERPRINT.of("POST", "/orders", List.of(), true, data, excluded);
        byte[] jsonP = JSON_P.of("POST", "/orders", List.of(), true, data, excluded);
        assertArrayEquals(jsonP, bytes, () -> "JSON-P: " + JSON_P.canonicalJson(data, excluded)
                + ", byte tokenizer: " + FINGERPRINT.canonicalJson(data, excluded));
    }

    /**
     * Any bytes from the store: the plain codec reads a record or refuses it with
     * IllegalArgumentException (never another exception, never half a record: what it reads encodes
     * and reads back the same); the sealed codec refuses every forged record.
     */
    @FuzzTest(maxDuration = "10m")
    void storedRecord(byte[] data) {
        StoredResponse response;
        try {
            response = RecordCodec.PLAIN.decode(RECORD_KEY, STORED_FINGERPRINT, data);
        } catch (IllegalArgumentException refused) {
            response = null;
        } catch (OutOfMemoryError bomb) {
            throw new AssertionError("a stored record inflated without bound", bomb);
        }
        if (response != null) {
            try {
                StoredResponse again = RecordCodec.PLAIN.decode(RECORD_KEY, STORED_FINGERPRINT,
                        RecordCodec.PLAIN.encode(RECORD_KEY, STORED_FINGERPRINT, response));
                assertEquals(response, again);
            } catch (IllegalArgumentException notRecordable) {
                // more headers or longer values than a record holds: the engine releases such a response
            }
        }
        assertThrows(IllegalArgumentException.class, () -> SEALED.decode(RECORD_KEY, STORED_FINGERPRINT, data),
                "a forged sealed record was read");
    }

    /** A sealed record with any bytes changed is refused, whatever the change. */
    @FuzzTest(maxDuration = "10m")
    void tamperedSealedRecord(byte[] data) {
        byte[] sealed = SEALED.encode(RECORD_KEY, STORED_FINGERPRINT, new StoredResponse(201,
                List.of(new StoredResponse.Header("Location", "/orders/1")), "{\"id\":1}".getBytes(StandardCharsets.UTF_8)));
        byte[] tampered = sealed.clone();
        boolean changed = false;
        for (int i = 0; i + 1 < data.length; i += 2) {
            int at = (data[i] & 0xff) % tampered.length;
            tampered[at] ^= data[i + 1];
            changed |= data[i + 1] != 0;
        }
        if (data.length % 2 == 1) {
            tampered = Arrays.copyOf(tampered, Math.max(0, tampered.length - 1 - (data[data.length - 1] & 0x1f)));
            changed = true;
        }
        if (!changed || Arrays.equals(tampered, sealed)) {
            assertEquals(201, SEALED.decode(RECORD_KEY, STORED_FINGERPRINT, tampered).status());
            return;
        }
        byte[] forged = tampered;
        assertThrows(IllegalArgumentException.class, () -> SEALED.decode(RECORD_KEY, STORED_FINGERPRINT, forged));
    }

    private static boolean hasLoneSurrogate(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return true;
            }
        }
        return false;
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static int depth(JsonValue value) {
        if (value instanceof JsonObject object) {
            return 1 + object.values().stream().mapToInt(ParsersFuzzTest::depth).max().orElse(0);
        }
        if (value instanceof JsonArray array) {
            return 1 + array.stream().mapToInt(ParsersFuzzTest::depth).max().orElse(0);
        }
        return 0;
    }

    /** Another serialisation: members in reverse order, and (spaced) white space everywhere and every non-ASCII character escaped. */
    private static String write(JsonValue value, boolean spaced) {
        StringBuilder out = new StringBuilder();
        write(value, spaced, out);
        return out.toString();
    }

    private static void write(JsonValue value, boolean spaced, StringBuilder out) {
        String ws = spaced ? " \n\t" : "";
        if (value instanceof JsonObject object) {
            List<String> names = new ArrayList<>(object.keySet());
            if (!spaced) {
                java.util.Collections.reverse(names);
            }
            out.append('{').append(ws);
            for (int i = 0; i < names.size(); i++) {
                if (i > 0) {
                    out.append(ws).append(',').append(ws);
                }
                string(names.get(i), spaced, out);
                out.append(ws).append(':').append(ws);
                write(object.get(names.get(i)), spaced, out);
            }
            out.append(ws).append('}');
        } else if (value instanceof JsonArray array) {
            out.append('[').append(ws);
            for (int i = 0; i < array.size(); i++) {
                if (i > 0) {
                    out.append(',').append(ws);
                }
                write(array.get(i), spaced, out);
            }
            out.append(ws).append(']');
        } else if (value instanceof JsonString s) {
            string(s.getString(), spaced, out);
        } else {
            out.append(value.toString());
        }
    }

    private static void string(String s, boolean escapeAll, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            // a lone surrogate has no UTF-8 form (getBytes would write '?', another value): always escaped
            if (c == '"' || c == '\\' || c < 0x20 || (escapeAll && c > 0x7e) || Character.isSurrogate(c)) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        out.append('"');
    }

    /** The value with its first leaf outside excluded members changed; null if it has none. */
    private static JsonValue changeOneLeaf(JsonValue value) {
        if (value instanceof JsonObject object) {
            for (Map.Entry<String, JsonValue> member : object.entrySet()) {
                if (member.getKey().equalsIgnoreCase("ts")) {
                    continue;
                }
                JsonValue changed = changeOneLeaf(member.getValue());
                if (changed != null) {
                    return Json.createObjectBuilder(object).add(member.getKey(), changed).build();
                }
            }
            return null;
        }
        if (value instanceof JsonArray array) {
            for (int i = 0; i < array.size(); i++) {
                JsonValue changed = changeOneLeaf(array.get(i));
                if (changed != null) {
                    return Json.createArrayBuilder(array).set(i, changed).build();
                }
            }
            return null;
        }
        if (value instanceof JsonString s) {
            return Json.createValue(s.getString() + "x");
        }
        if (value instanceof JsonNumber n) {
            // negated, not plus one: 14.1e45105105 + 1 has 45 million digits (fuzzing found it: minutes per input)
            java.math.BigDecimal d = n.bigDecimalValue();
            return Json.createValue(d.signum() == 0 ? java.math.BigDecimal.ONE : d.negate());
        }
        if (value == JsonValue.TRUE) {
            return JsonValue.FALSE;
        }
        if (value == JsonValue.FALSE) {
            return JsonValue.TRUE;
        }
        if (value == JsonValue.NULL) {
            return Json.createValue(0);
        }
        fail("unknown JSON value " + value);
        return null;
    }
}
