package io.idemkey.core;

import jakarta.json.spi.JsonProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * The byte tokenizer (the default) against the JSON-P path (the reference): the same fingerprint for
 * every input, valid or not. {@code ParsersFuzzTest#bytesEqualJsonP} fuzzes the same property; these
 * are the cases worth naming, the golden values through JSON-P, and bodies larger than a fuzzer makes.
 */
class FingerprintPathsTest {

    private static final Fingerprint BYTES = new Fingerprint();
    private static final Fingerprint JSON_P = new Fingerprint(JsonProvider.provider());
    private static final Set<String> EXCLUDED = Set.of("clienttimestamp", "requestnonce", "ts", "k");

    private static void assertSamePaths(byte[] body) {
        String bytes = HexFormat.of().formatHex(BYTES.of("POST", "/orders", List.of(), true, body, EXCLUDED));
        String jsonP = HexFormat.of().formatHex(JSON_P.of("POST", "/orders", List.of(), true, body, EXCLUDED));
        assertEquals(jsonP, bytes, () -> "body " + shown(body) + ": JSON-P " + JSON_P.canonicalJson(body, EXCLUDED)
                + ", byte tokenizer " + BYTES.canonicalJson(body, EXCLUDED));
    }

    /** An object of {@code members} members named m0..m(n-1), in the order {@code order} gives, and one more when {@code repeat}. */
    private static byte[] bigObject(int members, java.util.function.IntUnaryOperator order, boolean repeat) {
        StringBuilder json = new StringBuilder("{");
        for (int i = 0; i < members; i++) {
            int name = order.applyAsInt(i);
            json.append(i == 0 ? "" : ",").append("\"m").append(name).append("\":").append(name);
        }
        if (repeat) {
            json.append(",\"m").append(members / 3).append("\":0");
        }
        return utf8(json.append('}').toString());
    }

    /**
     * Objects with many members are sorted by a merge sort (an insertion sort below 17): in any order
     * they give the canonical form of the sorted object, both ways, and a repeated name among them is
     * still found. The 80,000 members in reverse order took 36 s of CPU with the insertion sort alone (a
     * body a client can send under the default 1 MiB limit); the time limit here is 20 s, a guard
     * against a square-cost sort coming back, not a performance target.
     */
    @Test
    void objectsWithManyMembersInAnyOrderAreSortedInNLogNAndRepeatsAreStillFound() {
        int n = 80_000;
        byte[] inOrder = bigObject(n, i -> i, false);
        org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(java.time.Duration.ofSeconds(20), () -> {
            byte[] reversed = bigObject(n, i -> n - 1 - i, false);
            byte[] shuffled = bigObject(n, i -> (int) ((i * 48_271L) % n), false); // 48271 is prime to 80000: a permutation
            String expected = BYTES.canonicalJson(inOrder, Set.of());
            assertEquals(expected, BYTES.canonicalJson(reversed, Set.of()));
            assertEquals(expected, BYTES.canonicalJson(shuffled, Set.of()));
            assertSamePaths(reversed);
            assertSamePaths(shuffled);
        });
        for (int members : new int[] {16, 17, 18, 33, 1000}) {
            assertSamePaths(bigObject(members, i -> members - 1 - i, false));
            byte[] repeated = bigObject(members, i -> members - 1 - i, true);
            assertSamePaths(repeated);
            assertNull(BYTES.canonicalJson(repeated, Set.of()), "a repeated member among " + members + ": not canonical");
        }
    }

    private static String shown(byte[] body) {
        String text = new String(body, StandardCharsets.UTF_8);
        return text.length() > 200 ? text.substring(0, 200) + "... (" + body.length + " bytes)" : text;
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.idemkey.core.FingerprintGoldenValuesTest#bodies")
    void theGoldenValuesComeOutOfTheJsonPPathToo(String name, String method, String path,
                                                 List<Map.Entry<String, String>> query, boolean json, byte[] body,
                                                 String expected) {
        assertEquals(expected, HexFormat.of().formatHex(JSON_P.of(method, path, query, json, body,
                Set.of("clienttimestamp", "requestnonce"))));
    }

    @ParameterizedTest
    @ValueSource(strings = {
            // white space, literals, structure
            " {} ", "\t[\r\n]\n", "{ }", "[ ]", "[1,]", "[,1]", "{,}", "{\"a\":1,}", "{\"a\" 1}", "{\"a\":}", "{1:2}",
            "[1 2]", "[1,,2]", "[true,false,null]", "[truefalse]", "tru", "nul", "nulll", "[nan]", "[NaN]", "[Infinity]",
            "1 2", "{} {}", "[]]", "[[]", "\u000b1", "1\u000c", " ", "\n", "\u00a01", "\ufeff{}", "{}\u0000",
            // strings and escapes
            "\"\"", "\"a\u0001b\"", "\"tab\there\"", "\"\u007f\"", "\"\u2028\u2029\"", "\"\\u0000\"", "\"\\uD83D\\uDE00\"",
            "\"\\ud83d\"", "\"\\ude00\"", "\"\\ud83d\\u0041\"", "\"\\ud83dx\"", "\"\\ud83d\\\"\"", "\"\\ud83d\\ud83d\\ude00\"",
            "\"\\uDBFF\\uDFFF\"", "\"\\u00e9\" ", "\"\\u00G0\"", "\"\\u12\"", "\"\\x41\"", "\"\\'\"", "\"\\\"", "\"abc",
            "\"\\/\\b\\f\\n\\r\\t\\\\\\\"\"", "\"\u00e9t\u00e9 \ud83d\ude00\"", "\"\\u00E9\"",
            // numbers
            "0", "-0", "-", "-a", "01", "-01", "00", "1.", ".5", "1.e5", "1e", "1e+", "1E-", "+1", "1.5.3", "[1-2]", "1x",
            "123456789012345678", "-123456789012345678", "1234567890123456789", "-9223372036854775808", "9223372036854775808",
            "1.0", "1.50", "-0.5", "0.5", "10.5", "100.25", "0.000001", "0.0000001", "0.0000010", "-0.000001", "-0.0000001",
            "0.0", "-0.0", "0e0", "1e400", "-1e-400", "1E+3", "2.5e-3", "1e2147483647", "1e2147483648", "1e-2147483648",
            "10e2147483647", "1e-2147483649", "1.23456789012345678901234567890",
            // members: order, repeats, exclusions at every depth
            "{\"b\":1,\"a\":2}", "{\"a\":1,\"a\":2}", "{\"a\":1,\"b\":2,\"a\":3}", "{\"ts\":1,\"ts\":2}", "{\"TS\":1,\"a\":[{\"Ts\":2}]}",
            "{\"ts\":{\"a\":1,\"a\":2}}", "{\"ts\":\"\\ud800\"}", "{\"\\ud800\":1}", "{\"\u212a\":1,\"a\":2}", "{\"\u212a\":1,\"k\":2}",
            "{\"\u00e9\":1,\"e\":2,\"\ud83d\ude00\":3,\"\uffff\":4}", "{\"\\u0061\":1,\"a\":2}", "{\"\":1,\"\":2}",
            "{\"b\":{\"d\":1,\"c\":2},\"a\":[{\"f\":1,\"e\":2}]}", "{\"a\":1,\"ts\":2,\"b\":3}", "{\"ts\":[[[[]]]],\"a\":1}"})
    void namedCasesGiveTheSameFingerprintBothWays(String body) {
        assertSamePaths(utf8(body));
    }

    @Test
    void numbersAroundJsonPsBigDecimalLengthLimit() {
        for (int digits = 1095; digits <= 1105; digits++) {
            assertSamePaths(utf8("1" + "0".repeat(digits - 1)));   // an integer that needs a BigDecimal
            assertSamePaths(utf8("1." + "1".repeat(digits - 2))); // a plain decimal: taken as it is
            assertSamePaths(utf8("1." + "1".repeat(digits - 3) + "0"));
            assertSamePaths(utf8("[1e" + "0".repeat(digits - 2) + "]"));
        }
    }

    @Test
    void nestingAroundTheDepthLimit() {
        for (int depth = Fingerprint.MAX_JSON_DEPTH - 2; depth <= Fingerprint.MAX_JSON_DEPTH + 2; depth++) {
            assertSamePaths(utf8("[".repeat(depth) + "]".repeat(depth)));
            assertSamePaths(utf8("{\"a\":".repeat(depth) + "1" + "}".repeat(depth)));
            assertSamePaths(utf8("{\"ts\":" + "[".repeat(depth) + "]".repeat(depth) + "}"));
        }
        assertNotNull(BYTES.canonicalJson(utf8("[".repeat(128) + "]".repeat(128)), Set.of()));
        assertNull(BYTES.canonicalJson(utf8("[".repeat(129) + "]".repeat(129)), Set.of()));
    }

    /** Every lead byte with second bytes at the edges of what each lead allows, cut after one to four bytes. */
    @Test
    void malformedAndWellFormedUtf8InsideAndOutsideStrings() {
        for (int lead = 0x80; lead <= 0xff; lead++) {
            for (int second : new int[]{0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0}) {
                byte[] sequence = {(byte) lead, (byte) second, (byte) 0x80, (byte) 0xbf};
                for (int length = 1; length <= 4; length++) {
                    ByteArrayOutputStream inside = new ByteArrayOutputStream();
                    inside.writeBytes(utf8("[\"a"));
                    inside.write(sequence, 0, length);
                    inside.writeBytes(utf8("\"]"));
                    assertSamePaths(inside.toByteArray());
                    ByteArrayOutputStream outside = new ByteArrayOutputStream();
                    outside.writeBytes(utf8("[1,"));
                    outside.write(sequence, 0, length);
                    outside.writeBytes(utf8("]"));
                    assertSamePaths(outside.toByteArray());
                }
            }
        }
    }

    /** Names compared on their UTF-8 bytes come in String order, also where that is not code point order. */
    @Test
    void namesComparedAsBytesInStringOrder() {
        String[] pieces = {"", "a", "b", "A", "~", "\u007f", "\u0080", "\u00e9", "\u07ff", "\u0800", "\ud7ff", "\ue000", "\uffff",
                "\ud800\udc00", "\ud83d\ude00", "\udbff\udfff", "\u212a", "k"};
        Random random = new Random(30);
        for (int round = 0; round < 20_000; round++) {
            String common = pieces[random.nextInt(pieces.length)];
            String x = common + pieces[random.nextInt(pieces.length)] + pieces[random.nextInt(pieces.length)];
            String y = common + pieces[random.nextInt(pieces.length)] + pieces[random.nextInt(pieces.length)];
            byte[] a = utf8("_" + x);
            byte[] b = utf8("__" + y);
            assertEquals(Integer.signum(x.compareTo(y)), Integer.signum(Fingerprint.compareAsStrings(a, 1, a.length - 1, b, 2,
                    b.length - 2)), () -> x + " vs " + y);
        }
    }

    /**
     * Order-like bodies, small and larger than JSON-P's path decodes at once (64 KB), with one to
     * three random edits each (a byte changed, cut or inserted): valid or not, the same both ways.
     */
    @Test
    void randomlyEditedBodiesGiveTheSameFingerprintBothWays() {
        Random random = new Random(30_5);
        byte[] alphabet = utf8("{}[]:,\"\\ u0aeE+-.1tfn\u00e9\r\n");
        for (int size : new int[]{300, 2048, 70_000}) {
            byte[] original = utf8(FingerprintBenchmarkBodies.order(size)
                    .replace("Article 3\"", "Art\\u00efcle \\ud83d\\ude00 \u00fc\""));
            int rounds = size > 65_536 ? 60 : 1500;
            for (int round = 0; round < rounds; round++) {
                byte[] body = original.clone();
                for (int edits = 1 + random.nextInt(3); edits > 0; edits--) {
                    int at = random.nextInt(body.length);
                    switch (random.nextInt(3)) {
                        case 0 -> body[at] = alphabet[random.nextInt(alphabet.length)];
                        case 1 -> {
                            byte[] shorter = new byte[body.length - 1];
                            System.arraycopy(body, 0, shorter, 0, at);
                            System.arraycopy(body, at + 1, shorter, at, body.length - at - 1);
                            body = shorter;
                        }
                        default -> {
                            byte[] longer = new byte[body.length + 1];
                            System.arraycopy(body, 0, longer, 0, at);
                            longer[at] = alphabet[random.nextInt(alphabet.length)];
                            System.arraycopy(body, at, longer, at + 1, body.length - at);
                            body = longer;
                        }
                    }
                }
                assertSamePaths(body);
            }
        }
    }
}
