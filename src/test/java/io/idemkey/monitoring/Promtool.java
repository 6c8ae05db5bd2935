package io.idemkey.monitoring;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Prometheus's {@code promtool} (Debian's {@code prometheus} package; it-tests/install-prerequisites installs it). */
final class Promtool {

    record Result(int exitCode, String output) {
    }

    private Promtool() {
    }

    static Result run(Path directory, String... arguments) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(executable());
        command.addAll(List.of(arguments));
        Process process = new ProcessBuilder(command).directory(directory.toFile()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("promtool " + String.join(" ", arguments) + " ran for more than 60 s:\n" + output);
        }
        return new Result(process.exitValue(), output);
    }

    private static String executable() {
        for (String directory : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path candidate = Path.of(directory, "promtool");
            if (Files.isExecutable(candidate)) {
                return candidate.toString();
            }
        }
        throw new AssertionError("promtool is not on the PATH: run it-tests/install-prerequisites (it installs"
                + " Debian's prometheus package), or install Prometheus's promtool, then run the tests again");
    }
}
