package io.idemkey.it;

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

    /** @param options more command-line options ({@code --addLibs driver.jar}) */
    static PayaraMicroServer start(List<Path> wars, int port, Map<String, String> systemProperties, List<String> options) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(ServerProcess.testJvmOptions());
        systemProperties.forEach((name, value) -> command.add("-D" + name + "=" + value));
        command.addAll(List.of("-jar", System.getProperty("payara.microJar", "target/payara-micro.jar"),
                "--nocluster", "--port", Integer.toString(port)));
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
