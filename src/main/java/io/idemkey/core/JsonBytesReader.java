package io.idemkey.core;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.Set;

/**
 * The fingerprint's default JSON reader: feeds a document to the {@link CanonicalEncoder} straight
 * from its UTF-8 bytes, without decoding it into chars or making a String of any value but member
 * names and unusual numbers. It accepts exactly what the JSON-P path ({@link JsonPReader}) accepts
 * (Parsson's grammar, after a strict UTF-8 check of the whole body): one value with white space
 * (space, tab, CR, LF) around it; strings without raw control characters, with the escapes
 * {@code \" \\ \/ \b \f \n \r \t} and {@code \}{@code u} with four hex digits; numbers
 * {@code -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?}; well-formed UTF-8 inside strings (the
 * only place a byte above 0x7F may stand). Anything else throws {@link NotCanonicalizable}, as do
 * the JSON-P path's own refusals: a lone surrogate, a repeated member, nesting deeper than
 * {@link Fingerprint#MAX_JSON_DEPTH}, a number BigDecimal cannot hold.
 * {@code ParsersFuzzTest#bytesEqualJsonP} holds the two paths equal on arbitrary input.
 */
final class JsonBytesReader {
    /** Parsson's default {@code org.eclipse.parsson.maxBigDecimalLength}: a longer number that needs a BigDecimal is refused. */
    private static final int BIG_DECIMAL_LENGTH_LIMIT = 1100;
    /** The bytes a string takes as they are: printable ASCII but the quote and the backslash. */
    private static final boolean[] PLAIN = new boolean[256];

    static {
        for (int b = 0x20; b < 0x80; b++) {
            PLAIN[b] = b != '"' && b != '\\';
        }
    }

    private final byte[] in;
    private final CanonicalEncoder encoder;
    private final GrowableBytes out;
    private int at;

    private JsonBytesReader(byte[] in, CanonicalEncoder encoder) {
        this.in = in;
        this.encoder = encoder;
        this.out = encoder.out;
    }

    /**
     * The document's canonical encoding, with the members named in {@code excludeFields} removed at
     * every depth; null if it is not usable JSON (malformed, too deep, a repeated member, a number
     * beyond BigDecimal): then the raw bytes are hashed.
     */
    static GrowableBytes canonicalOrNull(byte[] json, Set<String> excludeFields) {
        try {
            return new JsonBytesReader(json, new CanonicalEncoder(json.length, excludeFields, true)).document();
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** The one value, and nothing but white space after it. */
    private GrowableBytes document() {
        value(next(), 0);
        if (next() != -1) {
            throw new NotCanonicalizable();
        }
        return out;
    }

    /** The next byte that is not white space (consumed), as 0–255; -1 at the end. */
    private int next() {
        byte[] in = this.in;
        while (at < in.length) {
            int b = in[at++] & 0xff;
            if (b != ' ' && b != '\n' && b != '\r' && b != '\t') {
                return b;
            }
        }
        return -1;
    }

    private void value(int first, int depth) {
        switch (first) {
            case '{' -> object(depth);
            case '[' -> array(depth);
            case '"' -> {
                out.write('"');
                string();
            }
            case 't' -> literal("rue", 't');
            case 'f' -> literal("alse", 'f');
            case 'n' -> literal("ull", 'n');
            case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9' -> number(at - 1);
            default -> throw new NotCanonicalizable();
        }
    }

    private void literal(String rest, char tag) {
        for (int i = 0; i < rest.length(); i++) {
            if (at >= in.length || in[at++] != rest.charAt(i)) {
                throw new NotCanonicalizable();
            }
        }
        out.write(tag);
    }

    private void array(int depth) {
        int countAt = encoder.startArray(depth);
        int count = 0;
        int next = next();
        if (next != ']') {
            while (true) {
                value(next, depth + 1);
                count++;
                if (closes(']')) {
                    break;
                }
                next = next();
            }
        }
        encoder.endArray(countAt, count);
    }

    /** Each kept member's name and value encoded as they come, excluded ones read to their end and dropped. */
    private void object(int depth) {
        int countAt = encoder.startObject(depth);
        CanonicalMembers members = encoder.members(depth);
        int next = next();
        if (next != '}') {
            while (true) {
                if (next != '"') {
                    throw new NotCanonicalizable();
                }
                int start = out.size;
                string(); // the name's encoding is a string's: its UTF-8 length and bytes
                boolean kept = !encoder.excluded(start + 4, out.size - start - 4);
                if (next() != ':') {
                    throw new NotCanonicalizable();
                }
                value(next(), depth + 1);
                if (kept) {
                    members.add(null, start);
                } else {
                    out.size = start;
                }
                if (closes('}')) {
                    break;
                }
                next = next();
            }
        }
        encoder.endObject(members, countAt);
    }

    /** After a container's element: true at its closing byte, false after a comma; anything else is refused. */
    private boolean closes(int close) {
        int next = next();
        if (next == close) {
            return true;
        }
        if (next != ',') {
            throw new NotCanonicalizable();
        }
        return false;
    }

    /**
     * A string's contents after its opening quote, as its UTF-8 length and bytes: runs without
     * escapes are copied as they are (checked to be well-formed UTF-8), escapes decoded.
     */
    private void string() {
        byte[] in = this.in;
        int lengthAt = out.reserveLength();
        int i = at;
        int run = i;
        while (true) {
            while (i < in.length && PLAIN[in[i] & 0xff]) {
                i++;
            }
            if (i >= in.length) {
                throw new NotCanonicalizable();
            }
            int b = in[i];
            if (b == '"') {
                out.write(in, run, i - run);
                at = i + 1;
                break;
            } else if (b == '\\') {
                out.write(in, run, i - run);
                at = i + 1;
                escape();
                i = at;
                run = i;
            } else if (b < 0) {
                i = afterUtf8Sequence(i);
            } else {
                throw new NotCanonicalizable(); // a raw control character
            }
        }
        out.setLength(lengthAt, out.size - lengthAt - 4);
    }

    /** After a backslash: the escaped character as UTF-8; a surrogate only as a pair of escapes. */
    private void escape() {
        if (at >= in.length) {
            throw new NotCanonicalizable();
        }
        switch (in[at++]) {
            case '"' -> out.write('"');
            case '\\' -> out.write('\\');
            case '/' -> out.write('/');
            case 'b' -> out.write('\b');
            case 'f' -> out.write('\f');
            case 'n' -> out.write('\n');
            case 'r' -> out.write('\r');
            case 't' -> out.write('\t');
            case 'u' -> {
                int c = hex4();
                if (Character.isHighSurrogate((char) c)) {
                    if (at + 1 >= in.length || in[at] != '\\' || in[at + 1] != 'u') {
                        throw new NotCanonicalizable(); // a lone high surrogate
                    }
                    at += 2;
                    int low = hex4();
                    if (!Character.isLowSurrogate((char) low)) {
                        throw new NotCanonicalizable();
                    }
                    utf8(Character.toCodePoint((char) c, (char) low));
                } else if (Character.isLowSurrogate((char) c)) {
                    throw new NotCanonicalizable(); // a lone low surrogate
                } else {
                    utf8(c);
                }
            }
            default -> throw new NotCanonicalizable();
        }
    }

    private int hex4() {
        if (at + 4 > in.length) {
            throw new NotCanonicalizable();
        }
        int value = 0;
        for (int i = 0; i < 4; i++) {
            int digit = Character.digit(in[at++] & 0xff, 16);
            if (digit < 0 || in[at - 1] < 0) {
                throw new NotCanonicalizable();
            }
            value = value << 4 | digit;
        }
        return value;
    }

    private void utf8(int codePoint) {
        if (codePoint < 0x80) {
            out.write(codePoint);
        } else if (codePoint < 0x800) {
            out.write(0xc0 | codePoint >>> 6);
            out.write(0x80 | codePoint & 0x3f);
        } else if (codePoint < 0x10000) {
            out.write(0xe0 | codePoint >>> 12);
            out.write(0x80 | codePoint >>> 6 & 0x3f);
            out.write(0x80 | codePoint & 0x3f);
        } else {
            out.write(0xf0 | codePoint >>> 18);
            out.write(0x80 | codePoint >>> 12 & 0x3f);
            out.write(0x80 | codePoint >>> 6 & 0x3f);
            out.write(0x80 | codePoint & 0x3f);
        }
    }

    /**
     * Where a multi-byte UTF-8 sequence starting at {@code i} ends, if it is well-formed as Java's
     * strict decoder sees it (shortest form, no surrogate, at most U+10FFFF).
     */
    private int afterUtf8Sequence(int i) {
        int lead = in[i] & 0xff;
        int length;
        int min = 0x80;
        int max = 0xbf;
        if (lead >= 0xc2 && lead <= 0xdf) {
            length = 2;
        } else if (lead >= 0xe0 && lead <= 0xef) {
            length = 3;
            if (lead == 0xe0) {
                min = 0xa0;
            } else if (lead == 0xed) {
                max = 0x9f;
            }
        } else if (lead >= 0xf0 && lead <= 0xf4) {
            length = 4;
            if (lead == 0xf0) {
                min = 0x90;
            } else if (lead == 0xf4) {
                max = 0x8f;
            }
        } else {
            throw new NotCanonicalizable();
        }
        if (i + length > in.length) {
            throw new NotCanonicalizable();
        }
        int second = in[i + 1] & 0xff;
        if (second < min || second > max) {
            throw new NotCanonicalizable();
        }
        for (int k = 2; k < length; k++) {
            if ((in[i + k] & 0xc0) != 0x80) {
                throw new NotCanonicalizable();
            }
        }
        return i + length;
    }

    /** A number from its first character; what ends it is left for the caller to judge (a comma, a bracket, white space). */
    private void number(int start) {
        byte[] in = this.in;
        int i = start;
        boolean minus = in[i] == '-';
        if (minus) {
            i++;
            if (i >= in.length || !digit(in[i])) {
                throw new NotCanonicalizable();
            }
        }
        if (in[i] == '0') {
            i++;
        } else {
            while (i < in.length && digit(in[i])) {
                i++;
            }
        }
        int integerDigits = i - start - (minus ? 1 : 0);
        int point = -1;
        if (i < in.length && in[i] == '.') {
            point = i++;
            int from = i;
            while (i < in.length && digit(in[i])) {
                i++;
            }
            if (i == from) {
                throw new NotCanonicalizable();
            }
        }
        boolean exponent = false;
        if (i < in.length && (in[i] == 'e' || in[i] == 'E')) {
            exponent = true;
            i++;
            if (i < in.length && (in[i] == '+' || in[i] == '-')) {
                i++;
            }
            int from = i;
            while (i < in.length && digit(in[i])) {
                i++;
            }
            if (i == from) {
                throw new NotCanonicalizable();
            }
        }
        at = i;
        if (point < 0 && !exponent && integerDigits <= 18 && !(minus && in[start + 1] == '0')) {
            long value = 0; // as CanonicalNumbers.isPlainInteger and Long.parseLong: canonical already
            for (int k = minus ? start + 1 : start; k < i; k++) {
                value = value * 10 + (in[k] - '0');
            }
            encoder.integer(minus ? -value : value);
        } else if (point >= 0 && !exponent && in[i - 1] != '0' && (in[point - 1] != '0' || integerDigits > 1
                || zerosAfter(point) <= 5)) {
            encoder.decimal(in, start, i - start); // as CanonicalNumbers.isPlainDecimal
        } else {
            if (i - start > BIG_DECIMAL_LENGTH_LIMIT) {
                throw new NotCanonicalizable(); // JSON-P (Parsson) refuses to make a BigDecimal of it
            }
            encoder.number(new BigDecimal(new String(in, start, i - start, StandardCharsets.US_ASCII)));
        }
    }

    private int zerosAfter(int point) {
        int zeros = 0;
        while (in[point + 1 + zeros] == '0') {
            zeros++;
        }
        return zeros;
    }

    private static boolean digit(byte b) {
        return b >= '0' && b <= '9';
    }
}
