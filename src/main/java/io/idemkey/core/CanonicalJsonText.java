package io.idemkey.core;

import jakarta.json.stream.JsonGenerator;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;

/** Reads the canonical encoding ({@link CanonicalEncoder}) back, to show it as JSON ({@link Fingerprint#canonicalJson}). */
final class CanonicalJsonText {
    private final GrowableBytes encoded;
    private int at;

    private CanonicalJsonText(GrowableBytes encoded) {
        this.encoded = encoded;
    }

    /** Writes the one value the encoding holds. */
    static void write(GrowableBytes encoded, JsonGenerator generator) {
        new CanonicalJsonText(encoded).writeValue(generator);
    }

    private void writeValue(JsonGenerator generator) {
        switch (encoded.array[at++]) {
            case '{' -> {
                generator.writeStartObject();
                for (int count = readInt(); count > 0; count--) {
                    generator.writeKey(readText());
                    writeValue(generator);
                }
                generator.writeEnd();
            }
            case '[' -> {
                generator.writeStartArray();
                for (int count = readInt(); count > 0; count--) {
                    writeValue(generator);
                }
                generator.writeEnd();
            }
            case '"' -> generator.write(readText());
            case 'i' -> {
                long value = 0;
                for (int i = 0; i < 8; i++) {
                    value = value << 8 | (encoded.array[at++] & 0xff);
                }
                generator.write(value);
            }
            case 'd' -> generator.write(new BigDecimal(readText()));
            case 't' -> generator.write(true);
            case 'f' -> generator.write(false);
            default -> generator.writeNull();
        }
    }

    private int readInt() {
        int value = 0;
        for (int i = 0; i < 4; i++) {
            value = value << 8 | (encoded.array[at++] & 0xff);
        }
        return value;
    }

    private String readText() {
        int length = readInt();
        String text = new String(encoded.array, at, length, StandardCharsets.UTF_8);
        at += length;
        return text;
    }
}
