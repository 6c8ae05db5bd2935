package io.idemkey.it;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Payara Micro as a child process ({@code java -jar payara-micro.jar --deploy ...}). */
public final class PayaraMicroServer extends ChildProcessServer {

    private PayaraMicroServer(int port) {
        super(port, newLog("payara-micro-"));
    }

    static PayaraMicroServer start(List<Path> wars, int port, Map<String, String> systemProperties) {
        return start(wars, port, systemProperties, List.of());
    }

    /**
     * The Payara Micro of this run ({@code -Dpayara.microJar}) on the test JVM's Java.
     *
     * @param options more command-line options ({@code --addLibs driver.jar})
     */
    static PayaraMicroServer start(List<Path> wars, int port, Map<String, String> systemProperties, List<String> options) {
        return start(Path.of(System.getProperty("java.home")), Path.of(System.getProperty("payara.microJar", "target/payara-micro.jar")),
                wars, port, systemProperties, options);
    }

    /**
     * Payara Micro 7 (Jakarta EE 11) beside a server of another kind, from an execution whose own JVM
     * may be too old for it: the jar {@code -Dpayara7.microJar} on the JDK {@code -Dpayara7.javaHome}
     * (21 or newer), as the build's {@code payara7} execution runs it.
     */
    static PayaraMicroServer startPayara7(List<Path> wars, int port) {
        String javaHome = System.getProperty("payara7.javaHome");
        String jar = System.getProperty("payara7.microJar");
        if (javaHome == null || jar == null) {
            throw new IllegalStateException("-Dpayara7.javaHome and -Dpayara7.microJar are not set: run in a failsafe execution that sets them");
        }
        if (!Files.isRegularFile(Path.of(jar)) || !Files.isExecutable(Path.of(javaHome, "bin", "java"))) {
            throw new IllegalStateException("Payara Micro 7 is not here (" + jar + " on " + javaHome + ")");
        }
        return start(Path.of(javaHome), Path.of(jar), wars, port, Map.of(), List.of());
    }

    private static PayaraMicroServer start(Path javaHome, Path jar, List<Path> wars, int port, Map<String, String> systemProperties,
                                           List<String> options) {
        List<String> command = new ArrayList<>();
        command.add(javaHome.resolve("bin").resolve("java").toString());
        command.addAll(ServerProcess.testJvmOptions());
        systemProperties.forEach((name, value) -> command.add("-D" + name + "=" + value));
        command.addAll(List.of("-jar", jar.toString(), "--nocluster", "--port", Integer.toString(port)));
        command.addAll(options);
        for (Path war : wars) {
            command.add("--deploy");
            command.add(war.toString());
        }
        PayaraMicroServer server = new PayaraMicroServer(port);
        server.start(new ProcessBuilder(command), "Payara Micro");
        return server;
    }

    @Override
    boolean ready(String output) {
        return output.matches("(?s).*Payara Micro .* ready in .*");
    }

    @Override
    public Kind kind() {
        return Kind.PAYARA;
    }
}
