package io.idemkey.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;

/** What both servers share as child processes: the port, the log file, waiting, killing. */
abstract class ChildProcessServer implements ServerProcess {

    private static final Duration STARTUP = Duration.ofSeconds(240);

    private final int port;
    private final Path log;
    private Process process;

    ChildProcessServer(int port, Path log) {
        this.port = port;
        this.log = log;
    }

    /** Starts the process (its output goes to the log) and waits until {@link #ready} says so. */
    final void start(ProcessBuilder builder, String name) {
        try {
            process = builder.redirectErrorStream(true).redirectOutput(log.toFile()).start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Runtime.getRuntime().addShutdownHook(new Thread(this::kill));
        Instant deadline = Instant.now().plus(STARTUP);
        while (Instant.now().isBefore(deadline)) {
            if (!process.isAlive()) {
                throw new IllegalStateException(name + " exited:\n" + log());
            }
            if (ready(log())) {
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
        throw new IllegalStateException(name + " did not start within " + STARTUP + ":\n" + log());
    }

    /** Copies a WAR into a directory the running server watches and waits until it logged {@code deployed}. */
    final void copyIn(Path war, Path directory, String deployed) {
        try {
            Files.copy(war, directory.resolve(war.getFileName()), StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        awaitLog(deployed);
    }

    /** Deletes a WAR from a directory the running server watches and waits until it logged {@code undeployed}. */
    final void remove(Path war, String undeployed) {
        try {
            Files.delete(war);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        awaitLog(undeployed);
    }

    /** Waits up to a minute until the server's output holds {@code line}. */
    final void awaitLog(String line) {
        Instant deadline = Instant.now().plus(Duration.ofSeconds(60));
        while (!log().contains(line)) {
            if (Instant.now().isAfter(deadline)) {
                throw new IllegalStateException("the server did not log \"" + line + "\" within 60 s:\n" + log());
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }

    /** Whether what the server printed says it is ready, every application started or failed. */
    abstract boolean ready(String output);

    static Path newLog(String prefix) {
        try {
            return Files.createTempFile(prefix, ".log");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public long pid() {
        return process.pid();
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
        if (process == null) {
            return;
        }
        process.destroyForcibly();
        try {
            process.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
