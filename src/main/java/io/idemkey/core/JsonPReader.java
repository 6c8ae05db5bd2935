package io.idemkey.core;

import jakarta.json.stream.JsonParser;
import jakarta.json.stream.JsonParserFactory;

import java.io.ByteArrayInputStream;
import java.io.CharArrayReader;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Set;

/**
 * The reference JSON reader: feeds a document to the {@link CanonicalEncoder} from JSON-P's
 * streaming parser events. {@link JsonBytesReader} is held equal to it (same encoding or the same
 * refusal, for any input). Thread-safe: each document gets its own parser and encoder.
 */
final class JsonPReader {
    /** Bodies up to this size are decoded into chars at once; larger ones are checked in slices and parsed from their bytes. */
    private static final int DECODED_AT_ONCE = 64 * 1024;

    private final JsonParserFactory parsers;

    JsonPReader(JsonParserFactory parsers) {
        this.parsers = parsers;
    }

    /**
     * The document's canonical encoding, with the members named in {@code excludeFields} removed at
     * every depth; null if it is not usable JSON (not UTF-8, malformed, too deep, a repeated member,
     * a lone surrogate, a number beyond BigDecimal): then the raw bytes are hashed.
     */
    GrowableBytes canonicalOrNull(byte[] json, Set<String> excludeFields) {
        Reader text = strictUtf8Text(json);
        if (text == null) {
            return null;
        }
        CanonicalEncoder encoder = new CanonicalEncoder(json.length, excludeFields, false);
        try (JsonParser parser = parsers.createParser(text)) {
            value(encoder, parser, parser.next(), 0);
            return parser.hasNext() ? null : encoder.out;
        } catch (RuntimeException e) {
            // NotCanonicalizable, any JsonException, a number beyond BigDecimal: hash the raw bytes
            return null;
        }
    }

    private static void value(CanonicalEncoder encoder, JsonParser parser, JsonParser.Event event, int depth) {
        switch (event) {
            case START_OBJECT -> object(encoder, parser, depth);
            case START_ARRAY -> {
                int countAt = encoder.startArray(depth);
                int count = 0;
                for (JsonParser.Event next = parser.next(); next != JsonParser.Event.END_ARRAY; next = parser.next()) {
                    value(encoder, parser, next, depth + 1);
                    count++;
                }
                encoder.endArray(countAt, count);
            }
            case VALUE_STRING -> {
                encoder.out.write('"');
                encoder.text(checked(parser.getString()));
            }
            case VALUE_NUMBER -> number(encoder, parser);
            case VALUE_TRUE -> encoder.out.write('t');
            case VALUE_FALSE -> encoder.out.write('f');
            case VALUE_NULL -> encoder.out.write('n');
            default -> throw new NotCanonicalizable();
        }
    }

    /**
     * Each kept member's name and value encoded as they come, then put in name order by the
     * encoder. Excluded members are read to their end (a truncated one must fail, not hang) and
     * dropped.
     */
    private static void object(CanonicalEncoder encoder, JsonParser parser, int depth) {
        int countAt = encoder.startObject(depth);
        CanonicalMembers members = encoder.members(depth);
        GrowableBytes out = encoder.out;
        for (JsonParser.Event next = parser.next(); next != JsonParser.Event.END_OBJECT; next = parser.next()) {
            String name = checked(parser.getString());
            int start = out.size;
            boolean kept = !encoder.excluded(name);
            if (kept) {
                encoder.text(name);
            }
            value(encoder, parser, parser.next(), depth + 1);
            if (kept) {
                members.add(name, start);
            } else {
                out.size = start;
            }
        }
        encoder.endObject(members, countAt);
    }

    /**
     * A number as its canonical value. Most numbers are written canonically already (a plain
     * integer, or a decimal such as {@code 499.5}), and are taken as they are, without a BigDecimal.
     */
    private static void number(CanonicalEncoder encoder, JsonParser parser) {
        String lexeme = parser.getString();
        if (CanonicalNumbers.isPlainInteger(lexeme)) {
            encoder.integer(Long.parseLong(lexeme));
        } else if (CanonicalNumbers.isPlainDecimal(lexeme)) {
            encoder.decimal(lexeme);
        } else {
            encoder.number(parser.getBigDecimal());
        }
    }

    /**
     * A string with an unpaired surrogate (an escape such as {@code \ud800}) has no UTF-8 form: the
     * encoder would write {@code ?}, and two different bodies would read the same.
     */
    private static String checked(String value) {
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < value.length() && Character.isLowSurrogate(value.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw new NotCanonicalizable();
            }
        }
        return value;
    }

    /**
     * The body as text for the parser, if it is well-formed UTF-8 (decoders replace malformed bytes
     * silently, and two different bodies must never read the same); null if it is not. A small
     * body is decoded into chars in one pass (cheaper than a reader's buffers); a large one is
     * checked in slices through one small buffer and read by a decoding reader, never copied whole.
     */
    private static Reader strictUtf8Text(byte[] bytes) {
        CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        if (bytes.length <= DECODED_AT_ONCE) {
            try {
                CharBuffer text = decoder.decode(ByteBuffer.wrap(bytes));
                return new CharArrayReader(text.array(), text.arrayOffset(), text.limit());
            } catch (CharacterCodingException e) {
                return null;
            }
        }
        ByteBuffer in = ByteBuffer.wrap(bytes);
        CharBuffer out = CharBuffer.allocate(8192);
        while (true) {
            CoderResult result = decoder.decode(in, out, true);
            if (result.isError()) {
                return null;
            }
            if (result.isUnderflow()) {
                return decoder.flush(out.clear()).isError() ? null
                        : new InputStreamReader(new ByteArrayInputStream(bytes), StandardCharsets.UTF_8);
            }
            out.clear();
        }
    }
}
