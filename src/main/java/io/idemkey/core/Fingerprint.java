package io.idemkey.core;

import jakarta.json.spi.JsonProvider;
import jakarta.json.stream.JsonGenerator;
import jakarta.json.stream.JsonGeneratorFactory;
import jakarta.json.stream.JsonParser;
import jakarta.json.stream.JsonParserFactory;

import java.io.ByteArrayOutputStream;
import java.io.ByteArrayInputStream;
import java.io.CharArrayReader;
import java.io.InputStreamReader;
import java.io.Reader;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The SHA-256 fingerprint of a request: its method, path, query parameters (sorted) and entity. It
 * tells a retry (same fingerprint) from a different request that reuses a key (422).
 *
 * <p>A JSON entity is parsed into its canonical form (members sorted, white space gone, numbers
 * without trailing zeros) with the policy's excluded members removed at every depth, so bodies that
 * differ only in member order, spacing or excluded fields fingerprint the same. What is hashed is a
 * tagged, length-prefixed encoding of that form ({@link #canonicalJson} shows it as JSON). An
 * entity that is not JSON, does not parse, repeats a member name or nests deeper than
 * {@link #MAX_JSON_DEPTH} is hashed as raw bytes: a body never makes fingerprinting fail.
 *
 * <p>By default the JSON is read straight from its UTF-8 bytes by a tokenizer written for this
 * canonical form ({@code Utf8Json}); {@link #Fingerprint(JsonProvider)} reads it through JSON-P
 * instead (the reference the tokenizer is held equal to: same value or the same refusal, for any
 * input). Thread-safe.
 */
public final class Fingerprint {

    /** Deeper JSON is hashed as raw bytes (and the application's reader decides what it means). */
    public static final int MAX_JSON_DEPTH = 128;

    private static final byte[] VERSION = "idemkey-fingerprint-2".getBytes(StandardCharsets.US_ASCII);
    /** By name only, and stable: the values of one parameter keep their order (they bind to a List). */
    private static final Comparator<Map.Entry<String, String>> QUERY_ORDER = Map.Entry.comparingByKey();
    /** Bodies up to this size are decoded into chars at once; larger ones are checked in slices and parsed from their bytes. */
    private static final int DECODED_AT_ONCE = 64 * 1024;

    private final MessageDigest sha256 = newSha256();
    /** JSON-P's parsers, or null: the byte tokenizer. */
    private final JsonParserFactory parsers;
    /** Only for {@link #canonicalJson}; looked up when first needed. */
    private volatile JsonGeneratorFactory generators;

    /** Reads JSON with the byte tokenizer ({@code Utf8Json}). */
    public Fingerprint() {
        this.parsers = null;
    }

    /** Reads JSON through JSON-P's streaming parser: the reference path (same fingerprints, about half the speed). */
    public Fingerprint(JsonProvider json) {
        this.parsers = json.createParserFactory(Map.of());
        this.generators = json.createGeneratorFactory(Map.of());
    }

    /**
     * @param method        the HTTP method
     * @param path          the request path relative to the application root, percent-encoded, one leading {@code /}
     * @param query         the query parameters, percent-encoded; the order of names does not matter, the
     *                      order of one name's values does
     * @param jsonEntity    whether the entity's media type is JSON ({@code application/json}, {@code +json})
     * @param entity        the entity bytes (empty when there is none)
     * @param excludeFields lower-cased JSON member names to leave out
     * @return the 32-byte SHA-256 digest
     */
    public byte[] of(String method, String path, List<Map.Entry<String, String>> query, boolean jsonEntity,
                     byte[] entity, Set<String> excludeFields) {
        MessageDigest digest = sha256();
        digest.update(VERSION);
        field(digest, method);
        field(digest, path);
        List<Map.Entry<String, String>> sorted = new ArrayList<>(query);
        sorted.sort(QUERY_ORDER);
        length(digest, sorted.size());
        for (Map.Entry<String, String> parameter : sorted) {
            field(digest, parameter.getKey());
            field(digest, parameter.getValue());
        }
        Bytes canonical = jsonEntity ? canonicalOrNull(entity, excludeFields) : null;
        if (canonical != null) {
            digest.update((byte) 'J');
            digest.update(canonical.array, 0, canonical.size);
        } else {
            digest.update((byte) 'R');
            digest.update(entity);
        }
        return digest.digest();
    }

    /** The canonical form of a JSON document as text; for tests and diagnostics. */
    public String canonicalJson(byte[] json, Set<String> excludeFields) {
        Bytes canonical = canonicalOrNull(json, excludeFields);
        if (canonical == null) {
            return null;
        }
        if (generators == null) {
            generators = JsonProvider.provider().createGeneratorFactory(Map.of());
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (JsonGenerator generator = generators.createGenerator(out, StandardCharsets.UTF_8)) {
            new CanonicalReader(canonical).writeValue(generator);
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    /**
     * The document's canonical form as the bytes that are hashed, written as it is parsed: a tagged,
     * length-prefixed encoding, objects with their members sorted by name, so two documents encode
     * the same exactly when their canonical trees are equal; null if it is not usable JSON. No tree
     * is built: an object's members are encoded as they come, and moved into name order once the
     * object ends (not at all when they came in order).
     */
    private Bytes canonicalOrNull(byte[] json, Set<String> excludeFields) {
        if (json.length == 0) {
            return null;
        }
        if (parsers == null) {
            try {
                return new Utf8Json(json, new Encoder(json.length, excludeFields, true)).document();
            } catch (RuntimeException e) {
                // NotCanonicalizable (malformed, too deep, repeated member), a number beyond BigDecimal: hash the raw bytes
                return null;
            }
        }
        Reader text = strictUtf8Text(json);
        if (text == null) {
            return null;
        }
        Encoder encoder = new Encoder(json.length, excludeFields, false);
        try (JsonParser parser = parsers.createParser(text)) {
            encoder.value(parser, parser.next(), 0);
            return parser.hasNext() ? null : encoder.out;
        } catch (RuntimeException e) {
            // NotCanonicalizable, any JsonException, a number beyond BigDecimal: hash the raw bytes
            return null;
        }
    }

    /**
     * One document's encoding: the output, and the member lists and scratch space its objects reuse.
     * Fed by JSON-P's events ({@link #value}) or by {@link Utf8Json}.
     */
    private static final class Encoder {
        private final Bytes out;
        private final String[] excludeFields;
        /** The excluded names' bytes if all of them are ASCII; null otherwise. */
        private final byte[][] asciiExcludeFields;
        /** The fewest and most chars an excluded name has: a name with fewer bytes, or more than four per char, is kept at once. */
        private final int shortestExcluded;
        private final int longestExcluded;
        /** One list per nesting depth: an object's members are done with before its sibling's start. */
        private final List<Members> membersByDepth = new ArrayList<>();
        private byte[] scratch = new byte[256];

        /** Whether member names are compared where they were encoded ({@code Utf8Json}) rather than as Strings. */
        private final boolean namesInPlace;

        Encoder(int jsonLength, Set<String> excludeFields, boolean namesInPlace) {
            this.namesInPlace = namesInPlace;
            this.out = new Bytes(64 + jsonLength);
            this.excludeFields = excludeFields.toArray(String[]::new);
            byte[][] ascii = new byte[this.excludeFields.length][];
            for (int i = 0; i < ascii.length; i++) {
                ascii[i] = this.excludeFields[i].getBytes(StandardCharsets.UTF_8);
                if (ascii[i].length != this.excludeFields[i].length()) {
                    ascii = null; // an excluded name that is not ASCII: every name is compared as a String
                    break;
                }
            }
            this.asciiExcludeFields = ascii;
            int shortest = Integer.MAX_VALUE;
            int longest = -1;
            for (String field : this.excludeFields) { // a loop, not two streams: this runs for every request
                shortest = Math.min(shortest, field.length());
                longest = Math.max(longest, field.length());
            }
            this.shortestExcluded = shortest;
            this.longestExcluded = longest;
        }

        void value(JsonParser parser, JsonParser.Event event, int depth) {
            switch (event) {
                case START_OBJECT -> object(parser, depth);
                case START_ARRAY -> {
                    checkDepth(depth);
                    out.write('[');
                    int countAt = out.reserveLength();
                    int count = 0;
                    for (JsonParser.Event next = parser.next(); next != JsonParser.Event.END_ARRAY; next = parser.next()) {
                        value(parser, next, depth + 1);
                        count++;
                    }
                    out.setLength(countAt, count);
                }
                case VALUE_STRING -> {
                    out.write('"');
                    text(out, checked(parser.getString()));
                }
                case VALUE_NUMBER -> number(parser, out);
                case VALUE_TRUE -> out.write('t');
                case VALUE_FALSE -> out.write('f');
                case VALUE_NULL -> out.write('n');
                default -> throw new NotCanonicalizable();
            }
        }

        /**
         * {@code '{'}, the member count, then each member's name and value in name order
         * ({@link String#compareTo}). Excluded members are read to their end (a truncated one must
         * fail, not hang) and dropped.
         */
        private void object(JsonParser parser, int depth) {
            checkDepth(depth);
            out.write('{');
            int countAt = out.reserveLength();
            Members members = members(depth);
            for (JsonParser.Event next = parser.next(); next != JsonParser.Event.END_OBJECT; next = parser.next()) {
                String name = checked(parser.getString());
                int start = out.size;
                boolean kept = !excluded(name, excludeFields);
                if (kept) {
                    text(out, name);
                }
                value(parser, parser.next(), depth + 1);
                if (kept) {
                    members.add(name, start);
                } else {
                    out.size = start;
                }
            }
            endObject(members, countAt);
        }

        /** The (cleared) member list of an object at this depth. */
        Members members(int depth) {
            while (membersByDepth.size() <= depth) {
                membersByDepth.add(new Members(namesInPlace ? out : null));
            }
            Members members = membersByDepth.get(depth);
            members.clear();
            return members;
        }

        /** The object's members into name order, and their count where it was reserved. */
        void endObject(Members members, int countAt) {
            int count = members.count;
            if (!members.inOrder) {
                putInNameOrder(members);
            }
            out.setLength(countAt, count);
        }

        /** Moves the members' bytes (from the first member's start to the end of the output) into name order. */
        private void putInNameOrder(Members members) {
            int[] order = members.sortedOrder();
            int from = members.starts[0];
            int length = out.size - from;
            if (scratch.length < length) {
                scratch = new byte[Math.max(length, scratch.length * 2)];
            }
            System.arraycopy(out.array, from, scratch, 0, length);
            int at = from;
            for (int i = 0; i < members.count; i++) {
                int member = order[i];
                int start = members.starts[member] - from;
                int end = (member + 1 < members.count ? members.starts[member + 1] : out.size) - from;
                System.arraycopy(scratch, start, out.array, at, end - start);
                at += end - start;
            }
        }
    }

    /**
     * The kept members of one object as they were encoded: names and where each starts in the output.
     * Names are Strings (the JSON-P path), or, for {@link Utf8Json}, read where they were encoded (a
     * member's start is its name's length and UTF-8 bytes) and compared there in String order.
     */
    private static final class Members {

        /** Up to this many members, an insertion sort (cheapest for few); beyond, a merge sort. */
        private static final int INSERTION_SORT_MAX = 16;
        /** Where the names are read in byte mode; null when they are given as Strings. */
        private final Bytes encoded;
        private String[] names = new String[8];
        private int[] starts = new int[8];
        /** Byte mode: the length of each name (its bytes follow its start's 4-byte length). */
        private int[] nameLengths = new int[8];
        private int[] order = new int[8];
        private int count;
        private boolean inOrder;

        Members(Bytes encoded) {
            this.encoded = encoded;
        }

        void clear() {
            count = 0;
            inOrder = true;
        }

        /** @param name the member's name, or null in byte mode */
        void add(String name, int start) {
            if (count == starts.length) {
                names = Arrays.copyOf(names, count * 2);
                starts = Arrays.copyOf(starts, count * 2);
                nameLengths = Arrays.copyOf(nameLengths, count * 2);
                order = new int[count * 2];
            }
            names[count] = name;
            starts[count] = start;
            if (encoded != null) {
                nameLengths[count] = Bytes.readInt(encoded.array, start);
            }
            if (count > 0) {
                int compared = compare(count - 1, count);
                if (compared == 0) {
                    throw new NotCanonicalizable(); // a repeated member: keep the raw bytes
                }
                inOrder &= compared < 0;
            }
            count++;
        }

        /** Two members' names in {@link String#compareTo} order. */
        private int compare(int a, int b) {
            if (encoded == null) {
                return names[a].compareTo(names[b]);
            }
            byte[] array = encoded.array;
            int x = starts[a] + 4;
            int y = starts[b] + 4;
            int common = Math.min(nameLengths[a], nameLengths[b]);
            for (int i = 0; i < common; i++) { // names are short, and mostly ASCII
                int p = array[x + i];
                int q = array[y + i];
                if (p != q) {
                    return p >= 0 && q >= 0 ? p - q : compareAsStrings(array, x, nameLengths[a], array, y, nameLengths[b]);
                }
            }
            return nameLengths[a] - nameLengths[b];
        }

        /**
         * The members' indexes in name order, in the first {@code count} places; a repeated name
         * fails. An insertion sort for the few members most objects have, a merge sort beyond: a body
         * of one object with its members in reverse order must not cost the square of their number
         * (80,000 members: 36 s of CPU with the insertion sort alone).
         */
        int[] sortedOrder() {
            int[] sorted = count <= order.length ? order : new int[count];
            if (count > INSERTION_SORT_MAX) {
                for (int i = 0; i < count; i++) {
                    sorted[i] = i;
                }
                mergeSort(sorted, count);
                for (int i = 1; i < count; i++) {
                    if (compare(sorted[i - 1], sorted[i]) == 0) {
                        throw new NotCanonicalizable(); // a repeated member, apart
                    }
                }
                return sorted;
            }
            for (int i = 0; i < count; i++) {
                int member = i;
                int j = i - 1;
                while (j >= 0 && compare(sorted[j], member) > 0) {
                    sorted[j + 1] = sorted[j];
                    j--;
                }
                if (j >= 0 && compare(sorted[j], member) == 0) {
                    throw new NotCanonicalizable(); // a repeated member, apart
                }
                sorted[j + 1] = member;
            }
            return sorted;
        }

        /** Sorts the first {@code n} indexes of {@code indexes} by name: a bottom-up merge sort, n log n comparisons. */
        private void mergeSort(int[] indexes, int n) {
            int[] from = indexes;
            int[] to = new int[n];
            for (int width = 1; width < n; width *= 2) {
                for (int low = 0; low < n; low += 2 * width) {
                    int middle = Math.min(low + width, n);
                    int high = Math.min(low + 2 * width, n);
                    int i = low;
                    int j = middle;
                    int k = low;
                    while (i < middle && j < high) {
                        to[k++] = compare(from[i], from[j]) <= 0 ? from[i++] : from[j++];
                    }
                    while (i < middle) {
                        to[k++] = from[i++];
                    }
                    while (j < high) {
                        to[k++] = from[j++];
                    }
                }
                int[] swap = from;
                from = to;
                to = swap;
            }
            if (from != indexes) {
                System.arraycopy(from, 0, indexes, 0, n);
            }
        }
    }

    /**
     * A number as its canonical value: an integer of up to 18 digits as a long ({@code 'i'}, 8 bytes),
     * anything else as the text of the BigDecimal without trailing zeros ({@code 'd'}). Most numbers
     * are written canonically already (a plain integer, or a decimal such as {@code 499.5}), and are
     * taken as they are, without a BigDecimal.
     */
    private static void number(JsonParser parser, Bytes out) {
        String lexeme = parser.getString();
        if (isPlainInteger(lexeme)) {
            out.write('i');
            out.writeLong(Long.parseLong(lexeme));
            return;
        }
        if (isPlainDecimal(lexeme)) {
            out.write('d');
            text(out, lexeme);
            return;
        }
        bigNumber(parser.getBigDecimal(), out);
    }

    /** A number that is not written canonically already (an exponent, trailing zeros, -0, 19 digits or more). */
    private static void bigNumber(BigDecimal value, Bytes out) {
        BigDecimal number = value.stripTrailingZeros();
        if (number.scale() <= 0 && number.precision() - number.scale() <= 18) {
            out.write('i');
            out.writeLong(number.longValueExact());
        } else {
            out.write('d');
            text(out, number.toString());
        }
    }

    private static void text(Bytes out, String value) {
        if (out.writeAscii(value)) {
            return;
        }
        byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
        out.writeInt(utf8.length);
        out.write(utf8);
    }

    /** A growable byte array without ByteArrayOutputStream's per-byte locking. */
    private static final class Bytes {
        /** Lengths and longs are big-endian. */
        private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
        private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

        private byte[] array;
        private int size;

        Bytes(int capacity) {
            array = new byte[capacity];
        }

        /** Room for {@code more} bytes; small enough for the JIT to inline at every call (growing is apart). */
        private void ensure(int more) {
            if (size + more > array.length) {
                grow(more);
            }
        }

        private void grow(int more) {
            array = Arrays.copyOf(array, Math.max(array.length * 2, size + more));
        }

        void write(int b) {
            ensure(1);
            array[size++] = (byte) b;
        }

        void writeInt(int value) {
            ensure(4);
            setLength(size, value);
            size += 4;
        }

        void writeLong(long value) {
            ensure(8);
            LONG.set(array, size, value);
            size += 8;
        }

        static int readInt(byte[] array, int at) {
            return (int) INT.get(array, at);
        }

        /** Room for a length written later with {@link #setLength}; returns where it goes. */
        int reserveLength() {
            ensure(4);
            size += 4;
            return size - 4;
        }

        void setLength(int at, int length) {
            INT.set(array, at, length);
        }

        /** Length and bytes of an ASCII string without encoding it first; false (nothing written) if it is not ASCII. */
        boolean writeAscii(String value) {
            int length = value.length();
            ensure(length + 4);
            int at = size + 4;
            for (int i = 0; i < length; i++) {
                char c = value.charAt(i);
                if (c >= 0x80) {
                    return false;
                }
                array[at++] = (byte) c;
            }
            setLength(size, length);
            size = at;
            return true;
        }

        void write(byte[] bytes) {
            ensure(bytes.length);
            System.arraycopy(bytes, 0, array, size, bytes.length);
            size += bytes.length;
        }

        void write(byte[] bytes, int from, int length) {
            ensure(length);
            System.arraycopy(bytes, from, array, size, length);
            size += length;
        }
    }

    /**
     * The canonical encoding read straight from the UTF-8 bytes, without decoding the document into
     * chars or making a String of any value but member names and unusual numbers. It accepts exactly
     * what the JSON-P path accepts (Parsson's grammar, after a strict UTF-8 check of the whole body):
     * one value with white space (space, tab, CR, LF) around it; strings without raw control
     * characters, with the escapes {@code \" \\ \/ \b \f \n \r \t} and {@code \}{@code u} with four hex digits; numbers
     * {@code -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?}; well-formed UTF-8 inside strings (the
     * only place a byte above 0x7F may stand). Anything else throws {@link NotCanonicalizable}, as do
     * the JSON-P path's own refusals: a lone surrogate, a repeated member, nesting deeper than
     * {@link #MAX_JSON_DEPTH}, a number BigDecimal cannot hold. {@code ParsersFuzzTest#bytesEqualJsonP}
     * holds the two paths equal on arbitrary input.
     */
    private static final class Utf8Json {
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
        private final Encoder encoder;
        private final Bytes out;
        private int at;

        Utf8Json(byte[] in, Encoder encoder) {
            this.in = in;
            this.encoder = encoder;
            this.out = encoder.out;
        }

        /** The one value, and nothing but white space after it. */
        Bytes document() {
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
            checkDepth(depth);
            out.write('[');
            int countAt = out.reserveLength();
            int count = 0;
            int next = next();
            if (next != ']') {
                while (true) {
                    value(next, depth + 1);
                    count++;
                    next = next();
                    if (next == ']') {
                        break;
                    }
                    if (next != ',') {
                        throw new NotCanonicalizable();
                    }
                    next = next();
                }
            }
            out.setLength(countAt, count);
        }

        /** As {@link Encoder#object}: each kept member's name and value encoded as they come, excluded ones read to their end and dropped. */
        private void object(int depth) {
            checkDepth(depth);
            out.write('{');
            int countAt = out.reserveLength();
            Members members = encoder.members(depth);
            int next = next();
            if (next != '}') {
                while (true) {
                    if (next != '"') {
                        throw new NotCanonicalizable();
                    }
                    int start = out.size;
                    string(); // the name's encoding is a string's: its UTF-8 length and bytes
                    boolean kept = !excluded(start + 4, out.size - start - 4);
                    if (next() != ':') {
                        throw new NotCanonicalizable();
                    }
                    value(next(), depth + 1);
                    if (kept) {
                        members.add(null, start);
                    } else {
                        out.size = start;
                    }
                    next = next();
                    if (next == '}') {
                        break;
                    }
                    if (next != ',') {
                        throw new NotCanonicalizable();
                    }
                    next = next();
                }
            }
            encoder.endObject(members, countAt);
        }

        /**
         * Whether the name encoded at {@code from} is excluded: as {@link Fingerprint#excluded}, which
         * it asks about names that are not ASCII (or when an excluded name is not: {@code "k"} equals
         * the Kelvin sign ignoring case).
         */
        private boolean excluded(int from, int length) {
            if (length < encoder.shortestExcluded || length > 4 * encoder.longestExcluded) {
                return false; // a name of n chars has n to 3n bytes: it cannot equal an excluded name, ignoring case or not
            }
            byte[] name = out.array;
            boolean ascii = encoder.asciiExcludeFields != null;
            for (int i = from; ascii && i < from + length; i++) {
                ascii = name[i] >= 0;
            }
            if (!ascii) {
                return Fingerprint.excluded(new String(name, from, length, StandardCharsets.UTF_8), encoder.excludeFields);
            }
            for (byte[] field : encoder.asciiExcludeFields) {
                if (field.length == length && equalsIgnoringAsciiCase(field, name, from)) {
                    return true;
                }
            }
            return false;
        }

        private static boolean equalsIgnoringAsciiCase(byte[] field, byte[] name, int from) {
            for (int i = 0; i < field.length; i++) {
                int c = field[i];
                int d = name[from + i];
                if (c != d && (c | 0x20) != (d | 0x20) || c != d && ((c | 0x20) < 'a' || (c | 0x20) > 'z')) {
                    return false;
                }
            }
            return true;
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
                long value = 0; // as isPlainInteger and Long.parseLong: written canonically already
                for (int k = minus ? start + 1 : start; k < i; k++) {
                    value = value * 10 + (in[k] - '0');
                }
                out.write('i');
                out.writeLong(minus ? -value : value);
            } else if (point >= 0 && !exponent && in[i - 1] != '0' && (in[point - 1] != '0' || integerDigits > 1
                    || zerosAfter(point) <= 5)) {
                out.write('d'); // as isPlainDecimal
                out.writeInt(i - start);
                out.write(in, start, i - start);
            } else {
                if (i - start > BIG_DECIMAL_LENGTH_LIMIT) {
                    throw new NotCanonicalizable(); // JSON-P (Parsson) refuses to make a BigDecimal of it
                }
                bigNumber(new BigDecimal(new String(in, start, i - start, StandardCharsets.US_ASCII)), out);
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

    /** Reads the canonical encoding back, to show it as JSON ({@link #canonicalJson}). */
    private static final class CanonicalReader {
        private final Bytes encoded;
        private int at;

        CanonicalReader(Bytes encoded) {
            this.encoded = encoded;
        }

        void writeValue(JsonGenerator generator) {
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

    /**
     * Two well-formed UTF-8 texts in the order of their Strings ({@link String#compareTo}: by UTF-16
     * unit). That is code point order, the bytes' order, except that a character from U+E000 to
     * U+FFFF comes after every supplementary one (whose first unit is a surrogate, D800-DBFF).
     */
    static int compareAsStrings(byte[] a, int aFrom, int aLength, byte[] b, int bFrom, int bLength) {
        int common = Math.min(aLength, bLength);
        int i = Arrays.mismatch(a, aFrom, aFrom + common, b, bFrom, bFrom + common);
        if (i < 0) {
            return aLength - bLength;
        }
        int x = a[aFrom + i] & 0xff;
        int y = b[bFrom + i] & 0xff;
        if (x < 0x80 || y < 0x80) {
            return x - y; // one of them starts a character here, so both do: an ASCII one is the smaller
        }
        while (i > 0 && (a[aFrom + i] & 0xc0) == 0x80) { // back to where the differing characters start
            i--;
        }
        int p = codePointAt(a, aFrom + i);
        int q = codePointAt(b, bFrom + i);
        if ((p >= 0x10000) != (q >= 0x10000)) {
            int bmp = p >= 0x10000 ? q : p;
            int order = bmp >= 0xe000 ? 1 : -1; // the BMP one, against the supplementary one
            return p >= 0x10000 ? -order : order;
        }
        return Integer.compare(p, q);
    }

    private static int codePointAt(byte[] utf8, int at) {
        int lead = utf8[at] & 0xff;
        if (lead < 0x80) {
            return lead;
        }
        if (lead < 0xe0) {
            return (lead & 0x1f) << 6 | utf8[at + 1] & 0x3f;
        }
        if (lead < 0xf0) {
            return (lead & 0x0f) << 12 | (utf8[at + 1] & 0x3f) << 6 | utf8[at + 2] & 0x3f;
        }
        return (lead & 0x07) << 18 | (utf8[at + 1] & 0x3f) << 12 | (utf8[at + 2] & 0x3f) << 6 | utf8[at + 3] & 0x3f;
    }

    /** Case-insensitive, without lower-casing every member name of every body. */
    private static boolean excluded(String name, String[] excludeFields) {
        for (String field : excludeFields) {
            if (field.length() == name.length() && field.equalsIgnoreCase(name)) {
                return true;
            }
        }
        return false;
    }

    /** Digits with an optional minus, no leading zero: already canonical (most numbers are). */
    private static boolean isPlainInteger(String number) {
        int start = number.startsWith("-") ? 1 : 0;
        if (number.length() == start || number.length() - start > 18 || (number.charAt(start) == '0' && number.length() > start + 1)) {
            return false;
        }
        for (int i = start; i < number.length(); i++) {
            char c = number.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return !number.equals("-0");
    }

    /**
     * A decimal written the way {@code BigDecimal.stripTrailingZeros().toString()} writes it, so that
     * it is canonical as it is: digits, a point, digits ending in a non-zero one, no exponent, and,
     * below 1, at most five zeros after the point (from six on, BigDecimal writes {@code 1E-7}).
     */
    static boolean isPlainDecimal(String number) {
        int length = number.length();
        int start = number.startsWith("-") ? 1 : 0;
        int point = number.indexOf('.');
        if (point <= start || point == length - 1 || number.charAt(length - 1) == '0'
                || (number.charAt(start) == '0' && point != start + 1)) {
            return false;
        }
        for (int i = start; i < length; i++) {
            char c = number.charAt(i);
            if ((c < '0' || c > '9') && i != point) {
                return false;
            }
        }
        if (number.charAt(start) == '0') { // 0.000123: BigDecimal's plain form up to five zeros after the point
            int zeros = 0;
            while (number.charAt(point + 1 + zeros) == '0') {
                zeros++;
            }
            return zeros <= 5;
        }
        return true;
    }

    /**
     * A string with an unpaired surrogate (an escape such as {@code \ud800}) has no UTF-8 form: the
     * generator would write {@code ?}, and two different bodies would read the same.
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

    private static void checkDepth(int depth) {
        if (depth >= MAX_JSON_DEPTH) {
            throw new NotCanonicalizable();
        }
    }

    private static void field(MessageDigest digest, String value) {
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        length(digest, bytes.length);
        digest.update(bytes);
    }

    private static void length(MessageDigest digest, int length) {
        digest.update((byte) (length >>> 24));
        digest.update((byte) (length >>> 16));
        digest.update((byte) (length >>> 8));
        digest.update((byte) length);
    }

    /** A fresh digest: cloning a prototype skips the provider lookup of getInstance on every request. */
    private MessageDigest sha256() {
        try {
            return (MessageDigest) sha256.clone();
        } catch (CloneNotSupportedException e) {
            return newSha256();
        }
    }

    private static MessageDigest newSha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }

    /** The entity is valid JSON but has no single canonical form here (repeated member, too deep). */
    private static final class NotCanonicalizable extends RuntimeException {
        private static final long serialVersionUID = 1L;

        NotCanonicalizable() {
            super(null, null, false, false);
        }
    }
}
