package io.idemkey.core;

import java.util.Arrays;

/**
 * The order of {@link String#compareTo} (by UTF-16 unit) on texts still in their UTF-8 bytes, so
 * member names can be sorted where they were encoded, without a String per name.
 */
final class Utf16Order {

    private Utf16Order() {
    }

    /**
     * Two well-formed UTF-8 texts in the order of their Strings. That is code point order, the
     * bytes' order, except that a character from U+E000 to U+FFFF comes after every supplementary
     * one (whose first unit is a surrogate, D800-DBFF).
     */
    static int compare(byte[] a, int aFrom, int aLength, byte[] b, int bFrom, int bLength) {
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
}
