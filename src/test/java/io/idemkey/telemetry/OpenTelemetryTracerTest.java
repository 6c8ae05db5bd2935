package io.idemkey.telemetry;

import io.idemkey.core.RequestTracer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import java.lang.reflect.InvocationTargetException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The tracer meets the OpenTelemetry API it finds on the server: with the one it was compiled
 * against it is made and, with no span recording, adds nothing; with an API that lacks a method a
 * request would call, making it fails (where Idemkey's start-up steps aside with one log line), so
 * that no request ever meets a linkage error.
 */
class OpenTelemetryTracerTest {

    @Test
    void withTheApiItWasCompiledAgainstItIsMadeAndTracesNothingWhileNoSpanRecords() {
        RequestTracer tracer = new OpenTelemetryTracer();
        tracer.decided("acquired", false); // Span.current() is the invalid span here: ignored
    }

    @Test
    void anApiLackingAMethodARequestCallsFailsTheTracersCreationNotARequest(@TempDir Path directory) throws Exception {
        // an OpenTelemetry API whose Span has no setAttribute(String, boolean)
        Path source = Files.createDirectories(directory.resolve("src/io/opentelemetry/api/trace")).resolve("Span.java");
        Files.writeString(source, """
                package io.opentelemetry.api.trace;
                public interface Span {
                    Span INVALID = new Span() {
                        public boolean isRecording() { return false; }
                        public Span setAttribute(String key, String value) { return this; }
                    };
                    static Span current() { return INVALID; }
                    static Span getInvalid() { return INVALID; }
                    boolean isRecording();
                    Span setAttribute(String key, String value);
                }
                """);
        Path classes = Files.createDirectories(directory.resolve("classes"));
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertEquals(0, javac.run(null, null, null, "-d", classes.toString(), source.toString()));
        URL library = OpenTelemetryTracer.class.getProtectionDomain().getCodeSource().getLocation();
        try (URLClassLoader otherApi = new URLClassLoader("other-opentelemetry-api",
                new URL[] {classes.toUri().toURL(), library}, ClassLoader.getPlatformClassLoader())) {
            Class<?> tracer = Class.forName(OpenTelemetryTracer.class.getName(), true, otherApi);
            assertEquals(otherApi, Class.forName("io.opentelemetry.api.trace.Span", false, otherApi).getClassLoader());

            InvocationTargetException thrown = assertThrows(InvocationTargetException.class,
                    () -> tracer.getConstructor().newInstance());

            NoSuchMethodError missing = assertInstanceOf(NoSuchMethodError.class, thrown.getCause());
            assertTrue(missing.getMessage().contains("setAttribute"), missing.getMessage());
        }
    }
}
