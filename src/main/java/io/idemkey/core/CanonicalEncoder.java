package io.idemkey.core;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Writes one document's canonical form as the bytes that are hashed, fed value by value by a reader
 * ({@link JsonBytesReader} or {@link JsonPReader}): a tagged, length-prefixed encoding, objects
 * with their members sorted by name, so two documents encode the same exactly when their canonical
 * trees are equal. No tree is built: an object's members are encoded as they come, and moved into
 * name order once the object ends (not at all when they came in order).
 *
 * <p>The tags: {@code '{'} with the member count, then each member's name and value; {@code '['}
 * with the element count, then the elements; {@code '"'} and a text; {@code 'i'} and a long;
 * {@code 'd'} and a decimal's text; {@code 't'}, {@code 'f'}, {@code 'n'}. Texts are their UTF-8
 * length and bytes; lengths, counts and longs are big-endian.
 */
final class CanonicalEncoder {
    final GrowableBytes out;
    private final String[] excludeFields;
    /** The excluded names' bytes if all of them are ASCII; null otherwise. */
    private final byte[][] asciiExcludeFields;
    /** The fewest and most chars an excluded name has: a name with fewer bytes, or more than four per char, is kept at once. */
    private final int shortestExcluded;
    private final int longestExcluded;
    /** One list per nesting depth: an object's members are done with before its sibling's start. */
    private final List<CanonicalMembers> membersByDepth = new ArrayList<>();
    private byte[] scratch = new byte[256];
    /** Whether member names are compared where they were encoded (the byte reader) rather than as Strings. */
    private final boolean namesInPlace;

    /**
     * @param jsonLength    the document's size, which the output starts from
     * @param excludeFields lower-cased member names to leave out, at every depth
     * @param namesInPlace  whether members are added without their names as Strings
     */
    CanonicalEncoder(int jsonLength, Set<String> excludeFields, boolean namesInPlace) {
        this.namesInPlace = namesInPlace;
        this.out = new GrowableBytes(64 + jsonLength);
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

    /** An array at this depth begins; returns where its count goes ({@link #endArray}). */
    int startArray(int depth) {
        checkDepth(depth);
        out.write('[');
        return out.reserveLength();
    }

    /** An object at this depth begins; returns where its count goes ({@link #endObject}). */
    int startObject(int depth) {
        checkDepth(depth);
        out.write('{');
        return out.reserveLength();
    }

    /** An array's element count, where {@link #startArray} reserved it. */
    void endArray(int countAt, int count) {
        out.setLength(countAt, count);
    }

    /** The (cleared) member list of an object at this depth. */
    CanonicalMembers members(int depth) {
        while (membersByDepth.size() <= depth) {
            membersByDepth.add(new CanonicalMembers(namesInPlace ? out : null));
        }
        CanonicalMembers members = membersByDepth.get(depth);
        members.clear();
        return members;
    }

    /** The object's members into name order, and their count where it was reserved. */
    void endObject(CanonicalMembers members, int countAt) {
        if (!members.inOrder()) {
            putInNameOrder(members);
        }
        out.setLength(countAt, members.count());
    }

    /** Moves the members' bytes (from the first member's start to the end of the output) into name order. */
    private void putInNameOrder(CanonicalMembers members) {
        int[] order = members.sortedOrder();
        int count = members.count();
        int from = members.start(0);
        int length = out.size - from;
        if (scratch.length < length) {
            scratch = new byte[Math.max(length, scratch.length * 2)];
        }
        System.arraycopy(out.array, from, scratch, 0, length);
        int at = from;
        for (int i = 0; i < count; i++) {
            int member = order[i];
            int start = members.start(member) - from;
            int end = (member + 1 < count ? members.start(member + 1) : out.size) - from;
            System.arraycopy(scratch, start, out.array, at, end - start);
            at += end - start;
        }
    }

    /** A text's length and UTF-8 bytes: a member name, or a string value after its tag. */
    void text(String value) {
        if (out.writeAscii(value)) {
            return;
        }
        byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
        out.writeInt(utf8.length);
        out.write(utf8);
    }

    /** An integer that fits in 18 digits, canonical as it is. */
    void integer(long value) {
        out.write('i');
        out.writeLong(value);
    }

    /** A decimal lexeme already in its canonical text ({@link CanonicalNumbers#isPlainDecimal}). */
    void decimal(String lexeme) {
        out.write('d');
        text(lexeme);
    }

    /** As {@link #decimal(String)}, from the ASCII bytes of the lexeme. */
    void decimal(byte[] ascii, int from, int length) {
        out.write('d');
        out.writeInt(length);
        out.write(ascii, from, length);
    }

    /**
     * A number that is not written canonically already (an exponent, trailing zeros, -0, 19 digits
     * or more): an integer of up to 18 digits as a long, anything else as the text of the BigDecimal
     * without trailing zeros.
     */
    void number(BigDecimal value) {
        BigDecimal number = value.stripTrailingZeros();
        if (number.scale() <= 0 && number.precision() - number.scale() <= 18) {
            integer(number.longValueExact());
        } else {
            decimal(number.toString());
        }
    }

    /** Case-insensitive, without lower-casing every member name of every body. */
    boolean excluded(String name) {
        for (String field : excludeFields) {
            if (field.length() == name.length() && field.equalsIgnoreCase(name)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether the name whose UTF-8 bytes were just written at {@code from} is excluded: as
     * {@link #excluded(String)}, which it asks about names that are not ASCII (or when an excluded
     * name is not: {@code "k"} equals the Kelvin sign ignoring case).
     */
    boolean excluded(int from, int length) {
        if (length < shortestExcluded || length > 4 * longestExcluded) {
            return false; // a name of n chars has n to 3n bytes: it cannot equal an excluded name, ignoring case or not
        }
        byte[] name = out.array;
        boolean ascii = asciiExcludeFields != null;
        for (int i = from; ascii && i < from + length; i++) {
            ascii = name[i] >= 0;
        }
        if (!ascii) {
            return excluded(new String(name, from, length, StandardCharsets.UTF_8));
        }
        for (byte[] field : asciiExcludeFields) {
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

    private static void checkDepth(int depth) {
        if (depth >= Fingerprint.MAX_JSON_DEPTH) {
            throw new NotCanonicalizable();
        }
    }
}
