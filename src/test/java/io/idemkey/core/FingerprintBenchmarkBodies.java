package io.idemkey.core;

/** Order-like JSON documents of a given size, as the benchmark fingerprints them (and the golden values pin one). */
public final class FingerprintBenchmarkBodies {

    private FingerprintBenchmarkBodies() {
    }

    /** An order-like JSON document of about {@code size} bytes. */
    public static String order(int size) {
        StringBuilder json = new StringBuilder("{\"clientTimestamp\":\"2026-11-22T10:15:30Z\",\"items\":[");
        for (int i = 0; json.length() < size - 40; i++) {
            json.append(i == 0 ? "" : ",").append("{\"sku\":\"SKU-").append(10_000 + i)
                    .append("\",\"quantity\":").append(1 + i % 5).append(",\"price\":").append(499 + i * 7)
                    .append(".5,\"requestNonce\":\"n").append(i).append("\",\"name\":\"Article ").append(i).append("\"}");
        }
        return json.append("],\"total\":1}").toString();
    }
}
