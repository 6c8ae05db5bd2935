package io.idemkey.it;

import io.idemkey.it.app.TestApplication;
import io.idemkey.it.jpa.JpaApplication;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.exporter.ZipExporter;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.jboss.shrinkwrap.resolver.api.maven.Maven;

import java.nio.file.Path;
import java.util.List;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;

/** Builds the test WARs: the test application, Idemkey and its dependencies, and a configuration. */
public final class Deployments {

    /** A Redis URL nothing answers on (port 1): for deployments that must not, or cannot, reach Redis. */
    public static final String UNREACHABLE_REDIS = "redis://127.0.0.1:1";

    /** {@link #libraries()}, once resolved. */
    private static java.io.File[] libraries;

    /** The configuration property of {@code guarded/slow}'s lease: 1 s in the test application. */
    public static final String SLOW_LEASE = "io.idemkey.it.app.GuardedResource/slow/IdempotencyKey/lockTtlSeconds";

    private Deployments() {
    }

    /** The test application against the shared test Redis, with extra configuration. */
    public static WebArchive guardedApp(String name, Map<String, String> extraConfig) {
        Map<String, String> config = new LinkedHashMap<>();
        config.put("idempotency.redis.url", TestRedis.get().url());
        config.put("idempotency.redis.connect-timeout-ms", "500");
        config.put("idempotency.redis.read-timeout-ms", "500");
        config.put(SLOW_LEASE, "1");
        config.putAll(extraConfig);
        return ShrinkWrap.create(WebArchive.class, name + ".war")
                .addPackage(TestApplication.class.getPackage())
                .addAsResource(new StringAsset(properties(config)), "META-INF/microprofile-config.properties")
                .addAsLibraries(libraries());
    }

    /**
     * The JPA test application ({@code io.idemkey.it.jpa}): entities persisted through a JTA
     * persistence unit on {@code jdbc/idemkey}, guarded with the JDBC store on the same DataSource.
     */
    public static WebArchive jpaApp(String name) {
        Map<String, String> config = new LinkedHashMap<>();
        config.put("idempotency.store", "jdbc");
        config.put("idempotency.jdbc.datasource", "jdbc/idemkey");
        return ShrinkWrap.create(WebArchive.class, name + ".war")
                .addPackage(JpaApplication.class.getPackage())
                .addClass(io.idemkey.it.app.HaltAfterCommit.class)
                .addAsResource("jpa/persistence.xml", "META-INF/persistence.xml")
                .addAsResource(new StringAsset(properties(config)), "META-INF/microprofile-config.properties")
                .addAsLibraries(libraries());
    }

    /**
     * The test application as an application that uses only the JDBC store builds it: Idemkey with
     * Jedis excluded ({@code src/test/resources/jdbc-only-app/pom.xml}, getting-started's
     * {@code <exclusions>}), and none of the test application's own Redis classes (the chaos ledger,
     * the benchmark's store, the benchmark floor's client: the bench resource's round-trip endpoints
     * would throw {@code NoClassDefFoundError} there, and nothing calls them).
     */
    public static WebArchive jdbcOnlyApp(String name, Map<String, String> config) {
        java.io.File[] libraries = jdbcOnlyLibraries();
        WebArchive war = ShrinkWrap.create(WebArchive.class, name + ".war")
                .addPackage(TestApplication.class.getPackage())
                .deleteClasses(io.idemkey.it.app.Ledger.class, io.idemkey.it.app.ChaosResource.class,
                        io.idemkey.it.app.CheckThenLockStore.class, io.idemkey.it.app.PlainRedis.class)
                .addAsResource(new StringAsset(properties(config)), "META-INF/microprofile-config.properties")
                .addAsLibraries(libraries);
        List<String> redis = war.getContent().keySet().stream().map(Object::toString)
                .filter(path -> path.contains("jedis") || path.contains("commons-pool2")
                        || path.contains("/it/app/Ledger") || path.contains("CheckThenLockStore")
                        || path.contains("/it/app/PlainRedis"))
                .toList();
        if (!redis.isEmpty() || java.util.Arrays.stream(libraries).noneMatch(f -> f.getName().startsWith("idemkey-"))) {
            throw new IllegalStateException("the JDBC-only WAR must carry Idemkey and no Redis client: " + redis);
        }
        return war;
    }

    /** Idemkey's jar and what it needs without Jedis, resolved from the JDBC-only application's pom. */
    public static synchronized java.io.File[] jdbcOnlyLibraries() { // one Maven resolution at a time, as libraries()
        try (java.io.InputStream in = Deployments.class.getResourceAsStream("/jdbc-only-app/pom.xml")) {
            String version = System.getProperty("idemkey.version");
            if (version == null) {
                throw new IllegalStateException("the system property idemkey.version is missing (it-tests/pom.xml sets it)");
            }
            Path pom = java.nio.file.Files.createTempDirectory("jdbc-only-app").resolve("pom.xml");
            java.nio.file.Files.writeString(pom, new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8)
                    .replace("${idemkey.version}", version));
            return Maven.resolver().loadPomFromFile(pom.toFile())
                    .importCompileAndRuntimeDependencies().resolve().withTransitivity().asFile();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /**
     * Idemkey and its dependencies, as an application bundles them: resolved once per test JVM (a
     * transitive resolve of the pom each time cost every WAR the same second or two).
     */
    public static synchronized java.io.File[] libraries() {
        if (libraries == null) {
            libraries = Maven.resolver().loadPomFromFile(System.getProperty("it.pom", "pom.xml"))
                    .importCompileAndRuntimeDependencies().resolve().withTransitivity().asFile();
        }
        return libraries.clone();
    }

    /** Writes the WAR into the directory, for a server a test starts itself; returns its file. */
    public static Path export(Path directory, WebArchive war) {
        Path file = directory.resolve(war.getName());
        war.as(ZipExporter.class).exportTo(file.toFile(), true);
        return file;
    }

    static String properties(Map<String, String> config) {
        return config.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining("\n", "", "\n"));
    }
}
