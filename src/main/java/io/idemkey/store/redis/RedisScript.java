package io.idemkey.store.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * A Lua script from this package's resources, called by its SHA-1 ({@code EVALSHA}); the text is
 * sent ({@code EVAL}, which also caches it again) only when Redis answers {@code NOSCRIPT}, after a
 * restart or a {@code SCRIPT FLUSH}.
 */
final class RedisScript {

    private final byte[] source;
    private final byte[] sha1;

    private RedisScript(byte[] source) {
        this.source = source;
        this.sha1 = HexFormat.of().formatHex(sha1(source)).getBytes(StandardCharsets.US_ASCII);
    }

    static RedisScript load(String name) {
        try (InputStream in = RedisScript.class.getResourceAsStream(name + ".lua")) {
            if (in == null) {
                throw new IllegalStateException("missing script resource " + name + ".lua");
            }
            return new RedisScript(in.readAllBytes());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    byte[] source() {
        return source;
    }

    byte[] sha1() {
        return sha1;
    }

    private static byte[] sha1(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-1").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-1", e);
        }
    }
}
