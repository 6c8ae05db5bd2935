package io.idemkey.store.redis;

import io.idemkey.config.ConfigLookup;
import io.idemkey.config.IdempotencySettings;
import io.idemkey.spi.AcquireResult;
import io.idemkey.spi.StoreUnavailableException;
import io.idemkey.testing.TlsRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Redis over TLS ({@code rediss://}, a certificate authority made by the test) with an ACL user and
 * password from the configuration; no secret ever reaches an error message.
 */
class RedisTlsTest {

    private static final String PASSWORD = "s3cret-Passw0rd";
    private static TlsRedis redis;

    @BeforeAll
    static void start() {
        redis = TlsRedis.start("idemkey", PASSWORD);
    }

    @AfterAll
    static void stop() {
        if (redis != null) {
            redis.close();
        }
    }

    @Test
    void storeTalksTlsWithTheAclUserFromTheConfiguration() {
        try (RedisIdempotencyStore store = open(Map.of(IdempotencySettings.REDIS_USER, "idemkey",
                IdempotencySettings.REDIS_PASSWORD, PASSWORD))) {
            assertInstanceOf(AcquireResult.Acquired.class, store.acquire("tls:k", new byte[]{1}, "owner", Duration.ofSeconds(5)));
            assertTrue(store.complete("tls:k", "owner", new byte[]{2}, Duration.ofMinutes(1)));
            assertInstanceOf(AcquireResult.Completed.class, store.acquire("tls:k", new byte[]{1}, "other", Duration.ofSeconds(5)));
            assertTrue(store.isAvailable());
        }
    }

    @Test
    void credentialsInTheUrlWorkTooAndNeverShowInDescriptions() {
        Map<String, String> config = new HashMap<>(Map.of(
                IdempotencySettings.REDIS_URL, "rediss://idemkey:" + PASSWORD + "@127.0.0.1:" + redis.tlsPort()));
        IdempotencySettings settings = settings(config);
        assertFalse(settings.toString().contains(PASSWORD), settings.toString());
        assertFalse(settings.redis().description().contains(PASSWORD));
        try (RedisIdempotencyStore store = RedisIdempotencyStore.open(settings.redis())) {
            assertInstanceOf(AcquireResult.Acquired.class, store.acquire("tls:url", new byte[]{1}, "owner", Duration.ofSeconds(5)));
            assertFalse(store.toString().contains(PASSWORD));
        }
    }

    @Test
    void wrongPasswordFailsWithoutShowingEitherPassword() {
        String wrong = "wr0ng-" + PASSWORD;
        try (RedisIdempotencyStore store = open(Map.of(IdempotencySettings.REDIS_USER, "idemkey",
                IdempotencySettings.REDIS_PASSWORD, wrong))) {
            RuntimeException refused = assertThrows(RuntimeException.class,
                    () -> store.acquire("tls:wrong", new byte[]{1}, "owner", Duration.ofSeconds(5)));
            assertNoSecret(refused, PASSWORD, wrong);
            assertFalse(store.isAvailable());
        }
    }

    @Test
    void serverWhoseCertificateIsNotTrustedIsUnavailableWithoutShowingThePassword() {
        Map<String, String> config = new HashMap<>(Map.of(
                IdempotencySettings.REDIS_URL, redis.url(),
                IdempotencySettings.REDIS_USER, "idemkey",
                IdempotencySettings.REDIS_PASSWORD, PASSWORD,
                IdempotencySettings.REDIS_CONNECT_TIMEOUT, "1000",
                IdempotencySettings.REDIS_READ_TIMEOUT, "1000"));
        try (RedisIdempotencyStore store = RedisIdempotencyStore.open(settings(config).redis())) {
            StoreUnavailableException refused = assertThrows(StoreUnavailableException.class,
                    () -> store.acquire("tls:untrusted", new byte[]{1}, "owner", Duration.ofSeconds(5)));
            assertNoSecret(refused, PASSWORD);
        }
    }

    private static RedisIdempotencyStore open(Map<String, String> credentials) {
        Map<String, String> config = new HashMap<>(credentials);
        config.put(IdempotencySettings.REDIS_URL, redis.url());
        config.put(IdempotencySettings.REDIS_TRUSTSTORE, redis.truststore().toString());
        config.put(IdempotencySettings.REDIS_TRUSTSTORE_PASSWORD, TlsRedis.TRUSTSTORE_PASSWORD);
        config.put(IdempotencySettings.REDIS_TRUSTSTORE_TYPE, "PKCS12");
        return RedisIdempotencyStore.open(settings(config).redis());
    }

    private static IdempotencySettings settings(Map<String, String> config) {
        Map<String, String> all = new HashMap<>(config);
        if (all.containsKey(IdempotencySettings.REDIS_TRUSTSTORE) || all.get(IdempotencySettings.REDIS_URL).contains("@")) {
            all.putIfAbsent(IdempotencySettings.REDIS_TRUSTSTORE, redis.truststore().toString());
            all.putIfAbsent(IdempotencySettings.REDIS_TRUSTSTORE_PASSWORD, TlsRedis.TRUSTSTORE_PASSWORD);
            all.putIfAbsent(IdempotencySettings.REDIS_TRUSTSTORE_TYPE, "PKCS12");
        }
        return IdempotencySettings.from(ConfigLookup.of(all));
    }

    private static void assertNoSecret(Throwable failure, String... secrets) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            for (String secret : secrets) {
                assertFalse(String.valueOf(t.getMessage()).contains(secret), t.toString());
                assertFalse(t.toString().contains(secret), t.toString());
            }
        }
    }
}
