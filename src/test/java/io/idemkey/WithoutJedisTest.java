package io.idemkey;

import org.junit.jupiter.api.Test;

import java.io.File;
import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An application that uses another store than Redis may leave Jedis out of its WAR (docs/getting-started.md shows
 * the {@code <exclusions>}): every class of the library but the Redis store's loads, links and
 * shows its members (as CDI does with a bean class) on a class path without Jedis, and the settings
 * of the JDBC and memory stores are read and printed. The deployments that prove it on the servers:
 * the it-tests' JDBC ITs, whose WAR is built without Jedis.
 */
class WithoutJedisTest {

    @Test
    void everyClassButTheRedisStoresLoadsWithoutJedis() throws Exception {
        List<String> failures = new ArrayList<>();
        int loaded = 0;
        ClassLoader context = Thread.currentThread().getContextClassLoader();
        try (URLClassLoader withoutJedis = classPathWithoutJedis()) {
            // as on a server: service providers (JSON-P's) are found through the application's loader
            Thread.currentThread().setContextClassLoader(withoutJedis);
            for (String name : libraryClasses()) {
                if (name.startsWith("io.idemkey.store.redis.")) {
                    continue;
                }
                try {
                    Class<?> type = Class.forName(name, true, withoutJedis);
                    type.getDeclaredMethods();
                    type.getDeclaredFields();
                    type.getDeclaredConstructors();
                    type.getGenericInterfaces();
                    type.getRecordComponents();
                    loaded++;
                } catch (LinkageError | ClassNotFoundException e) {
                    failures.add(name + ": " + e);
                }
            }
        } finally {
            Thread.currentThread().setContextClassLoader(context);
        }
        assertEquals(List.of(), failures);
        assertTrue(loaded > 100, loaded + " classes loaded");
    }

    @Test
    void theJdbcAndMemoryStoresSettingsAreReadWithoutJedis() throws Exception {
        try (URLClassLoader withoutJedis = classPathWithoutJedis()) {
            for (Map<String, String> values : List.of(
                    Map.of("idempotency.store", "jdbc", "idempotency.jdbc.datasource", "jdbc/orders"),
                    Map.of("idempotency.store", "memory"))) {
                Class<?> lookup = Class.forName("io.idemkey.config.ConfigLookup", true, withoutJedis);
                Object config = lookup.getMethod("of", Map.class).invoke(null, values);
                Class<?> settingsType = Class.forName("io.idemkey.config.IdempotencySettings", true, withoutJedis);
                Object settings = settingsType.getMethod("from", lookup).invoke(null, config);
                String printed = settings.toString(); // as the runtime logs them at start
                assertTrue(printed.contains(values.get("idempotency.store").toUpperCase()), printed);
                assertEquals(settings.hashCode(), settingsType.getMethod("from", lookup).invoke(null, config).hashCode());
                Class<?> resolver = Class.forName("io.idemkey.config.PolicyResolver", true, withoutJedis);
                resolver.getConstructor(lookup, settingsType).newInstance(config, settings);
            }
        }
    }

    @Test
    void theRedisStoreWithoutJedisIsAConfigurationErrorNamingTheStoreProperty() throws Exception {
        try (URLClassLoader withoutJedis = classPathWithoutJedis()) {
            Class<?> lookup = Class.forName("io.idemkey.config.ConfigLookup", true, withoutJedis);
            Object config = lookup.getMethod("of", Map.class).invoke(null, Map.of("idempotency.redis.url", "redis://127.0.0.1:6379"));
            Class<?> settingsType = Class.forName("io.idemkey.config.IdempotencySettings", true, withoutJedis);
            java.lang.reflect.InvocationTargetException thrown = assertThrows(java.lang.reflect.InvocationTargetException.class,
                    () -> settingsType.getMethod("from", lookup).invoke(null, config));
            assertEquals("io.idemkey.config.ConfigurationException", thrown.getCause().getClass().getName(), thrown.getCause().toString());
            assertTrue(thrown.getCause().getMessage().contains("idempotency.store is redis (the default), but the application has no Redis client"),
                    thrown.getCause().getMessage());
        }
    }

    @Test
    void theClassPathOfTheseTestsReallyLacksJedis() throws Exception {
        // the two tests above would pass on a class path that still had Jedis
        try (URLClassLoader withoutJedis = classPathWithoutJedis()) {
            assertThrows(ClassNotFoundException.class, () -> Class.forName("redis.clients.jedis.UnifiedJedis", false, withoutJedis));
            assertThrows(NoClassDefFoundError.class,
                    () -> Class.forName("io.idemkey.store.redis.RedisIdempotencyStore", true, withoutJedis).getDeclaredMethods());
        }
    }

    /** This test's class path without the Jedis jar; the JDK's own modules come from the platform loader. */
    private static URLClassLoader classPathWithoutJedis() throws IOException {
        List<URL> urls = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            Path path = Path.of(entry);
            if (!path.getFileName().toString().startsWith("jedis-")) {
                urls.add(path.toUri().toURL());
            }
        }
        assertFalse(urls.isEmpty());
        return new URLClassLoader("without-jedis", urls.toArray(URL[]::new), ClassLoader.getPlatformClassLoader());
    }

    /** The names of the library's classes (target/classes). */
    private static List<String> libraryClasses() throws Exception {
        Path classes = Path.of(Idempotent.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        try (Stream<Path> files = Files.walk(classes)) {
            return files.map(classes::relativize).map(Path::toString)
                    .filter(f -> f.endsWith(".class") && !f.endsWith("package-info.class") && !f.equals("module-info.class"))
                    .map(f -> f.substring(0, f.length() - ".class".length()).replace(File.separatorChar, '.'))
                    .sorted().toList();
        }
    }
}
