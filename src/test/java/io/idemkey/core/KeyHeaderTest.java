package io.idemkey.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

class KeyHeaderTest {

    private static final int MAX = 255;

    private static KeyHeader.Result parse(String... values) {
        return KeyHeader.parse(Arrays.asList(values), MAX);
    }

    private static String valid(String... values) {
        return assertInstanceOf(KeyHeader.Valid.class, parse(values), () -> "should accept " + Arrays.toString(values)).key();
    }

    private static void assertInvalid(String... values) {
        assertInstanceOf(KeyHeader.Invalid.class, parse(values), () -> "should refuse " + Arrays.toString(values));
    }

    @Test
    void quotedAndBareFormsOfTheSameKeyAreEqual() {
        String uuid = "8e03978e-40d5-43e8-bc93-6894a57f9324";
        assertEquals(uuid, valid("\"" + uuid + "\""));
        assertEquals(uuid, valid(uuid));
        assertEquals(parse("\"" + uuid + "\""), parse(uuid));
    }

    @Test
    void bareKeysStartingWithADigitAndUsingAnyVisibleAsciiButQuoteAndCommaAreAccepted() {
        String key = "1a2b3c_x.y~z:{}!#$%&'()*+-/;<=>?@[]^`|\\";
        assertEquals(key, valid(key));
    }

    @Test
    void quotedFormUnescapesBackslashQuoteAndBackslashBackslash() {
        assertEquals("a\"b\\c", valid("\"a\\\"b\\\\c\""));
    }

    @Test
    void quotedFormKeepsACommaInsideTheString() {
        assertEquals("a,b", valid("\"a,b\""));
    }

    @ParameterizedTest
    @ValueSource(strings = {"\"a\\nb\"", "\"a\\u0041\"", "\"a\\'\"", "\"a\\/\""})
    void quotedFormRefusesEscapesOtherThanQuoteAndBackslash(String value) {
        assertInvalid(value);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", " ", "\t", "  \t "})
    void emptyValueIsInvalid(String value) {
        assertInvalid(value);
    }

    @Test
    void emptyQuotedStringIsInvalid() {
        assertInvalid("\"\"");
        assertInvalid("  \"\"  ");
    }

    @Test
    void keyOf255CharactersIsAcceptedInBothForms() {
        String key = "k".repeat(255);
        assertEquals(key, valid(key));
        assertEquals(key, valid("\"" + key + "\""));
    }

    @Test
    void keyOf256CharactersIsRefusedInBothForms() {
        String key = "k".repeat(256);
        assertInvalid(key);
        assertInvalid("\"" + key + "\"");
    }

    @Test
    void lengthLimitAppliesAfterUnquotingAndUnescaping() {
        // 255 characters of value, written with 2 quotes and 10 escapes: 267 characters on the wire
        String value = "\\\"".repeat(5) + "\\\\".repeat(5) + "k".repeat(245);
        assertEquals(255, valid("\"" + value + "\"").length());
        assertInvalid("\"" + value + "k\"");
    }

    @Test
    void configuredMaximumLengthIsHonoured() {
        assertInstanceOf(KeyHeader.Valid.class, KeyHeader.parse(List.of("abcd"), 4));
        assertInstanceOf(KeyHeader.Invalid.class, KeyHeader.parse(List.of("abcde"), 4));
    }

    @ParameterizedTest
    @ValueSource(strings = {"ab cd", "ab\tcd", "\"ab cd\"", "\"ab\tcd\""})
    void spaceOrTabInsideTheValueIsInvalid(String value) {
        assertInvalid(value);
    }

    @Test
    void controlCharactersInsideTheValueAreInvalid() {
        for (char c = 0; c < 0x20; c++) {
            if (c == ' ' || c == '\t') {
                continue;
            }
            assertInvalid("ab" + c + "cd");
            assertInvalid("\"ab" + c + "cd\"");
        }
        assertInvalid("ab\u007fcd");
        assertInvalid("\"ab\u007fcd\"");
    }

    @ParameterizedTest
    @ValueSource(strings = {"caf\u00e9", "\"caf\u00e9\"", "key\u2028", "\"\u00a0\"", "emoji\ud83d\ude00", "\"k\u0100\""})
    void nonAsciiInsideTheValueIsInvalid(String value) {
        assertInvalid(value);
    }

    @ParameterizedTest
    @ValueSource(strings = {"\"abc", "abc\"", "\"abc\"def", "\"ab\"cd\"", "\"", "a\"b", "\"abc\\\"", "\"abc\" \"def\""})
    void brokenQuotingIsInvalid(String value) {
        assertInvalid(value);
    }

    @ParameterizedTest
    @ValueSource(strings = {"\"a\", \"b\"", "\"a\",\"b\"", "a,b", "a, b", "a,", ",a", "\"a\","})
    void commaJoinedListIsInvalid(String value) {
        assertInvalid(value);
    }

    @Test
    void headerSentTwiceIsInvalidEvenWithEqualValues() {
        assertInvalid("a", "b");
        assertInvalid("a", "a");
        assertInvalid("\"a\"", "\"a\"");
    }

    @Test
    void missingHeaderIsMissing() {
        assertInstanceOf(KeyHeader.Missing.class, KeyHeader.parse(null, MAX));
        assertInstanceOf(KeyHeader.Missing.class, KeyHeader.parse(List.of(), MAX));
        assertInstanceOf(KeyHeader.Missing.class, KeyHeader.parse(new ArrayList<>(), MAX));
    }

    @Test
    void surroundingSpacesAndTabsAreTrimmed() {
        assertEquals("abc", valid("  abc\t "));
        assertEquals("abc", valid("\t \"abc\"  "));
    }

    @Test
    void invalidResultExplainsTheProblem() {
        KeyHeader.Invalid list = assertInstanceOf(KeyHeader.Invalid.class, parse("a,b"));
        assertTrue(list.reason().contains("list"), list.reason());
        KeyHeader.Invalid twice = assertInstanceOf(KeyHeader.Invalid.class, parse("a", "b"));
        assertTrue(twice.reason().contains("once"), twice.reason());
        KeyHeader.Invalid tooLong = assertInstanceOf(KeyHeader.Invalid.class, parse("k".repeat(256)));
        assertTrue(tooLong.reason().contains("255"), tooLong.reason());
    }
}
