package io.idemkey.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * WildFly as a child process, started from the distribution the build unpacked ({@code wildfly.home})
 * the way its users start it: {@code bin/standalone.sh -c standalone-microprofile.xml}, here with a
 * server directory of its own ({@code jboss.server.base.dir}: a copy of the stock configuration) and
 * every port shifted so that its HTTP port is the one asked for ({@code jboss.socket.binding.port-offset}).
 * The WARs are copied into its {@code deployments} directory before it boots (context root = file
 * name), or, after {@code jboss-cli} commands that must come first (a datasource), deployed with
 * {@code jboss-cli} as well. Started again on a port where one ran with the same set-up (a server
 * that crashed, restarted), it boots its server directory again, configuration and deployments
 * included, as a restarted installation does. {@code standalone.sh} runs the JVM as its child:
 * killing the server kills that JVM.
 */
public final class WildFlyServer extends ChildProcessServer {

    private static final int HTTP_PORT = 8080;
    private static final int MANAGEMENT_PORT = 9990;
    /** What {@code bin/standalone.conf} sets when {@code JAVA_OPTS} is not set. */
    private static final String DEFAULT_JAVA_OPTS = "-Xms64m -Xmx512m -Djava.net.preferIPv4Stack=true"
            + " -Djboss.modules.system.pkgs=org.jboss.byteman -Djava.awt.headless=true";

    /** The server directory last used on a port, and what it was set up with: a restart there boots it again. */
    private static final Map<Integer, Path> RAN_BEFORE = new ConcurrentHashMap<>();
    private static final Map<Path, Setup> SETUPS = new ConcurrentHashMap<>();

    private record Setup(List<Path> wars, List<String> cli) {
    }

    private final int offset;
    private Path deployments;

    private WildFlyServer(int port) {
        super(port, newLog("wildfly-"));
        if (port < HTTP_PORT || port - HTTP_PORT + 9993 > 65535) {
            throw new IllegalArgumentException("no WildFly port offset puts HTTP on " + port);
        }
        this.offset = port - HTTP_PORT;
    }

    static WildFlyServer start(List<Path> wars, int port, Map<String, String> systemProperties) {
        return start(wars, port, systemProperties, List.of());
    }

    /**
     * @param cli {@code jboss-cli} commands run once the server is up, before the WARs are deployed
     *            (then with {@code deploy}, which fails if a deployment does); none: the WARs are in
     *            the deployments directory when it boots
     */
    static WildFlyServer start(List<Path> wars, int port, Map<String, String> systemProperties, List<String> cli) {
        return start(List.of(), wars, port, systemProperties, cli);
    }

    /** As {@link #start(List, int, Map)}, with more options for the server's JVM. */
    static WildFlyServer startWithJvmOptions(List<String> jvmOptions, List<Path> wars, int port) {
        return start(jvmOptions, wars, port, Map.of(), List.of());
    }

    private static WildFlyServer start(List<String> jvmOptions, List<Path> wars, int port, Map<String, String> systemProperties,
                                       List<String> cli) {
        Path home = home();
        WildFlyServer server = new WildFlyServer(port);
        Setup setup = new Setup(List.copyOf(wars), List.copyOf(cli));
        Path before = RAN_BEFORE.get(port);
        boolean restart = before != null && setup.equals(SETUPS.get(before));
        Path base = before;
        try {
            if (!restart) {
                base = Files.createTempDirectory("idemkey-wildfly-");
                setUp(home, base, wars, cli);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<String> command = new ArrayList<>(List.of(home.resolve("bin/standalone.sh").toString(),
                "-c", "standalone-microprofile.xml", "-Djboss.server.base.dir=" + base,
                "-Djboss.socket.binding.port-offset=" + server.offset));
        systemProperties.forEach((name, value) -> command.add("-D" + name + "=" + value));
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().remove("LAUNCH_JBOSS_IN_BACKGROUND");
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        builder.environment().put("JAVA_OPTS", (DEFAULT_JAVA_OPTS + " " + String.join(" ", ServerProcess.testJvmOptions())
                + " " + String.join(" ", jvmOptions)).strip());
        server.deployments = base.resolve("deployments");
        server.start(builder, "WildFly");
        if (!restart && !cli.isEmpty()) {
            List<String> commands = new ArrayList<>(cli);
            wars.forEach(war -> commands.add("deploy " + war.toAbsolutePath()));
            try {
                server.cli(commands);
            } catch (RuntimeException e) {
                server.kill();
                throw e;
            }
        }
        RAN_BEFORE.put(port, base);
        SETUPS.put(base, setup);
        return server;
    }

    /**
     * A new server directory: the stock configuration, the WARs in its deployments directory unless
     * jboss-cli deploys them. The configuration is copied without its {@code <deployments>}: while
     * the execution's Arquillian-managed server runs from the same distribution, its configuration
     * lists what Arquillian deployed, whose content is in that server's own data directory only (a
     * server booted from a copy that lists it exits: "WFLYSRV0137: No deployment content with hash").
     */
    private static void setUp(Path home, Path base, List<Path> wars, List<String> cli) throws IOException {
        copyTree(home.resolve("standalone/configuration"), base.resolve("configuration"));
        Path configuration = base.resolve("configuration/standalone-microprofile.xml");
        Files.writeString(configuration, Files.readString(configuration).replaceAll("(?s)\\s*<deployments>.*?</deployments>", ""));
        Files.createDirectories(base.resolve("deployments"));
        if (cli.isEmpty()) {
            for (Path war : wars) {
                Files.copy(war, base.resolve("deployments").resolve(war.getFileName()));
            }
        }
    }

    /** Copies a WAR into the running server's deployments directory and waits until its scanner deployed it (WFLYSRV0010I). */
    @Override
    public void deploy(Path war) {
        copyIn(war, deployments, "Deployed \"" + war.getFileName() + "\"");
    }

    /** Removes a WAR from the running server's deployments directory and waits until it was undeployed (WFLYSRV0009I). */
    @Override
    public void undeploy(String application) {
        remove(deployments.resolve(application + ".war"), "Undeployed \"" + application + ".war\"");
    }

    /** The unpacked distribution ({@code -Dwildfly.home}, set by the failsafe execution). */
    static Path home() {
        String home = System.getProperty("wildfly.home");
        if (home == null) {
            throw new IllegalStateException("-Dwildfly.home is not set: run in the wildfly failsafe execution");
        }
        return Path.of(home);
    }

    /** A path on the management interface ({@code /prometheus}, {@code /health}). */
    URI management(String path) {
        return URI.create("http://127.0.0.1:" + (MANAGEMENT_PORT + offset) + path);
    }

    /** Runs {@code jboss-cli} against this server, as an administrator would; fails unless every command succeeded. */
    void cli(List<String> commands) {
        try {
            Path script = Files.createTempFile("idemkey-wildfly-", ".cli");
            Files.write(script, commands);
            Path log = Files.createTempFile("idemkey-wildfly-cli-", ".log");
            ProcessBuilder builder = new ProcessBuilder(home().resolve("bin/jboss-cli.sh").toString(), "--connect",
                    "--controller=remote+http://127.0.0.1:" + (MANAGEMENT_PORT + offset), "--file=" + script)
                    .redirectErrorStream(true).redirectOutput(log.toFile());
            builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
            Process process = builder.start();
            if (!process.waitFor(180, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException("jboss-cli did not finish: " + Files.readString(log));
            }
            if (process.exitValue() != 0) {
                throw new IllegalStateException("jboss-cli failed (" + process.exitValue() + "): " + Files.readString(log)
                        + "\nserver log: " + logFile());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path file : (Iterable<Path>) files::iterator) {
                Path target = to.resolve(from.relativize(file).toString());
                if (Files.isDirectory(file)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(file, target, StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
        }
    }

    @Override
    boolean ready(String output) {
        // WFLYSRV0025: started; WFLYSRV0026: started (with errors), a deployment failed
        return output.contains("WFLYSRV0025") || output.contains("WFLYSRV0026");
    }

    /** The server's JVM (standalone.sh's child). */
    @Override
    public long pid() {
        long script = super.pid();
        return ProcessHandle.of(script).flatMap(handle -> handle.children().findFirst()).map(ProcessHandle::pid)
                .orElse(script);
    }

    @Override
    public void kill() {
        List<ProcessHandle> jvm = ProcessHandle.of(super.pid()).map(script -> script.descendants().toList()).orElse(List.of());
        jvm.forEach(ProcessHandle::destroyForcibly);
        jvm.forEach(process -> process.onExit().join()); // its ports are free once kill() returns
        super.kill();
    }

    @Override
    public Kind kind() {
        return Kind.WILDFLY;
    }
}
