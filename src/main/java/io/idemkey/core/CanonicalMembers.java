package io.idemkey.core;

import java.util.Arrays;

/**
 * The kept members of one object as they were encoded: names and where each starts in the output,
 * and their order by name ({@link String#compareTo}). Names are Strings (the JSON-P path), or, for
 * the byte reader, read where they were encoded (a member's start is its name's length and UTF-8
 * bytes) and compared there in String order ({@link Utf16Order}). A repeated name throws
 * {@link NotCanonicalizable}.
 */
final class CanonicalMembers {

    /** Up to this many members, an insertion sort (cheapest for few); beyond, a merge sort. */
    private static final int INSERTION_SORT_MAX = 16;
    /** Where the names are read in byte mode; null when they are given as Strings. */
    private final GrowableBytes encoded;
    private String[] names = new String[8];
    private int[] starts = new int[8];
    /** Byte mode: the length of each name (its bytes follow its start's 4-byte length). */
    private int[] nameLengths = new int[8];
    private int[] order = new int[8];
    private int count;
    private boolean inOrder;

    CanonicalMembers(GrowableBytes encoded) {
        this.encoded = encoded;
    }

    void clear() {
        count = 0;
        inOrder = true;
    }

    int count() {
        return count;
    }

    /** Whether the members came in name order (then they need no moving). */
    boolean inOrder() {
        return inOrder;
    }

    /** Where a member (by its index in the order they came) starts in the output. */
    int start(int member) {
        return starts[member];
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
            nameLengths[count] = GrowableBytes.readInt(encoded.array, start);
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
                return p >= 0 && q >= 0 ? p - q : Utf16Order.compare(array, x, nameLengths[a], array, y, nameLengths[b]);
            }
        }
        return nameLengths[a] - nameLengths[b];
    }

    /**
     * The members' indexes in name order, in the first {@code count} places; a repeated name
     * fails. An insertion sort for the few members most objects have, a merge sort beyond: a body
     * of one object with its members in reverse order must not cost the square of their number.
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
