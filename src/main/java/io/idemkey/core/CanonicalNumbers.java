package io.idemkey.core;

/**
 * Which number lexemes are canonical as they are written, so that most numbers are encoded without
 * a BigDecimal: the canonical value of a number is an integer of up to 18 digits (a long), or else
 * the text of its BigDecimal without trailing zeros ({@link CanonicalEncoder#number}).
 */
final class CanonicalNumbers {

    private CanonicalNumbers() {
    }

    /** Digits with an optional minus, no leading zero, at most 18 digits, not {@code -0}: already canonical. */
    static boolean isPlainInteger(String number) {
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
}
