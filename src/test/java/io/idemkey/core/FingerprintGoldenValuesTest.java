package io.idemkey.core;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Fingerprints are kept in records for up to {@code ttlHours}: a retry after an upgrade must get the
 * same one. These values were computed by the tree-building implementation (revision 40564dd);
 * every later implementation must give exactly the same.
 */
class FingerprintGoldenValuesTest {

    private static final Fingerprint FINGERPRINT = new Fingerprint();
    private static final Set<String> EXCLUDED = Set.of("clienttimestamp", "requestnonce");

    static Stream<Arguments> bodies() {
        return Stream.of(
                json("{\"amount\":1999,\"currency\":\"EUR\",\"clientTimestamp\":\"2026-11-22T10:15:30Z\"}", "938957b1c8e5a83c0f7e2f751fe36f99ecdd6154784ed07f9da6427185c75b12"),
                json("{\"currency\":\"EUR\",\"amount\":1999}", "938957b1c8e5a83c0f7e2f751fe36f99ecdd6154784ed07f9da6427185c75b12"),
                json("{ \"b\" : [3, 2, {\"z\":null,\"a\":true}], \"a\" : {\"y\":false,\"x\":\"\\u00e9t\\u00e9\"} }", "93d9fe5cff726a63eafccbb5bdb91c500aca138a9132cff4d2945b8c2ba5d196"),
                json("{\"n\":[0,-0,1,-1,123456789012345678,1234567890123456789,-9223372036854775808,1.0,1.50,-0.5,0.000001,"
                        + "0.0000001,1e3,1E+3,2.5e-3,10.0,100,1.23456789012345678901234567890,-0.0,0.10]}", "02a937ca48f9130c0cf74dbd28deb560bf5c2f933a7bcec502e312c2ff32bcf9"),
                json("{\"items\":[{\"sku\":\"A\",\"requestNonce\":\"n1\",\"qty\":1},{\"qty\":2,\"RequestNonce\":\"n2\",\"sku\":\"B\"}],"
                        + "\"clientTimestamp\":\"x\",\"note\":\"emoji \\ud83d\\ude00 and \u00fc\"}", "4a3671a05f36eb70bff0423b4d94bbf8c10142f18c3608aa19b9a427c538e5c5"),
                json("[\"a\",[\"b\",[\"c\"]],{}]", "956bf8958bde747d2601e10484a98810f605c484057eceece0bc8fe1636912ce"),
                json("\"just a string\"", "b241d60f21de9559bbe72f0d9119d3a6326693187dc083595edacecd16cea81b"),
                json("42", "52fd40a58913846cf87695bbc8f97228fe93e9e553351bc09e1d52a6e46ea4cd"),
                json("{\"a\":1,\"a\":2}", "1e1590d39ac0f59772b21c559e16912dbf68b1e86466e861721dc649c70004b4"),
                json("{\"a\":", "14638ef5cc6a1c173eddcee67ce0ab86bc9200887ec1ced792524d4ee9b0b06a"),
                json("[" + "[".repeat(200) + "]".repeat(200) + "]", "58c3f036a3b87d3e3d701cdce2d5e1f7cba6d7f05fd519c0ffc6570214239838"),
                json("{\"\\u0000\\n\\t\\\"\\\\/\":\"esc\\b\\f\\r\"}", "a81bc91cf22e6237fc9d7e6bc4ab5d9a9f9d9cd3693b1c215abe31ec9412c440"),
                json("{\"big\":1e400,\"tiny\":-1e-400}", "ca10bcad0fd67a493775111f8a7621d202b61048cb2201b7c3019302a1da2b80"),
                json("{\"b\":{\"d\":{\"f\":1,\"e\":2},\"c\":[{\"h\":1,\"g\":2}]},\"a\":0}", "04d975a5485c50118f1905188081cde064e97af65126de9e93f8773645cd47eb"),
                json(FingerprintBenchmarkBodies.order(2048), "67cf44cec3e5cf0ebe4957c08f4760784daad2586f775cecfa646104a0082ff2"),
                // larger than what is decoded at once: parsed from the bytes
                json(FingerprintBenchmarkBodies.order(100_000), "978b316350552ea3cee7ad32ed8d19988f82b436a99f1f2885c47299703f5b1e"),
                json(FingerprintBenchmarkBodies.order(80_000).replace("Article", "Artikel \u00fc\u00df \ud83d\ude00"),
                        "a4c568fbd070f5e3a706fa09f44a28822a5fc00c07435b4d8a84003ef1c239f1"),
                Arguments.of("raw bytes", "POST", "/files", List.of(), false, new byte[]{0, 1, 2, (byte) 0xff}, "fb13c7abe46d3fc1add94cadae39bc408e1ddfe18258abd289da68d6fd5c7631"),
                Arguments.of("invalid UTF-8 as JSON", "POST", "/orders", List.of(), true, new byte[]{'"', (byte) 0xc3, '"'}, "c01a73a9078540464fd50a48b4da00578665fd227017f62ee3815805210f5cb4"),
                Arguments.of("query and path", "PATCH", "/orders/42%2F7", List.of(Map.entry("b", "2"), Map.entry("a", "1"),
                        Map.entry("a", "0")), true, "{}".getBytes(StandardCharsets.UTF_8), "bdda2c3362c50eec20e1ec2cde99cca71202cbeca5a59920b73f74aa671a4bc7"),
                Arguments.of("empty", "POST", "/orders", List.of(), true, new byte[0], "e02ff6da700709871d7a6f9b7800da76311a0034a205e6672a803cd9029e9918"));
    }

    private static Arguments json(String body, String expected) {
        return Arguments.of(body.length() > 60 ? body.substring(0, 60) + "..." : body, "POST", "/orders", List.of(), true,
                body.getBytes(StandardCharsets.UTF_8), expected);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("bodies")
    void fingerprintsKeepTheirValuesAcrossImplementations(String name, String method, String path,
                                                            List<Map.Entry<String, String>> query, boolean json, byte[] body,
                                                            String expected) {
        String actual = HexFormat.of().formatHex(FINGERPRINT.of(method, path, query, json, body, EXCLUDED));
        assertEquals(expected, actual);
    }
}
