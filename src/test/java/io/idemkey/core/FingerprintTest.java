package io.idemkey.core;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FingerprintTest {

    private static final Fingerprint FINGERPRINT = new Fingerprint();
    private static final List<Map.Entry<String, String>> NO_QUERY = List.of();

    private static String json(String body) {
        return json(body, Set.of());
    }

    private static String json(String body, Set<String> excludeFields) {
        return json(body.getBytes(StandardCharsets.UTF_8), excludeFields);
    }

    private static String json(byte[] body, Set<String> excludeFields) {
        return hex(FINGERPRINT.of("POST", "/orders", NO_QUERY, true, body, excludeFields));
    }

    private static String raw(byte[] body) {
        return hex(FINGERPRINT.of("POST", "/orders", NO_QUERY, false, body, Set.of()));
    }

    private static String raw(String body) {
        return raw(body.getBytes(StandardCharsets.UTF_8));
    }

    private static String hex(byte[] digest) {
        return HexFormat.of().formatHex(digest);
    }

    private static String nestedArrays(int depth) {
        return "[".repeat(depth) + "]".repeat(depth);
    }

    private static String nestedObjects(int depth) {
        return "{\"a\":".repeat(depth) + "1" + "}".repeat(depth);
    }

    /** Runs on a thread with a small stack, so unbounded recursion would surely overflow. */
    private static String onSmallStack(String body, Set<String> excludeFields) throws InterruptedException {
        AtomicReference<Object> outcome = new AtomicReference<>();
        Thread thread = new Thread(null, () -> {
            try {
                outcome.set(json(body, excludeFields));
            } catch (Throwable t) {
                outcome.set(t);
            }
        }, "small-stack", 256 * 1024);
        thread.start();
        thread.join(10_000);
        if (outcome.get() instanceof Throwable t) {
            throw new AssertionError("fingerprinting threw " + t, t);
        }
        assertNotNull(outcome.get(), "fingerprinting did not finish");
        return (String) outcome.get();
    }

    @Test
    void resultIsA32ByteSha256() {
        assertEquals(32, FINGERPRINT.of("POST", "/orders", NO_QUERY, true, "{}".getBytes(), Set.of()).length);
        assertEquals(32, FINGERPRINT.of("POST", "/orders", NO_QUERY, false, new byte[0], Set.of()).length);
    }

    @Test
    void sameRequestGivesTheSameFingerprint() {
        assertEquals(json("{\"amount\":10}"), json("{\"amount\":10}"));
        assertArrayEquals(new Fingerprint().of("PATCH", "/a", List.of(Map.entry("q", "1")), false, new byte[]{1, 2}, Set.of()),
                new Fingerprint().of("PATCH", "/a", List.of(Map.entry("q", "1")), false, new byte[]{1, 2}, Set.of()));
    }

    @Test
    void memberOrderAndWhitespaceDoNotMatter() {
        String compact = json("{\"amount\":10,\"currency\":\"EUR\",\"items\":[{\"sku\":\"a\",\"qty\":1}]}");
        assertEquals(compact, json("{ \"currency\" : \"EUR\",\n\t\"items\": [ { \"qty\": 1, \"sku\": \"a\" } ],\r\n \"amount\": 10 }"));
    }

    @Test
    void canonicalFormSortsMembersAndDropsInsignificantWhitespace() {
        assertEquals("{\"a\":[1.5,{\"y\":true,\"z\":null}],\"b\":\"x\"}",
                FINGERPRINT.canonicalJson("{ \"b\" : \"x\", \"a\" : [ 1.50 , { \"z\" : null, \"y\" : true } ] }"
                        .getBytes(StandardCharsets.UTF_8), Set.of()));
    }

    @Test
    void arrayOrderMatters() {
        assertNotEquals(json("[1,2]"), json("[2,1]"));
    }

    @Test
    void stringValuesAndTypesMatter() {
        assertNotEquals(json("{\"a\":\"1\"}"), json("{\"a\":1}"));
        assertNotEquals(json("{\"a\":null}"), json("{\"a\":false}"));
        assertNotEquals(json("{\"a\":\"x\"}"), json("{\"a\":\"X\"}"));
        assertNotEquals(json("{\"a\":1}"), json("{\"A\":1}"));
    }

    @Test
    void excludedFieldsAreRemovedAtEveryDepthInsideArraysAndCaseInsensitively() {
        Set<String> exclude = Set.of("clienttimestamp", "requestnonce");
        String with = "{\"clientTimestamp\":1,\"order\":{\"REQUESTNONCE\":\"n1\",\"lines\":[{\"sku\":\"a\",\"ClientTimeStamp\":\"t\"},"
                + "[{\"requestNonce\":{\"deep\":[1,2,{\"x\":1}]}}]]},\"requestNonce\":[1,[2]]}";
        String other = "{\"clientTimestamp\":2,\"order\":{\"REQUESTNONCE\":\"n2\",\"lines\":[{\"sku\":\"a\",\"ClientTimeStamp\":null},"
                + "[{\"requestNonce\":{}}]]},\"requestNonce\":\"z\"}";
        String without = "{\"order\":{\"lines\":[{\"sku\":\"a\"},[{}]]}}";
        assertEquals(json(without, exclude), json(with, exclude));
        assertEquals(json(without, exclude), json(other, exclude));
        assertEquals(json(without), json(with, exclude), "the excluded members leave no trace");
        assertEquals("{\"order\":{\"lines\":[{\"sku\":\"a\"},[{}]]}}",
                FINGERPRINT.canonicalJson(with.getBytes(StandardCharsets.UTF_8), exclude));
    }

    @Test
    void fieldsThatAreNotExcludedStillCount() {
        assertNotEquals(json("{\"nonce\":1,\"a\":1}"), json("{\"nonce\":2,\"a\":1}"));
        assertNotEquals(json("{\"nonce\":1,\"a\":1}", Set.of("nonce")), json("{\"nonce\":1,\"a\":2}", Set.of("nonce")));
    }

    @Test
    void differentMethodPathQueryOrBodyGiveDifferentFingerprints() {
        byte[] body = "{\"a\":1}".getBytes(StandardCharsets.UTF_8);
        List<Map.Entry<String, String>> query = List.of(Map.entry("dryRun", "true"));
        String base = hex(FINGERPRINT.of("POST", "/orders", query, true, body, Set.of()));
        assertNotEquals(base, hex(FINGERPRINT.of("PATCH", "/orders", query, true, body, Set.of())));
        assertNotEquals(base, hex(FINGERPRINT.of("POST", "/orders/1", query, true, body, Set.of())));
        assertNotEquals(base, hex(FINGERPRINT.of("POST", "/orders", List.of(Map.entry("dryRun", "false")), true, body, Set.of())));
        assertNotEquals(base, hex(FINGERPRINT.of("POST", "/orders", List.of(Map.entry("dryrun", "true")), true, body, Set.of())));
        assertNotEquals(base, hex(FINGERPRINT.of("POST", "/orders", NO_QUERY, true, body, Set.of())));
        assertNotEquals(base, hex(FINGERPRINT.of("POST", "/orders", query, true, "{\"a\":2}".getBytes(), Set.of())));
    }

    @Test
    void fieldBoundariesCannotBeShiftedToForgeAFingerprint() {
        assertNotEquals(hex(FINGERPRINT.of("POST", "/ab", NO_QUERY, false, new byte[0], Set.of())),
                hex(FINGERPRINT.of("POS", "T/ab", NO_QUERY, false, new byte[0], Set.of())));
        assertNotEquals(hex(FINGERPRINT.of("POST", "/", List.of(Map.entry("a", "bc")), false, new byte[0], Set.of())),
                hex(FINGERPRINT.of("POST", "/", List.of(Map.entry("ab", "c")), false, new byte[0], Set.of())));
        assertNotEquals(hex(FINGERPRINT.of("POST", "/", List.of(Map.entry("a", "")), false, "x".getBytes(), Set.of())),
                hex(FINGERPRINT.of("POST", "/", List.of(Map.entry("a", "x")), false, new byte[0], Set.of())));
    }

    @Test
    void orderOfQueryParameterNamesDoesNotMatter() {
        List<Map.Entry<String, String>> one = List.of(Map.entry("b", "2"), Map.entry("a", "0"), Map.entry("a", "1"));
        List<Map.Entry<String, String>> other = List.of(Map.entry("a", "0"), Map.entry("b", "2"), Map.entry("a", "1"));
        assertEquals(hex(FINGERPRINT.of("POST", "/x", one, false, new byte[0], Set.of())),
                hex(FINGERPRINT.of("POST", "/x", other, false, new byte[0], Set.of())));
    }

    @Test
    void orderOfOneParametersValuesMattersBecauseTheyBindToAList() {
        List<Map.Entry<String, String>> ab = List.of(Map.entry("item", "A"), Map.entry("item", "B"));
        List<Map.Entry<String, String>> ba = List.of(Map.entry("item", "B"), Map.entry("item", "A"));
        assertNotEquals(hex(FINGERPRINT.of("POST", "/x", ab, false, new byte[0], Set.of())),
                hex(FINGERPRINT.of("POST", "/x", ba, false, new byte[0], Set.of())));
    }

    @Test
    void numericallyEqualNumbersAreEqual() {
        assertEquals(json("{\"a\":10}"), json("{\"a\":10.0}"));
        assertEquals(json("{\"a\":10}"), json("{\"a\":1e1}"));
        assertEquals(json("{\"a\":[0.5]}"), json("{\"a\":[5.000E-1]}"));
        assertNotEquals(json("{\"a\":10}"), json("{\"a\":10.01}"));
    }

    /** Decimals taken as written must be exactly what BigDecimal would have made of them. */
    @Test
    void decimalsTakenAsWrittenAreExactlyBigDecimalsCanonicalForm() {
        java.util.Random random = new java.util.Random(42);
        int plain = 0;
        for (int i = 0; i < 200_000; i++) {
            String integer = random.nextInt(3) == 0 ? "0" : Integer.toString(random.nextInt(1_000_000));
            String fraction = "0".repeat(random.nextInt(9)) + random.nextInt(10_000) + (random.nextInt(4) == 0 ? "0" : "");
            String lexeme = (random.nextBoolean() ? "-" : "") + integer + "." + fraction;
            if (Fingerprint.isPlainDecimal(lexeme)) {
                plain++;
                assertEquals(new java.math.BigDecimal(lexeme).stripTrailingZeros().toString(), lexeme);
            }
        }
        assertTrue(plain > 50_000, "most of them: " + plain);
        for (String notPlain : List.of("1.50", "0.0000001", "1e3", "1.5E2", "10.0", "-0.0", "0.", ".5", "01.5", "1.-5", "--1.5")) {
            assertEquals(false, Fingerprint.isPlainDecimal(notPlain), notPlain);
        }
    }

    @Test
    void malformedJsonIsHashedAsRawBytesAndNeverThrows() {
        for (String broken : List.of("{", "{\"a\":", "{\"a\":1,}", "[1,2", "{'a':1}", "nul", "{\"a\":1} trailing",
                "{\"a\":1}{\"b\":2}", "{\"a\" 1}", "]", "\"unterminated", "{\"a\":01}")) {
            String fingerprint = assertDoesNotThrow(() -> json(broken), broken);
            assertEquals(raw(broken), fingerprint, () -> broken + " should be hashed raw");
        }
        assertNotEquals(json("{\"a\":1,}"), json("{\"a\": 1,}"), "raw bytes: whitespace now matters");
    }

    @Test
    void invalidUtf8IsHashedRawAndDifferentInvalidBytesGiveDifferentFingerprints() {
        byte[] first = {'{', '"', 'a', '"', ':', '"', (byte) 0xff, '"', '}'};
        byte[] second = {'{', '"', 'a', '"', ':', '"', (byte) 0xfe, '"', '}'};
        byte[] truncated = {'{', '"', 'a', '"', ':', '"', (byte) 0xc3, '"', '}'};
        byte[] overlong = {'{', '"', 'a', '"', ':', '"', (byte) 0xc0, (byte) 0xaf, '"', '}'};
        String a = assertDoesNotThrow(() -> json(first, Set.of()));
        String b = assertDoesNotThrow(() -> json(second, Set.of()));
        String c = assertDoesNotThrow(() -> json(truncated, Set.of()));
        String d = assertDoesNotThrow(() -> json(overlong, Set.of()));
        assertEquals(4, Set.of(a, b, c, d).size(), "lenient decoding would map all of them to U+FFFD");
        assertEquals(raw(first), a);
        assertNotEquals(json("{\"a\":\"\ufffd\"}"), a);
    }

    @Test
    void duplicateMembersAreHashedAsRawBytes() {
        String fingerprint = assertDoesNotThrow(() -> json("{\"a\":1,\"a\":2}"));
        assertEquals(raw("{\"a\":1,\"a\":2}"), fingerprint);
        assertNotEquals(json("{\"a\":2,\"a\":1}"), fingerprint);
        assertNull(FINGERPRINT.canonicalJson("{\"x\":{\"a\":1,\"a\":1}}".getBytes(), Set.of()));
    }

    @Test
    void nestingUpToTheMaximumDepthIsCanonicalised() {
        String deepest = nestedArrays(Fingerprint.MAX_JSON_DEPTH);
        assertNotNull(FINGERPRINT.canonicalJson(deepest.getBytes(), Set.of()));
        assertEquals(json(deepest), json(deepest.replace("[", "[ ")));
    }

    @Test
    void nestingDeeperThanTheMaximumIsHashedAsRawBytes() {
        String tooDeep = nestedArrays(Fingerprint.MAX_JSON_DEPTH + 1);
        assertNull(FINGERPRINT.canonicalJson(tooDeep.getBytes(), Set.of()));
        assertEquals(raw(tooDeep), json(tooDeep));
        String tooDeepObjects = nestedObjects(Fingerprint.MAX_JSON_DEPTH + 1);
        assertEquals(raw(tooDeepObjects), json(tooDeepObjects));
    }

    @Test
    void nestingOneHundredThousandDeepNeitherThrowsNorOverflowsTheStack() throws InterruptedException {
        String arrays = nestedArrays(100_000);
        String objects = nestedObjects(100_000);
        assertEquals(raw(arrays), onSmallStack(arrays, Set.of()));
        assertEquals(raw(objects), onSmallStack(objects, Set.of()));
        assertNotNull(onSmallStack("{\"skip\":" + arrays + ",\"a\":1}", Set.of("skip")));
        assertNotNull(onSmallStack("{\"skip\":" + objects + ",\"a\":1}", Set.of("skip")));
        assertNotNull(onSmallStack("[".repeat(100_000), Set.of()));
    }

    @Test
    void nonJsonBodiesAreHashedAsRawBytes() {
        assertNotEquals(raw("{\"a\":1,\"b\":2}"), raw("{\"b\":2,\"a\":1}"));
        assertNotEquals(raw("a=1&b=2"), raw("b=2&a=1"));
        assertEquals(raw(new byte[]{0, 1, 2, (byte) 0xff}), raw(new byte[]{0, 1, 2, (byte) 0xff}));
        assertNotEquals(raw(new byte[]{0, 1, 2, (byte) 0xff}), raw(new byte[]{0, 1, 2, (byte) 0xfe}));
    }

    @Test
    void emptyEntityIsFingerprintedWithoutError() {
        assertEquals(raw(new byte[0]), json(new byte[0], Set.of()));
    }

    @Test
    void numbersOutsideBigDecimalRangeAreHashedRawInsteadOfThrowing() {
        for (String body : List.of("{\"a\":1e99999999999}", "[1E-99999999999]", "{\"a\":10e2147483647}")) {
            String fingerprint = assertDoesNotThrow(() -> json(body), body);
            assertNotNull(fingerprint);
        }
    }

    @Test
    void truncatedBodyWhoseExcludedMemberIsUnterminatedDoesNotHang() {
        for (String body : List.of("{\"nonce\":{\"a\":1", "{\"nonce\":[1,2", "[{\"nonce\":[")) {
            String fingerprint = assertTimeoutPreemptively(Duration.ofSeconds(2), () -> json(body, Set.of("nonce")), body);
            assertEquals(raw(body), fingerprint);
        }
    }

    @Test
    void unpairedSurrogateEscapesDoNotCollideWithOtherStrings() {
        String high = json("{\"a\":\"\\ud800\"}");
        String other = json("{\"a\":\"\\udbff\"}");
        String question = json("{\"a\":\"?\"}");
        assertNotEquals(high, other);
        assertNotEquals(high, question);
        assertNotEquals(other, question);
    }
}
