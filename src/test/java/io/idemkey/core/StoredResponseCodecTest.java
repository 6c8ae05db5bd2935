package io.idemkey.core;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class StoredResponseCodecTest {

    private static StoredResponse roundTrip(StoredResponse response) {
        StoredResponse decoded = StoredResponseCodec.decode(StoredResponseCodec.encode(response));
        assertEquals(response, decoded);
        return decoded;
    }

    private static StoredResponse.Header header(String name, String value) {
        return new StoredResponse.Header(name, value);
    }

    private static byte[] tenKilobytesOfJson() {
        StringBuilder json = new StringBuilder("[");
        for (int i = 0; json.length() < 10_240; i++) {
            json.append(i == 0 ? "" : ",").append("{\"id\":").append(i)
                    .append(",\"name\":\"order line ").append(i).append("\",\"currency\":\"EUR\",\"amount\":12.50}");
        }
        return json.append(']').toString().getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void statusHeadersAndBodySurviveARoundTrip() {
        StoredResponse response = new StoredResponse(201,
                List.of(header("Content-Type", "application/json"), header("Location", "/orders/42")),
                "{\"id\":42}".getBytes(StandardCharsets.UTF_8));
        StoredResponse decoded = roundTrip(response);
        assertEquals(201, decoded.status());
        assertEquals("/orders/42", decoded.header("location").orElseThrow());
        assertArrayEquals("{\"id\":42}".getBytes(StandardCharsets.UTF_8), decoded.body());
    }

    @Test
    void everyStatusFrom100To999SurvivesARoundTrip() {
        for (int status : new int[]{100, 200, 204, 302, 409, 422, 599, 999}) {
            assertEquals(status, roundTrip(new StoredResponse(status, List.of(), new byte[0])).status());
        }
    }

    @Test
    void repeatedHeadersKeepTheirOrder() {
        List<StoredResponse.Header> headers = List.of(header("Link", "<a>; rel=next"), header("Content-Type", "text/plain"),
                header("Link", "<b>; rel=prev"), header("Link", "<c>; rel=last"));
        assertEquals(headers, roundTrip(new StoredResponse(200, headers, new byte[0])).headers());
    }

    @Test
    void unknownHeaderNamesAndTheirCaseAreKept() {
        List<StoredResponse.Header> headers = List.of(header("X-Request-Id", "abc"), header("content-type", "text/plain"),
                header("X-\u00dcnicode", "v\u00e4lue \u20ac"), header("X-Empty", ""));
        assertEquals(headers, roundTrip(new StoredResponse(200, headers, new byte[0])).headers());
    }

    @Test
    void emptyBodySurvivesARoundTrip() {
        StoredResponse decoded = roundTrip(new StoredResponse(204, List.of(), new byte[0]));
        assertEquals(0, decoded.bodyLength());
    }

    @Test
    void tenKilobyteJsonBodyIsStoredCompressedAndRestoredExactly() {
        byte[] body = tenKilobytesOfJson();
        StoredResponse response = new StoredResponse(200, List.of(header("Content-Type", "application/json")), body);
        byte[] encoded = StoredResponseCodec.encode(response);
        assertTrue(encoded.length < body.length / 4, "encoded " + encoded.length + " bytes for a " + body.length + " byte body");
        assertArrayEquals(body, StoredResponseCodec.decode(encoded).body());
    }

    @Test
    void aTwoHundredByteJsonAnswerIsStoredCompressed() {
        byte[] body = ("{\"id\":\"ord_8e03978e40d5\",\"status\":\"confirmed\",\"amount\":{\"value\":12999,\"currency\":"
                + "\"EUR\"},\"customer\":\"cus_4f2a9c\",\"items\":3,\"createdAt\":\"2026-11-22T10:15:30Z\",\"note\":\"leave at"
                + " the back door\",\"v\":2}").getBytes(StandardCharsets.UTF_8);
        byte[] encoded = StoredResponseCodec.encode(new StoredResponse(200, List.of(), body));
        assertTrue(encoded.length < body.length, encoded.length + " bytes for " + body.length);
        assertArrayEquals(body, StoredResponseCodec.decode(encoded).body());
    }

    @Test
    void smallBodiesAreStoredAsIs() {
        byte[] body = "a".repeat(StoredResponseCodec.COMPRESS_ABOVE).getBytes(StandardCharsets.US_ASCII);
        byte[] encoded = StoredResponseCodec.encode(new StoredResponse(200, List.of(), body));
        assertArrayEquals(body, Arrays.copyOfRange(encoded, encoded.length - body.length, encoded.length));
        assertArrayEquals(body, StoredResponseCodec.decode(encoded).body());
    }

    @Test
    void incompressibleRandomBodiesSurviveARoundTripWithoutGrowing() {
        Random random = new Random(1024);
        for (int size : new int[]{1024, 1025, 4096}) {
            byte[] body = new byte[size];
            random.nextBytes(body);
            StoredResponse response = new StoredResponse(200, List.of(header("Content-Type", "application/octet-stream")), body);
            byte[] encoded = StoredResponseCodec.encode(response);
            int overhead = StoredResponseCodec.encode(new StoredResponse(200, response.headers(), new byte[0])).length;
            assertEquals(overhead + body.length, encoded.length, "stored as is, not inflated by a failed compression");
            assertArrayEquals(body, StoredResponseCodec.decode(encoded).body());
        }
    }

    @Test
    void knownHeaderNamesCostOneByte() {
        StoredResponse known = new StoredResponse(200, List.of(header("Content-Type", "x")), new byte[0]);
        StoredResponse unknown = new StoredResponse(200, List.of(header("X-Content-Type", "x")), new byte[0]);
        assertEquals(StoredResponseCodec.encode(unknown).length - 2 - "X-Content-Type".length(),
                StoredResponseCodec.encode(known).length);
    }

    @Test
    void emptyOrTruncatedInputIsRefused() {
        byte[] encoded = StoredResponseCodec.encode(new StoredResponse(200,
                List.of(header("X-Custom", "value"), header("Location", "/x")), "body".getBytes()));
        assertThrows(IllegalArgumentException.class, () -> StoredResponseCodec.decode(new byte[0]));
        for (int length = 1; length < encoded.length - "body".length(); length++) {
            byte[] truncated = Arrays.copyOf(encoded, length);
            assertThrows(IllegalArgumentException.class, () -> StoredResponseCodec.decode(truncated), "length " + length);
        }
    }

    @Test
    void unknownVersionIsRefused() {
        byte[] encoded = StoredResponseCodec.encode(new StoredResponse(200, List.of(), new byte[0]));
        encoded[0] = 99;
        assertThrows(IllegalArgumentException.class, () -> StoredResponseCodec.decode(encoded));
    }

    @Test
    void unknownHeaderCodeIsRefused() {
        byte[] encoded = StoredResponseCodec.encode(new StoredResponse(200, List.of(header("Location", "/x")), new byte[0]));
        encoded[5] = (byte) 200; // the name code of the first header
        assertThrows(IllegalArgumentException.class, () -> StoredResponseCodec.decode(encoded));
    }

    @Test
    void statusOutOfRangeIsRefused() {
        byte[] encoded = StoredResponseCodec.encode(new StoredResponse(200, List.of(), new byte[0]));
        encoded[2] = 0;
        encoded[3] = 0;
        assertThrows(IllegalArgumentException.class, () -> StoredResponseCodec.decode(encoded));
    }

    @Test
    void corruptOrTruncatedCompressedBodyIsRefused() {
        byte[] encoded = StoredResponseCodec.encode(new StoredResponse(200, List.of(), tenKilobytesOfJson()));
        assertEquals(1, encoded[1], "the body is deflated");
        assertThrows(IllegalArgumentException.class,
                () -> StoredResponseCodec.decode(Arrays.copyOf(encoded, encoded.length - 10)));
        byte[] garbage = encoded.clone();
        Arrays.fill(garbage, 5, garbage.length, (byte) 0xff);
        assertThrows(IllegalArgumentException.class, () -> StoredResponseCodec.decode(garbage));
        byte[] flagged = StoredResponseCodec.encode(new StoredResponse(200, List.of(), "plain".getBytes()));
        flagged[1] = 1; // claims a deflated body that is not
        assertThrows(IllegalArgumentException.class, () -> StoredResponseCodec.decode(flagged));
    }

    @Test
    void randomCorruptionNeverThrowsAnythingButIllegalArgumentException() {
        byte[] encoded = StoredResponseCodec.encode(new StoredResponse(201,
                List.of(header("Content-Type", "application/json"), header("X-A", "b")), tenKilobytesOfJson()));
        Random random = new Random(42);
        for (int i = 0; i < 2_000; i++) {
            byte[] corrupt = encoded.clone();
            for (int flips = 1 + random.nextInt(4); flips > 0; flips--) {
                corrupt[random.nextInt(Math.min(corrupt.length, 64))] = (byte) random.nextInt(256);
            }
            try {
                StoredResponseCodec.decode(corrupt);
            } catch (IllegalArgumentException expected) {
                // refused: fine
            }
        }
    }

    @Test
    void moreThan255HeadersCannotBeEncoded() {
        List<StoredResponse.Header> headers = new ArrayList<>();
        for (int i = 0; i < 256; i++) {
            headers.add(header("X-" + i, "v"));
        }
        assertThrows(IllegalArgumentException.class,
                () -> StoredResponseCodec.encode(new StoredResponse(200, headers, new byte[0])));
        assertEquals(255, roundTrip(new StoredResponse(200, headers.subList(0, 255), new byte[0])).headers().size());
    }

    @Test
    void commonHeaderValuesTakeOneByte() {
        StoredResponse json = new StoredResponse(201, List.of(new StoredResponse.Header("Content-Type", "application/json")),
                new byte[100]);
        assertEquals(5 + 2 + 100, StoredResponseCodec.encode(json).length, "version, flags, status, count, name, value, body");
        assertEquals(json, StoredResponseCodec.decode(StoredResponseCodec.encode(json)));
    }
}
