package io.idemkey.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * An Open Liberty server as a child process ({@code wlp/bin/server run}, which execs the JVM, so
 * killing the process kills the server). Each instance gets its own server directory in the
 * installation the build made ({@code liberty:create}), configured from {@code liberty/server.xml},
 * the one configuration the sample uses too, plus an override with its port and any extra features.
 */
public final class LibertyServer extends ChildProcessServer {

    private final List<String> applications;
    private final Path dropins;

    private LibertyServer(int port, List<String> applications, Path dropins) {
        super(port, newLog("open-liberty-"));
        this.applications = applications;
        this.dropins = dropins;
    }

    /** @param extraFeatures features to add to liberty/server.xml's (the test applications need appSecurity-5.0) */
    static LibertyServer start(List<Path> wars, int port, Map<String, String> systemProperties,
                               List<String> extraFeatures) {
        Path serverXml = Path.of(System.getProperty("liberty.serverXml", "../liberty/server.xml"));
        try {
            return start(wars, port, systemProperties, extraFeatures, Files.readString(serverXml), false, "", List.of());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** As {@link #start}, with more options for the server's JVM. */
    static LibertyServer startWithJvmOptions(List<String> jvmOptions, List<Path> wars, int port, List<String> extraFeatures) {
        Path serverXml = Path.of(System.getProperty("liberty.serverXml", "../liberty/server.xml"));
        try {
            return start(wars, port, Map.of(), extraFeatures, Files.readString(serverXml), false, "", jvmOptions);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** As {@link #start}, with more configuration in the override ({@code <dataSource>}, say). */
    static LibertyServer startWithConfig(List<Path> wars, int port, Map<String, String> systemProperties,
                                         List<String> extraFeatures, String extraConfig) {
        Path serverXml = Path.of(System.getProperty("liberty.serverXml", "../liberty/server.xml"));
        try {
            return start(wars, port, systemProperties, extraFeatures, Files.readString(serverXml), false, extraConfig, List.of());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * As {@link #start}, the applications declared in server.xml with third-party APIs visible, as
     * an application that uses the OpenTelemetry API must be on Open Liberty
     * ({@code <classloader apiTypeVisibility="+third-party"/>}).
     */
    static LibertyServer startWithThirdPartyApis(List<Path> wars, int port, List<String> extraFeatures) {
        Path serverXml = Path.of(System.getProperty("liberty.serverXml", "../liberty/server.xml"));
        try {
            return start(wars, port, Map.of(), extraFeatures, Files.readString(serverXml), true, "", List.of());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A server with exactly these features and nothing else of liberty/server.xml's. */
    static LibertyServer startWithExactly(List<String> features, List<Path> wars, int port) {
        return startWithExactly(features, "", wars, port);
    }

    /** As {@link #startWithExactly(List, List, int)}, with more configuration ({@code <mpMetrics .../>}). */
    static LibertyServer startWithExactly(List<String> features, String extraConfig, List<Path> wars, int port) {
        return start(wars, port, Map.of(), List.of(), "<server>\n  <featureManager>"
                + features.stream().map(f -> "<feature>" + f + "</feature>").collect(Collectors.joining())
                + "</featureManager>\n" + extraConfig + "\n"
                + "  <httpEndpoint id=\"defaultHttpEndpoint\" host=\"*\" httpPort=\"${http.port}\" httpsPort=\"${https.port}\"/>\n"
                + "  <applicationManager autoExpand=\"true\"/>\n"
                + "  <logging consoleLogLevel=\"INFO\"/>\n</server>\n", false, "", List.of());
    }

    private static LibertyServer start(List<Path> wars, int port, Map<String, String> systemProperties,
                                       List<String> extraFeatures, String serverXml, boolean thirdPartyApis,
                                       String extraConfig, List<String> jvmOptions) {
        Path wlp = Path.of(System.getProperty("liberty.wlpHome", "target/liberty/wlp"));
        if (!Files.isExecutable(wlp.resolve("bin/server"))) {
            throw new IllegalStateException("No Open Liberty at " + wlp.toAbsolutePath()
                    + ": run `mvn -f it-tests liberty:create` first");
        }
        String name = "idemkey-" + port;
        Path serverDirectory = wlp.resolve("usr/servers").resolve(name);
        try {
            Files.createDirectories(serverDirectory.resolve("configDropins/overrides"));
            Files.createDirectories(serverDirectory.resolve("dropins"));
            Files.writeString(serverDirectory.resolve("server.xml"), serverXml);
            StringBuilder applications = new StringBuilder();
            Files.createDirectories(serverDirectory.resolve("apps"));
            for (Path war : wars) {
                String file = war.getFileName().toString();
                Files.copy(war, serverDirectory.resolve(thirdPartyApis ? "apps" : "dropins").resolve(file),
                        StandardCopyOption.REPLACE_EXISTING);
                if (thirdPartyApis) {
                    applications.append("<webApplication location=\"").append(file).append("\" contextRoot=\"/")
                            .append(file.replaceFirst("\\.war$", ""))
                            .append("\"><classloader apiTypeVisibility=\"+third-party\"/></webApplication>");
                }
            }
            Files.writeString(serverDirectory.resolve("configDropins/overrides/process.xml"), """
                    <server>
                      <featureManager>%s</featureManager>
                      <variable name="http.port" value="%d"/>
                      <variable name="https.port" value="%d"/>
                      %s
                      %s
                    </server>
                    """.formatted(extraFeatures.stream().map(f -> "<feature>" + f + "</feature>").collect(Collectors.joining()),
                    port, ServerProcess.freePort(), applications, extraConfig));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        ProcessBuilder builder = new ProcessBuilder(wlp.resolve("bin/server").toString(), "run", name);
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        builder.environment().put("JVM_ARGS", Stream.of(ServerProcess.testJvmOptions().stream(), jvmOptions.stream(),
                systemProperties.entrySet().stream().map(e -> "-D" + e.getKey() + "=" + e.getValue()))
                .flatMap(options -> options).collect(Collectors.joining(" ")));
        LibertyServer server = new LibertyServer(port, wars.stream()
                .map(war -> war.getFileName().toString().replaceFirst("\\.war$", "")).toList(),
                serverDirectory.resolve("dropins"));
        server.start(builder, "Open Liberty");
        return server;
    }

    /** Copies a WAR into the running server's dropins and waits until it started (CWWKZ0001I). */
    @Override
    public void deploy(Path war) {
        copyIn(war, dropins, "CWWKZ0001I: Application " + war.getFileName().toString().replaceFirst("\\.war$", "") + " started");
    }

    /** Removes an application from the running server's dropins and waits until it stopped (CWWKZ0009I). */
    @Override
    public void undeploy(String application) {
        remove(dropins.resolve(application + ".war"), "CWWKZ0009I: The application " + application + " has stopped successfully");
    }

    /**
     * Ready (CWWKF0011I) and every application started (CWWKZ0001I) or failed (CWWKZ0002E,
     * CWWKZ0004E, or CWWKZ0012I where its CDI start-up threw a deployment error).
     */
    @Override
    boolean ready(String output) {
        return output.contains("CWWKF0011I") && applications.stream().allMatch(app ->
                output.contains("CWWKZ0001I: Application " + app + " started")
                        || output.contains("CWWKZ0012I: The application " + app + " was not started")
                        || output.matches("(?s).*CWWKZ000[24]E: [^\\n]*\\b" + Pattern.quote(app) + "\\b.*"));
    }

    @Override
    public Kind kind() {
        return Kind.LIBERTY;
    }
}
