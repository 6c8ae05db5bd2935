package io.idemkey.core;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A response as recorded for replay: status, the replayable headers (in order, a name may repeat)
 * and the exact body bytes the client received. Immutable.
 */
public final class StoredResponse {

    /** One header line. */
    public record Header(String name, String value) {
        public Header {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(value, "value");
        }
    }

    private final int status;
    private final List<Header> headers;
    private final byte[] body;

    public StoredResponse(int status, List<Header> headers, byte[] body) {
        if (status < 100 || status > 999) {
            throw new IllegalArgumentException("HTTP status out of range: " + status);
        }
        this.status = status;
        this.headers = List.copyOf(headers);
        this.body = body.clone();
    }

    public int status() {
        return status;
    }

    public List<Header> headers() {
        return headers;
    }

    /** The first value of the named header (case-insensitive), if present. */
    public Optional<String> header(String name) {
        return headers.stream().filter(h -> h.name().equalsIgnoreCase(name)).map(Header::value).findFirst();
    }

    /** A copy of the body bytes. */
    public byte[] body() {
        return body.clone();
    }

    public int bodyLength() {
        return body.length;
    }

    /**
     * Whether a client could tell the two apart: the same status and body, and for each header name
     * (case-insensitive) the same values in the same order. The order between different names means
     * nothing in HTTP, so it is not compared.
     */
    public boolean sameToClient(StoredResponse other) {
        return status == other.status && Arrays.equals(body, other.body) && byName(headers).equals(byName(other.headers));
    }

    private static Map<String, List<String>> byName(List<Header> headers) {
        Map<String, List<String>> byName = new HashMap<>();
        for (Header header : headers) {
            byName.computeIfAbsent(header.name().toLowerCase(Locale.ROOT), name -> new ArrayList<>())
                    .add(header.value());
        }
        return byName;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof StoredResponse other
                && status == other.status
                && headers.equals(other.headers)
                && Arrays.equals(body, other.body);
    }

    @Override
    public int hashCode() {
        return 31 * (31 * status + headers.hashCode()) + Arrays.hashCode(body);
    }

    @Override
    public String toString() {
        return "StoredResponse[status=" + status + ", headers=" + headers + ", body=" + body.length + " bytes]";
    }
}
