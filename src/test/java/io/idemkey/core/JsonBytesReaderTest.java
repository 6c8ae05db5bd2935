package io.idemkey.core;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.charset.StandardCharsets;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * After an array element or an object member only a comma or that container's own closing bracket
 * may stand: any other byte there (another separator, the other container's bracket) refuses the
 * document, as JSON-P does, so its raw bytes are hashed.
 */
class JsonBytesReaderTest {

    @ParameterizedTest(name = "{0} refused, {1} read")
    @CsvSource(delimiter = '|', value = {
            "[1;2]           | [1,2]",
            "[1:2]           | [1,2]",
            "[1}             | [1]",
            "[[1}]           | [[1]]",
            "{\"a\":1;\"b\":2} | {\"a\":1,\"b\":2}",
            "{\"a\":1:\"b\":2} | {\"a\":1,\"b\":2}",
            "{\"a\":1]       | {\"a\":1}",
            "[{\"a\":1]]     | [{\"a\":1}]"})
    void onlyACommaOrTheOwnCloseFollowsAnElement(String refused, String read) {
        assertNull(JsonBytesReader.canonicalOrNull(utf8(refused), Set.of()), refused);
        assertNotNull(JsonBytesReader.canonicalOrNull(utf8(read), Set.of()), read);
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
