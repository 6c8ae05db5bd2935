package io.idemkey.core;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RecordKeyTest {

    private static final String PREFIX = "idempotency:";

    @Test
    void commonKeysStayReadable() {
        assertEquals("idempotency:alice:8e03978e-40d5-43e8-bc93-6894a57f9324",
                RecordKey.of(PREFIX, "alice", "8e03978e-40d5-43e8-bc93-6894a57f9324"));
        assertEquals("idempotency::k_1.x~y", RecordKey.of(PREFIX, "", "k_1.x~y"));
    }

    /**
     * Whatever the scope and key, no record key (of a request or a call) holds the hashed store
     * keys' marker after the prefix: the two key spaces never meet.
     */
    @Test
    void noRecordKeyEverHoldsTheHashedKeysMarker() {
        Random random = new Random(49);
        List<String> crafted = List.of("h", "h=", "h:", "=", "h%3D", "", "call");
        for (int i = 0; i < 20_000; i++) {
            String scope = i < crafted.size() ? crafted.get(i) : randomText(random);
            String key = randomText(random);
            for (String recordKey : List.of(RecordKey.of(PREFIX, scope, key), RecordKey.ofCall(PREFIX, scope, key))) {
                assertFalse(recordKey.substring(PREFIX.length()).contains("="), recordKey);
                assertFalse(recordKey.startsWith(PREFIX + RecordIdentifiers.HASHED_MARKER), recordKey);
            }
        }
    }

    private static String randomText(Random random) {
        StringBuilder text = new StringBuilder();
        for (int i = random.nextInt(50); i > 0; i--) {
            text.append(random.nextInt(4) == 0 ? (char) random.nextInt(0x3000) : "h=:%{}#A-_~".charAt(random.nextInt(11)));
        }
        return text.toString();
    }

    @Test
    void colonInScopeOrKeyIsEscaped() {
        assertEquals("idempotency:a%3Ab:c%3Ad", RecordKey.of(PREFIX, "a:b", "c:d"));
    }

    @Test
    void percentIsEscapedSoThatAnEscapeCannotBeForged() {
        assertEquals("idempotency:a%253Ab:k", RecordKey.of(PREFIX, "a%3Ab", "k"));
        assertNotEquals(RecordKey.of(PREFIX, "a%3Ab", "k"), RecordKey.of(PREFIX, "a:b", "k"));
    }

    @Test
    void curlyBracesAreEscapedSoNoClusterHashTagCanBeInjected() {
        String recordKey = RecordKey.of(PREFIX, "{tenant}", "{k}");
        assertEquals("idempotency:%7Btenant%7D:%7Bk%7D", recordKey);
        assertFalse(recordKey.contains("{") || recordKey.contains("}"));
    }

    @Test
    void nonAsciiIsEscapedAsUtf8Bytes() {
        assertEquals("idempotency:Jos%C3%A9:%E2%82%AC%F0%9F%98%80", RecordKey.of(PREFIX, "Jos\u00e9", "\u20ac\ud83d\ude00"));
    }

    @Test
    void spacesControlCharactersAndOtherDelimitersAreEscaped() {
        assertEquals("idempotency:a%20b%0A%2F%2A%3F:%22%5C%00", RecordKey.of(PREFIX, "a b\n/*?", "\"\\\0"));
    }

    @Test
    void splittingAColonDifferentlyBetweenScopeAndKeyGivesDifferentRecordKeys() {
        assertNotEquals(RecordKey.of(PREFIX, "a:b", "c"), RecordKey.of(PREFIX, "a", "b:c"));
        assertNotEquals(RecordKey.of(PREFIX, "", "a:b"), RecordKey.of(PREFIX, "a", "b"));
        assertNotEquals(RecordKey.of(PREFIX, "a:", "b"), RecordKey.of(PREFIX, "a", ":b"));
    }

    @Test
    void exactlyOneUnescapedSeparatorFollowsThePrefix() {
        String recordKey = RecordKey.of(PREFIX, "x:y:z", "1:2:3");
        assertEquals(1, recordKey.substring(PREFIX.length()).chars().filter(c -> c == ':').count());
    }

    @Test
    void noTwoDifferentScopeAndKeyPairsShareARecordKey() {
        List<String> alphabet = List.of("a", "b", ":", "%", "3", "A", "{", "}", "\u00e9", "%3A", " ", "\u00c3");
        Random random = new Random(8941);
        Map<String, List<String>> seen = new HashMap<>();
        for (int i = 0; i < 50_000; i++) {
            String scope = randomString(random, alphabet);
            String key = randomString(random, alphabet);
            List<String> pair = List.of(scope, key);
            List<String> previous = seen.putIfAbsent(RecordKey.of(PREFIX, scope, key), pair);
            if (previous != null) {
                assertEquals(previous, pair, "two pairs share a record key");
            }
        }
        assertTrue(seen.size() > 10_000, "enough distinct pairs were tried: " + seen.size());
    }

    @Test
    void everyEscapedCharacterIsUnreservedOrAPercentEscape() {
        String recordKey = RecordKey.of("", "s\u0000\u007f\u00ff:{}%/", "k");
        assertNull(recordKey.chars().filter(c -> !(Character.isLetterOrDigit(c) && c < 0x80) && "-._~%:".indexOf(c) < 0)
                .mapToObj(c -> (Object) (char) c).findFirst().orElse(null));
    }

    private static String randomString(Random random, List<String> alphabet) {
        StringBuilder out = new StringBuilder();
        int length = random.nextInt(5);
        for (int i = 0; i < length; i++) {
            out.append(alphabet.get(random.nextInt(alphabet.size())));
        }
        return out.toString();
    }
}
