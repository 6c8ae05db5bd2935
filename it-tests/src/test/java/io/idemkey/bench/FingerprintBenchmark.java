package io.idemkey.bench;

import io.idemkey.core.Fingerprint;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/** What fingerprinting a JSON body costs (parse, drop excluded fields, write canonically, SHA-256). */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class FingerprintBenchmark {

    @Param({"1024", "102400", "1048576"})
    public int bytes;

    private final Fingerprint fingerprint = new Fingerprint();
    private byte[] body;

    @Setup
    public void body() {
        body = json(bytes);
    }

    @Benchmark
    public byte[] fingerprint() {
        return fingerprint.of("POST", "/orders", List.of(), true, body, Set.of("clienttimestamp", "requestnonce"));
    }

    /** An order-like JSON document of about {@code size} bytes. */
    static byte[] json(int size) {
        StringBuilder json = new StringBuilder("{\"clientTimestamp\":\"2026-11-22T10:15:30Z\",\"items\":[");
        for (int i = 0; json.length() < size - 40; i++) {
            json.append(i == 0 ? "" : ",").append("{\"sku\":\"SKU-").append(10_000 + i)
                    .append("\",\"quantity\":").append(1 + i % 5).append(",\"price\":").append(499 + i * 7)
                    .append(".5,\"requestNonce\":\"n").append(i).append("\",\"name\":\"Article ").append(i).append("\"}");
        }
        return json.append("],\"total\":1}").toString().getBytes(StandardCharsets.UTF_8);
    }
}
