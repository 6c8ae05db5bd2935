package io.idemkey.core;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;

/**
 * One log line per decision, as text ({@code idempotency decision=replayed endpoint="POST /orders"
 * key="k-1" status=200}, the default) or as one JSON object a log pipeline indexes without parsing
 * rules ({@code idempotency.log.format=json}).
 *
 * <p>The JSON form never carries the key itself: {@code keyHash} is the first 16 hex digits of the
 * SHA-256 of the {@code Idempotency-Key}, enough for an operator to find a customer's request
 * ({@code printf %s "$KEY" | sha256sum | cut -c1-16}) without the key in the log. Neither form carries
 * the caller (the principal or scope header): it is not passed here.
 */
public final class DecisionLog {

    /** How decision lines are written. */
    public enum Format { TEXT, JSON }

    public static final DecisionLog TEXT = new DecisionLog(Format.TEXT);
    public static final DecisionLog JSON = new DecisionLog(Format.JSON);

    private final Format format;

    private DecisionLog(Format format) {
        this.format = format;
    }

    public static DecisionLog of(Format format) {
        return format == Format.JSON ? JSON : TEXT;
    }

    public Format format() {
        return format;
    }

    /**
     * The line of one decision; {@code fields} are name, value pairs (a value: a String, a number,
     * a boolean, or null for none; a pair whose value is null is left out).
     */
    public String line(String decision, String endpoint, String key, Object... fields) {
        if (fields.length % 2 != 0) {
            throw new IllegalArgumentException("fields come in name, value pairs");
        }
        return format == Format.JSON ? json(decision, endpoint, key, fields) : text(decision, endpoint, key, fields);
    }

    private static String text(String decision, String endpoint, String key, Object[] fields) {
        // The key is validated visible ASCII; escaping its quotes keeps the line parseable.
        StringBuilder line = new StringBuilder("idempotency decision=").append(decision)
                .append(" endpoint=").append(quoted(endpoint)).append(" key=").append(quoted(key));
        for (int i = 0; i < fields.length; i += 2) {
            Object value = fields[i + 1];
            if (value != null) {
                line.append(' ').append(fields[i]).append('=').append(value instanceof String s && !s.matches("[\\w.:-]+")
                        ? quoted(s) : String.valueOf(value));
            }
        }
        return line.toString();
    }

    private static String quoted(String value) {
        return "\"" + value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n").replace("\r", "\\r") + "\"";
    }

    private static String json(String decision, String endpoint, String key, Object[] fields) {
        StringBuilder line = new StringBuilder("{\"logger\":\"idempotency\",\"decision\":").append(jsonString(decision))
                .append(",\"endpoint\":").append(jsonString(endpoint))
                .append(",\"keyHash\":").append(jsonString(keyHash(key)));
        for (int i = 0; i < fields.length; i += 2) {
            Object value = fields[i + 1];
            if (value != null) {
                line.append(',').append(jsonString(String.valueOf(fields[i]))).append(':')
                        .append(value instanceof Number || value instanceof Boolean ? String.valueOf(value)
                                : jsonString(String.valueOf(value)));
            }
        }
        return line.append('}').toString();
    }

    /** The first 64 bits of the key's SHA-256, in hex: the key is never in a JSON line. */
    static String keyHash(String key) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    /**
     * A JSON string (RFC 8259, section 7). Written here because the engine imports no platform API;
     * DecisionLogTest reads every form back with JSON-P.
     */
    private static String jsonString(String value) {
        StringBuilder out = new StringBuilder(value.length() + 2).append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }
}
