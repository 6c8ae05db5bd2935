package io.idemkey.it;

import io.idemkey.it.app.TestApplication;
import io.idemkey.it.jpa.JpaApplication;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.exporter.ZipExporter;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.jboss.shrinkwrap.resolver.api.maven.Maven;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;

/** Builds the test WARs: the test application, Idemkey and its dependencies, and a configuration. */
public final class Deployments {

    /** A Redis URL nothing answers on (port 1): for deployments that must not, or cannot, reach Redis. */
    public static final String UNREACHABLE_REDIS = "redis://127.0.0.1:1";

    private Deployments() {
    }

    /** The test application against the shared test Redis, with extra configuration. */
    public static WebArchive guardedApp(String name, Map<String, String> extraConfig) {
        Map<String, String> config = new LinkedHashMap<>();
        config.put("idempotency.redis.url", TestRedis.get().url());
        config.put("idempotency.redis.connect-timeout-ms", "500");
        config.put("idempotency.redis.read-timeout-ms", "500");
        config.put("io.idemkey.it.app.GuardedResource/slow/IdempotencyKey/lockTtlSeconds", "1");
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
                .addAsResource("jpa/persistence.xml", "META-INF/persistence.xml")
                .addAsResource(new StringAsset(properties(config)), "META-INF/microprofile-config.properties")
                .addAsLibraries(libraries());
    }

    /** Idemkey and its dependencies, as an application bundles them. */
    public static java.io.File[] libraries() {
        return Maven.resolver().loadPomFromFile(System.getProperty("it.pom", "pom.xml"))
                .importCompileAndRuntimeDependencies().resolve().withTransitivity().asFile();
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
