package io.idemkey.core;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The member order is part of every stored fingerprint: it must be {@link String#compareTo} order
 * whichever sort runs (an insertion sort up to 16 members, a merge sort beyond) and whether names
 * are Strings or read where they were encoded.
 */
class CanonicalMembersTest {

    /** Names that String order and code point order sort differently (U+FFFF after a supplementary character). */
    private static final String[] ALPHABET = {"a", "B", "m10", "m2", "\u00e9", "\ud83d\ude00", "\uffff", "", "\u212a"};

    @ParameterizedTest(name = "{0} members")
    @ValueSource(ints = {2, 9, 16, 17, 18, 33, 100})
    void membersAreSortedInStringOrderBelowAndBeyondTheInsertionSort(int count) {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            names.add(ALPHABET[i % ALPHABET.length] + (i / ALPHABET.length));
        }
        List<String> reversed = new ArrayList<>(names);
        reversed.sort((x, y) -> y.compareTo(x));
        List<String> expected = new ArrayList<>(names);
        expected.sort(String::compareTo);

        assertEquals(expected, sorted(reversed, false), "names as Strings");
        assertEquals(expected, sorted(reversed, true), "names read where they were encoded");
    }

    private static List<String> sorted(List<String> names, boolean inPlace) {
        GrowableBytes encoded = new GrowableBytes(16);
        CanonicalMembers members = new CanonicalMembers(inPlace ? encoded : null);
        members.clear();
        for (String name : names) {
            int start = encoded.size;
            byte[] utf8 = name.getBytes(StandardCharsets.UTF_8);
            encoded.writeInt(utf8.length);
            encoded.write(utf8);
            members.add(inPlace ? null : name, start);
        }
        int[] order = Arrays.copyOf(members.sortedOrder(), names.size());
        List<String> result = new ArrayList<>();
        for (int member : order) {
            result.add(names.get(member));
        }
        return result;
    }
}
