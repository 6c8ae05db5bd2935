package io.idemkey.core;

import java.nio.charset.StandardCharsets;

/**
 * Builds the store key of a record: {@code <prefix><scope>:<key>}, where scope (the caller: a
 * principal name, a tenant header value, or empty) and the client's key are percent-encoded so that
 * neither can contain the {@code :} separator, a Redis Cluster hash tag, or anything else that
 * could address another caller's record. Readable in {@code redis-cli} for the common case
 * (UUID keys, plain user names). What follows the prefix is only RFC 3986 unreserved characters,
 * {@code %} escapes and {@code :}: never {@code =}, which marks a hashed store key
 * ({@link RecordIdentifiers#HASHED_MARKER}).
 */
public final class RecordKey {

    private RecordKey() {
    }

    public static String of(String prefix, String scope, String key) {
        StringBuilder out = new StringBuilder(prefix.length() + scope.length() + key.length() + 8);
        out.append(prefix);
        escape(scope, out);
        out.append(':');
        escape(key, out);
        return out.toString();
    }

    /**
     * The record key of an idempotent call: {@code <prefix>call:<scope>:<key>}, both escaped. An HTTP
     * record key holds exactly one unescaped {@code :} after the prefix, this one two, so a call can
     * never answer a request's key or the other way round, whatever the scopes.
     */
    public static String ofCall(String prefix, String scope, String key) {
        return of(prefix + "call:", scope, key);
    }

    private static void escape(String value, StringBuilder out) {
        for (byte b : value.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            if (isUnreserved(c)) {
                out.append((char) c);
            } else {
                out.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
            }
        }
    }

    /** RFC 3986 unreserved characters: they pass unchanged. */
    private static boolean isUnreserved(int c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                || c == '-' || c == '.' || c == '_' || c == '~';
    }
}
