package io.idemkey.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Payara Micro as a child process ({@code java -jar payara-micro.jar --deploy ...}). */
public final class PayaraMicroServer implements ServerProcess {

    private static final Duration STARTUP = Duration.ofSeconds(240);

    private final int port;
    private final Path log;
    private final Process process;

    private PayaraMicroServer(int port, Path log, Process process) {
        this.port = port;
        this.log = log;
        this.process = process;
    }

    static PayaraMicroServer start(List<Path> wars, int port, Map<String, String> systemProperties) {
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

    @Override
    public Kind kind() {
        return Kind.PAYARA;
    }

    @Override
    public URI uri(String context) {
        return URI.create("http://127.0.0.1:" + port + "/" + context + "/");
    }

    @Override
    public String log() {
        try {
            return Files.readString(log, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public Path logFile() {
        return log;
    }

    @Override
    public void await() throws InterruptedException {
        process.waitFor();
    }

    @Override
    public void kill() {
        process.destroyForcibly();
        try {
            process.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
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
            pause();
        }
        kill();
        throw new IllegalStateException("Payara Micro did not start within " + STARTUP + ":\n" + log());
    }

    static void pause() {
        try {
            Thread.sleep(200);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
