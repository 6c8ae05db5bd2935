package io.idemkey.core;

import java.util.List;

/**
 * Parses the {@code Idempotency-Key} request header as the IETF draft defines it: an RFC 8941
 * String ({@code "8e03978e-40d5-43e8-bc93-6894a57f9324"}), or, as Stripe clients send it, a bare
 * token of visible ASCII without {@code "} and {@code ,}. Both forms of the same key are the same key.
 *
 * <p>Refused: an empty value or {@code ""}; a value longer than the limit after unquoting; space,
 * TAB, other control characters or non-ASCII characters inside the value; a broken quoted string;
 * a comma-joined list; the header sent more than once.
 */
public final class KeyHeader {

    /** The outcome of parsing: a closed set. */
    public sealed interface Result {
    }

    /** No header was sent. */
    public record Missing() implements Result {
    }

    /** A well-formed key; {@code key} is the unquoted value. */
    public record Valid(String key) implements Result {
    }

    /** A malformed header; {@code reason} says what is wrong, for the client. */
    public record Invalid(String reason) implements Result {
    }

    private static final Result MISSING = new Missing();

    private KeyHeader() {
    }

    /**
     * @param values    every value of the header in the request, as the container reports them
     *                  (one per header line); {@code null} or empty when absent
     * @param maxLength the longest accepted key, after unquoting
     */
    public static Result parse(List<String> values, int maxLength) {
        if (values == null || values.isEmpty()) {
            return MISSING;
        }
        if (values.size() > 1) {
            return new Invalid("the header must be sent once, it was sent " + values.size() + " times");
        }
        String raw = trimOws(values.get(0));
        if (raw.isEmpty()) {
            return new Invalid("the key is empty");
        }
        String key = raw.charAt(0) == '"' ? unquote(raw) : bare(raw);
        if (key == null) {
            return invalidCharacters(raw);
        }
        if (key.isEmpty()) {
            return new Invalid("the key is empty");
        }
        if (key.length() > maxLength) {
            return new Invalid("the key is " + key.length() + " characters long, the limit is " + maxLength);
        }
        return new Valid(key);
    }

    /** An sf-string; null if broken, or if it holds a character a key may not have. */
    private static String unquote(String raw) {
        StringBuilder key = new StringBuilder(raw.length());
        int i = 1;
        while (i < raw.length()) {
            char c = raw.charAt(i++);
            if (c == '\\') {
                if (i == raw.length()) {
                    return null;
                }
                char escaped = raw.charAt(i++);
                if (escaped != '"' && escaped != '\\') {
                    return null;
                }
                key.append(escaped);
            } else if (c == '"') {
                return i == raw.length() ? key.toString() : null;
            } else if (c > 0x20 && c < 0x7f) {
                key.append(c);
            } else {
                return null;
            }
        }
        return null;
    }

    /** A bare token of visible ASCII, without {@code "} and {@code ,}; null otherwise. */
    private static String bare(String raw) {
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            if (c <= 0x20 || c >= 0x7f || c == '"' || c == ',') {
                return null;
            }
        }
        return raw;
    }

    private static Invalid invalidCharacters(String raw) {
        if (raw.indexOf(',') >= 0 && raw.charAt(0) != '"') {
            return new Invalid("the header holds a list; send exactly one key");
        }
        if (raw.charAt(0) == '"') {
            return new Invalid("the quoted key is malformed or holds characters other than visible ASCII");
        }
        return new Invalid("the key holds characters other than visible ASCII (no spaces, control characters, '\"' or ',')");
    }

    private static String trimOws(String value) {
        int start = 0;
        int end = value.length();
        while (start < end && isOws(value.charAt(start))) {
            start++;
        }
        while (end > start && isOws(value.charAt(end - 1))) {
            end--;
        }
        return value.substring(start, end);
    }

    private static boolean isOws(char c) {
        return c == ' ' || c == '\t';
    }
}
