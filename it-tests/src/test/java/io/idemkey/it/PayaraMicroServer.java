package io.idemkey.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A Payara Micro process started by a test, for what Arquillian's managed container cannot show:
 * a deployment that fails (the container reports success), a server killed with {@code kill -9}.
 * Its output goes to a log file the test can read.
 */
public final class PayaraMicroServer implements AutoCloseable {

    private static final Duration STARTUP = Duration.ofSeconds(240);

    private final int port;
    private final Path log;
    private final Process process;

    private PayaraMicroServer(int port, Path log, Process process) {
        this.port = port;
        this.log = log;
        this.process = process;
    }

    /** Starts Payara Micro on a free port with these WARs deployed and waits until it says it is ready. */
    public static PayaraMicroServer start(List<Path> wars) {
        return start(wars, freePort(), Map.of());
    }

    /**
     * Starts Payara Micro with these WARs deployed and waits until it says it is ready.
     *
     * @param systemProperties for the server's JVM, such as {@code idempotency.redis.url}
     *                         (MicroProfile Config reads system properties)
     */
    public static PayaraMicroServer start(List<Path> wars, int port, Map<String, String> systemProperties) {
        String microJar = System.getProperty("payara.microJar", "target/payara-micro.jar");
        try {
            Path log = Files.createTempFile("payara-micro-", ".log");
            List<String> command = new ArrayList<>();
            command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            systemProperties.forEach((name, value) -> command.add("-D" + name + "=" + value));
            command.addAll(List.of("-jar", microJar, "--nocluster", "--port", Integer.toString(port)));
            for (Path war : wars) {
                command.add("--deploy");
                command.add(war.toString());
            }
            Process process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(log.toFile()).start();
            PayaraMicroServer server = new PayaraMicroServer(port, log, process);
            Runtime.getRuntime().addShutdownHook(new Thread(server::kill));
            server.awaitReady();
            return server;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public Path logFile() {
        return log;
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** Waits until the process ends (the sample runs until it is stopped). */
    public void await() throws InterruptedException {
        process.waitFor();
    }

    public URI uri(String context) {
        return URI.create("http://127.0.0.1:" + port + "/" + context + "/");
    }

    /** Everything the server printed so far. */
    public String log() {
        try {
            return Files.readString(log, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Kills the process at once, as {@code kill -9} would. */
    public void kill() {
        process.destroyForcibly();
        try {
            process.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        kill();
    }

    private void awaitReady() {
        Instant deadline = Instant.now().plus(STARTUP);
        while (Instant.now().isBefore(deadline)) {
            if (!process.isAlive()) {
                throw new IllegalStateException("Payara Micro exited:\n" + log());
            }
            if (log().matches("(?s).*Payara Micro .* ready in .*")) {
                return;
            }
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        kill();
        throw new IllegalStateException("Payara Micro did not start within " + STARTUP + ":\n" + log());
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
