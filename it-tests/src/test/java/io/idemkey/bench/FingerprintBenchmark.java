package io.idemkey.bench;

import io.idemkey.core.Fingerprint;
import io.idemkey.core.FingerprintBenchmarkBodies;
import jakarta.json.spi.JsonProvider;
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

/**
 * What fingerprinting a JSON body costs (parse, drop excluded fields, write canonically, SHA-256), with
 * the byte tokenizer (the default) and through JSON-P (the reference path), in the same run.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class FingerprintBenchmark {

    @Param({"1024", "102400", "1048576"})
    public int bytes;

    @Param({"bytes", "json-p"})
    public String parser;

    private Fingerprint fingerprint;
    private byte[] body;

    @Setup
    public void body() {
        fingerprint = parser.equals("json-p") ? new Fingerprint(JsonProvider.provider()) : new Fingerprint();
        body = FingerprintBenchmarkBodies.order(bytes).getBytes(StandardCharsets.UTF_8);
    }

    @Benchmark
    public byte[] fingerprint() {
        return fingerprint.of("POST", "/orders", List.of(), true, body, Set.of("clienttimestamp", "requestnonce"));
    }
}
