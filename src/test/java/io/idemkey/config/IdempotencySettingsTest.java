package io.idemkey.config;

import io.idemkey.core.DecisionLog;
import io.idemkey.spi.RateLimit;
import io.idemkey.store.jdbc.JdbcStoreOptions;
import io.idemkey.store.redis.RedisStoreOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class IdempotencySettingsTest {

    private static IdempotencySettings settings(String... keyValues) {
        Map<String, String> values = new HashMap<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            values.put(keyValues[i], keyValues[i + 1]);
        }
        return IdempotencySettings.from(ConfigLookup.of(values));
    }

    /** Asserts the settings are refused with a message naming {@code property}, and returns the message. */
    private static String refused(String property, String... keyValues) {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> settings(keyValues));
        assertEquals(property, e.property());
        assertTrue(e.getMessage().contains(property), e.getMessage());
        return e.getMessage();
    }

    @Test
    void logFormatIsTextUnlessJsonIsAskedAndAnythingElseIsRefusedNamingTheProperty() {
        assertEquals(DecisionLog.Format.TEXT, settings().logFormat());
        assertEquals(DecisionLog.Format.JSON, settings("idempotency.log.format", "json").logFormat());
        assertEquals(DecisionLog.Format.TEXT, settings("idempotency.log.format", " Text ").logFormat());
        assertTrue(refused("idempotency.log.format", "idempotency.log.format", "logstash").contains("json"));
    }

    @Test
    void jdbcStoreNeedsADataSourceAndATableNameThatIsAnIdentifier() {
        IdempotencySettings settings = settings("idempotency.store", "jdbc", "idempotency.jdbc.datasource", "jdbc/orders");
        assertEquals(IdempotencySettings.StoreKind.JDBC, settings.store());
        assertEquals(new JdbcStoreOptions("jdbc/orders", "idempotency_keys", true, 2,
                Duration.ofMinutes(5), 1000), settings.jdbc());
        assertNull(settings.redis(), "no Redis settings are read for another store");
        assertEquals(new JdbcStoreOptions("jdbc/orders", "billing.keys", false, 5, Duration.ZERO, 50),
                settings("idempotency.store", "JDBC", "idempotency.jdbc.datasource", "jdbc/orders",
                        "idempotency.jdbc.table", "billing.keys", "idempotency.jdbc.create-table", "false",
                        "idempotency.jdbc.timeout-seconds", "5", "idempotency.jdbc.cleanup-interval-seconds", "0",
                        "idempotency.jdbc.cleanup-batch-size", "50").jdbc());
        assertTrue(refused("idempotency.jdbc.cleanup-batch-size", "idempotency.store", "jdbc",
                "idempotency.jdbc.datasource", "jdbc/orders", "idempotency.jdbc.cleanup-batch-size", "0").contains("cleanup-batch-size"));
        assertTrue(refused("idempotency.jdbc.datasource", "idempotency.store", "jdbc").contains("jdbc/orders"));
        for (String bad : new String[]{"keys; DROP TABLE users", "a.b.c", "1keys", "\"keys\""}) {
            refused("idempotency.jdbc.table", "idempotency.store", "jdbc", "idempotency.jdbc.datasource", "jdbc/x",
                    "idempotency.jdbc.table", bad);
        }
        refused("idempotency.jdbc.timeout-seconds", "idempotency.store", "jdbc", "idempotency.jdbc.datasource", "jdbc/x",
                "idempotency.jdbc.timeout-seconds", "0");
    }

    @Test
    void resourcesAreBeansFirstUnlessCdiOrJndiIsChosenAndAnythingElseIsRefusedNamingTheProperty() {
        assertEquals(IdempotencySettings.Resources.AUTO, settings().resources());
        assertEquals(IdempotencySettings.Resources.CDI, settings("idempotency.resources", " CDI ").resources());
        assertEquals(IdempotencySettings.Resources.JNDI, settings("idempotency.resources", "jndi").resources());
        assertTrue(refused("idempotency.resources", "idempotency.resources", "spring").contains("auto, cdi, jndi"));
        assertFalse(settings().toString().contains("resources"), "the default is not shown");
        assertTrue(settings("idempotency.resources", "cdi").toString().contains("resources=cdi"));
    }

    @Test
    void theDataSourceNamesABeanOrAJndiNameAndOnlyWithCdiResourcesMayBeLeftOutForTheDefaultBean() {
        assertEquals("orders", settings("idempotency.store", "jdbc", "idempotency.resources", "cdi",
                "idempotency.jdbc.datasource", " orders ").jdbc().dataSource());
        IdempotencySettings defaultBean = settings("idempotency.store", "jdbc", "idempotency.resources", "cdi");
        assertNull(defaultBean.jdbc().dataSource(), "unset: the @Default DataSource bean");
        assertTrue(defaultBean.toString().contains("jdbc=@Default DataSource/idempotency_keys"), defaultBean.toString());
        for (String resources : new String[]{"auto", "jndi"}) {
            String message = refused("idempotency.jdbc.datasource", "idempotency.store", "jdbc",
                    "idempotency.resources", resources);
            assertTrue(message.contains("idempotency.resources=cdi"), message);
        }
        refused("idempotency.resources", "idempotency.store", "jdbc", "idempotency.resources", "beans",
                "idempotency.jdbc.datasource", "orders");
    }

    @Test
    void aKeyPrefixHoldsBracesOnlyAsOneRedisHashTagSoThatACountersSlotIsItsRecords() {
        assertEquals("{orders}idempotency:", settings("idempotency.key-prefix", "{orders}idempotency:").keyPrefix());
        assertEquals("shop:{eu}:", settings("idempotency.key-prefix", "shop:{eu}:").keyPrefix());
        for (String bad : new String[]{"{orders", "orders}", "{}idem:", "{a}{b}:", "x}{y"}) {
            assertTrue(refused("idempotency.key-prefix", "idempotency.key-prefix", bad).contains(bad), bad);
        }
    }

    @Test
    void rateLimitPerKeyIsOffByDefaultAndReadsRequestsPerWindow() {
        assertTrue(settings().rateLimit().isEmpty());
        assertEquals(new RateLimit(20, Duration.ofMinutes(1)),
                settings("idempotency.rate-limit.per-key", "20/1m").rateLimit().orElseThrow());
        assertEquals(new RateLimit(5, Duration.ofSeconds(30)),
                settings("idempotency.rate-limit.per-key", " 5 / 30s ").rateLimit().orElseThrow());
        assertEquals(new RateLimit(100, Duration.ofHours(1)),
                settings("idempotency.rate-limit.per-key", "100/H").rateLimit().orElseThrow());
        for (String bad : new String[]{"20", "20/", "20/1d", "0/1m", "-1/1m", "20/0s", "20/25h", "x/1m", "20/1m/2"}) {
            assertTrue(refused("idempotency.rate-limit.per-key", "idempotency.rate-limit.per-key", bad).contains(bad), bad);
        }
    }

    @Test
    void defaultsMatchTheSpecification() {
        IdempotencySettings settings = settings();
        assertEquals(IdempotencySettings.StoreKind.REDIS, settings.store());
        assertEquals("redis://localhost:6379/0", settings.redis().description());
        assertFalse(settings.redis().tls());
        assertEquals("idempotency:", settings.keyPrefix());
        assertEquals("Idempotency-Key", settings.header());
        assertEquals("Idempotent-Replayed", settings.replayedHeader());
        assertEquals(255, settings.maxKeyLength());
        assertFalse(settings.failOpen());
        assertEquals(Set.of("POST", "PATCH"), settings.methods());
        assertEquals(IdempotencySettings.Scope.Kind.PRINCIPAL, settings.scope().kind());
        assertEquals(1 << 20, settings.maxRequestBytes());
        assertEquals(1 << 20, settings.maxResponseBytes());
        assertEquals(Set.copyOf(IdempotencySettings.ENTITY_HEADERS), settings.replayHeaders());
        assertEquals(Duration.ofSeconds(1), settings.unavailableRetryAfter());
        assertEquals(Duration.ofSeconds(5), settings.conflictRetryAfterMax());
        assertEquals(64, settings.redis().poolMaxTotal());
        assertEquals(0, settings.redis().poolMinIdle());
    }

    @Test
    void blankValuesMeanDefaults() {
        IdempotencySettings settings = settings(IdempotencySettings.STORE, " ", IdempotencySettings.MAX_KEY_LENGTH, "");
        assertEquals(IdempotencySettings.StoreKind.REDIS, settings.store());
        assertEquals(255, settings.maxKeyLength());
    }

    @Test
    void everySettingCanBeConfigured() {
        IdempotencySettings settings = settings(
                IdempotencySettings.STORE, "Memory",
                IdempotencySettings.KEY_PREFIX, "shop:idem:",
                IdempotencySettings.HEADER, "X-Idempotency-Key",
                IdempotencySettings.REPLAYED_HEADER, "X-Replayed",
                IdempotencySettings.MAX_KEY_LENGTH, "64",
                IdempotencySettings.FAILURE_MODE, "OPEN",
                IdempotencySettings.METHODS, "post, put ,DELETE",
                IdempotencySettings.SCOPE, "header:X-Tenant",
                IdempotencySettings.MAX_REQUEST_BYTES, "2048",
                IdempotencySettings.MAX_RESPONSE_BYTES, "4096",
                IdempotencySettings.REPLAY_HEADERS, "X-Request-Id, Retry-After",
                IdempotencySettings.UNAVAILABLE_RETRY_AFTER, "3",
                IdempotencySettings.CONFLICT_RETRY_AFTER_MAX, "10");
        assertEquals(IdempotencySettings.StoreKind.MEMORY, settings.store());
        assertNull(settings.redis(), "no Redis settings are read for the memory store");
        assertEquals("shop:idem:", settings.keyPrefix());
        assertEquals("X-Idempotency-Key", settings.header());
        assertEquals("X-Replayed", settings.replayedHeader());
        assertEquals(64, settings.maxKeyLength());
        assertTrue(settings.failOpen());
        assertEquals(Set.of("POST", "PUT", "DELETE"), settings.methods());
        assertEquals(new IdempotencySettings.Scope(IdempotencySettings.Scope.Kind.HEADER, "X-Tenant"), settings.scope());
        assertEquals(2048, settings.maxRequestBytes());
        assertEquals(4096, settings.maxResponseBytes());
        assertTrue(settings.replays("x-request-id"));
        assertTrue(settings.replays("Retry-After"));
        assertTrue(settings.replays("content-type"));
        assertFalse(settings.replays("Set-Cookie"));
        assertEquals(Duration.ofSeconds(3), settings.unavailableRetryAfter());
        assertEquals(Duration.ofSeconds(10), settings.conflictRetryAfterMax());
    }

    @Test
    void scopeAcceptsPrincipalGlobalAndHeaderInAnyCase() {
        assertEquals(IdempotencySettings.Scope.Kind.PRINCIPAL, settings(IdempotencySettings.SCOPE, "Principal").scope().kind());
        assertEquals(IdempotencySettings.Scope.Kind.GLOBAL, settings(IdempotencySettings.SCOPE, " global ").scope().kind());
        assertEquals("X-Api-Key-Id", settings(IdempotencySettings.SCOPE, "HEADER:X-Api-Key-Id").scope().headerName());
    }

    @Test
    void redisUrlUserPasswordTimeoutsAndPoolAreRead() {
        IdempotencySettings settings = settings(
                IdempotencySettings.REDIS_URL, "rediss://cache.internal:6380/3",
                IdempotencySettings.REDIS_USER, "app",
                IdempotencySettings.REDIS_PASSWORD, "pa55word",
                IdempotencySettings.REDIS_CONNECT_TIMEOUT, "250",
                IdempotencySettings.REDIS_READ_TIMEOUT, "750",
                IdempotencySettings.REDIS_POOL_MAX_TOTAL, "16",
                IdempotencySettings.REDIS_POOL_MIN_IDLE, "2",
                IdempotencySettings.REDIS_POOL_MAX_WAIT, "100",
                IdempotencySettings.REDIS_VERIFY_HOSTNAME, "false");
        assertTrue(settings.redis().tls());
        assertEquals("rediss://app@cache.internal:6380/3", settings.redis().description());
        assertEquals(16, settings.redis().poolMaxTotal());
        assertEquals(2, settings.redis().poolMinIdle());
    }

    @Test
    void passwordIsNeverShown() {
        IdempotencySettings inUrl = settings(IdempotencySettings.REDIS_URL, "redis://app:s3cr3t-in-url@cache:6379");
        assertFalse(inUrl.toString().contains("s3cr3t"), inUrl.toString());
        assertFalse(inUrl.redis().description().contains("s3cr3t"));
        IdempotencySettings separate = settings(IdempotencySettings.REDIS_PASSWORD, "s3cr3t-separate");
        assertFalse(separate.toString().contains("s3cr3t"), separate.toString());
    }

    @Test
    void unknownStoreIsRefused() {
        String message = refused(IdempotencySettings.STORE, IdempotencySettings.STORE, "mongodb");
        assertTrue(message.contains("redis") && message.contains("memory"), message);
    }

    @Test
    void unknownFailureModeIsRefused() {
        refused(IdempotencySettings.FAILURE_MODE, IdempotencySettings.FAILURE_MODE, "sometimes");
    }

    @ParameterizedTest
    @ValueSource(strings = {"http://localhost:6379", "localhost:6379", "redis://", "redis:///0", "redis://host:6379/abc",
            "redis://host:6379/0/1", "redis://ho st:6379", "not a url", "redis://[::1"})
    void malformedRedisUrlIsRefused(String url) {
        refused(IdempotencySettings.REDIS_URL, IdempotencySettings.REDIS_URL, url);
    }

    @ParameterizedTest
    @ValueSource(strings = {"redis://u:secret@host:abc", "redis://u:secret@host:-1", "redis://u:secret@ho st:6379",
            "redis://u:secret@host:6379/x", "redis://:secret@host:12ab/0", "http://u:secret@host:6379"})
    void badRedisUrlIsRefusedWithoutShowingThePassword(String url) {
        String message = refused(IdempotencySettings.REDIS_URL, IdempotencySettings.REDIS_URL, url);
        assertFalse(message.contains("secret"), message);
    }

    @ParameterizedTest
    @ValueSource(strings = {"redis://u:secret@host:99999", "redis://u:secret@host:65536", "redis://u:secret@host:0"})
    void redisUrlWithAPortOutOfRangeIsRefusedWithoutShowingThePassword(String url) {
        String message = refused(IdempotencySettings.REDIS_URL, IdempotencySettings.REDIS_URL, url);
        assertFalse(message.contains("secret"), message);
    }

    @Test
    void clusterAndSentinelModesReadTheirNodesAndKeepTheUrlsCredentialsAndTls() {
        IdempotencySettings cluster = settings(IdempotencySettings.REDIS_MODE, "Cluster",
                IdempotencySettings.REDIS_NODES, " 10.0.0.1:7000, 10.0.0.2:7001 ,[::1]:7002",
                IdempotencySettings.REDIS_URL, "rediss://app:secret@unused:6379");
        assertEquals(RedisStoreOptions.Mode.CLUSTER, cluster.redis().mode());
        assertEquals("rediss+cluster://app@10.0.0.1:7000,10.0.0.2:7001,[::1]:7002", cluster.redis().description());

        IdempotencySettings sentinel = settings(IdempotencySettings.REDIS_MODE, "sentinel",
                IdempotencySettings.REDIS_NODES, "s1:26379,s2:26379,s3:26379",
                IdempotencySettings.REDIS_SENTINEL_MASTER, "orders", IdempotencySettings.REDIS_URL, "redis://unused/2");
        assertEquals(RedisStoreOptions.Mode.SENTINEL, sentinel.redis().mode());
        assertEquals("redis+sentinel://s1:26379,s2:26379,s3:26379/orders/2", sentinel.redis().description());

        assertEquals(RedisStoreOptions.Mode.STANDALONE, settings().redis().mode());
        assertEquals(0, settings().redis().waitReplicas());
        assertEquals(Duration.ofMillis(100), settings().redis().waitTimeout());
        RedisStoreOptions waiting = settings(IdempotencySettings.REDIS_WAIT_REPLICAS, "1",
                IdempotencySettings.REDIS_WAIT_TIMEOUT, "250").redis();
        assertEquals(1, waiting.waitReplicas());
        assertEquals(Duration.ofMillis(250), waiting.waitTimeout());
        refused(IdempotencySettings.REDIS_WAIT_REPLICAS, IdempotencySettings.REDIS_WAIT_REPLICAS, "-1");
        refused(IdempotencySettings.REDIS_WAIT_TIMEOUT, IdempotencySettings.REDIS_WAIT_TIMEOUT, "0");
        assertTrue(refused(IdempotencySettings.REDIS_WAIT_TIMEOUT, IdempotencySettings.REDIS_WAIT_REPLICAS, "1",
                IdempotencySettings.REDIS_WAIT_TIMEOUT, "2000").contains(IdempotencySettings.REDIS_READ_TIMEOUT));
        assertEquals(1, settings(IdempotencySettings.REDIS_WAIT_REPLICAS, "1", IdempotencySettings.REDIS_WAIT_TIMEOUT, "2000",
                IdempotencySettings.REDIS_READ_TIMEOUT, "3000").redis().waitReplicas());
    }

    @Test
    void incompleteOrContradictoryTopologiesAreRefusedNamingTheProperty() {
        String mode = IdempotencySettings.REDIS_MODE;
        String nodes = IdempotencySettings.REDIS_NODES;
        String master = IdempotencySettings.REDIS_SENTINEL_MASTER;
        assertTrue(refused(mode, mode, "replicated").contains("standalone, sentinel, cluster"));
        refused(nodes, mode, "cluster");
        refused(nodes, mode, "sentinel", master, "orders");
        refused(master, mode, "sentinel", nodes, "s1:26379");
        for (String malformed : new String[]{"host", "host:", ":7000", "host:0", "host:65536", "host:70a", " , "}) {
            refused(nodes, mode, "cluster", nodes, malformed);
        }
        assertTrue(refused(nodes, nodes, "10.0.0.1:7000").contains("standalone"), "nodes without a mode: not ignored");
        refused(master, master, "orders");
        refused(master, mode, "cluster", nodes, "10.0.0.1:7000", master, "orders");
        assertTrue(refused(IdempotencySettings.REDIS_URL, mode, "cluster", nodes, "10.0.0.1:7000",
                IdempotencySettings.REDIS_URL, "redis://unused/3").contains("database 0"));
    }

    @Test
    void nonNumericNumbersAreRefusedNamingTheProperty() {
        for (String property : new String[]{IdempotencySettings.MAX_KEY_LENGTH, IdempotencySettings.MAX_REQUEST_BYTES,
                IdempotencySettings.MAX_RESPONSE_BYTES, IdempotencySettings.UNAVAILABLE_RETRY_AFTER,
                IdempotencySettings.CONFLICT_RETRY_AFTER_MAX, IdempotencySettings.REDIS_CONNECT_TIMEOUT,
                IdempotencySettings.REDIS_READ_TIMEOUT, IdempotencySettings.REDIS_POOL_MAX_TOTAL,
                IdempotencySettings.REDIS_POOL_MIN_IDLE, IdempotencySettings.REDIS_POOL_MAX_WAIT}) {
            refused(property, property, "2s");
            refused(property, property, "1.5");
            refused(property, property, "99999999999");
        }
    }

    @Test
    void numbersOutOfRangeAreRefusedNamingTheProperty() {
        refused(IdempotencySettings.MAX_KEY_LENGTH, IdempotencySettings.MAX_KEY_LENGTH, "0");
        refused(IdempotencySettings.MAX_KEY_LENGTH, IdempotencySettings.MAX_KEY_LENGTH, "1025");
        refused(IdempotencySettings.MAX_REQUEST_BYTES, IdempotencySettings.MAX_REQUEST_BYTES, "-1");
        refused(IdempotencySettings.REDIS_CONNECT_TIMEOUT, IdempotencySettings.REDIS_CONNECT_TIMEOUT, "0");
        refused(IdempotencySettings.REDIS_READ_TIMEOUT, IdempotencySettings.REDIS_READ_TIMEOUT, "-5");
        refused(IdempotencySettings.UNAVAILABLE_RETRY_AFTER, IdempotencySettings.UNAVAILABLE_RETRY_AFTER, "0");
        refused(IdempotencySettings.REDIS_POOL_MAX_TOTAL, IdempotencySettings.REDIS_POOL_MAX_TOTAL, "0");
    }

    @Test
    void poolMinIdleAboveMaxTotalIsRefused() {
        refused(IdempotencySettings.REDIS_POOL_MIN_IDLE,
                IdempotencySettings.REDIS_POOL_MAX_TOTAL, "4", IdempotencySettings.REDIS_POOL_MIN_IDLE, "5");
    }

    @ParameterizedTest
    @ValueSource(strings = {"principal:x", "tenant", "header:", "header:X Tenant", "header:X-Tenant,X-Other", "header"})
    void badScopeIsRefused(String scope) {
        refused(IdempotencySettings.SCOPE, IdempotencySettings.SCOPE, scope);
    }

    @Test
    void unknownOrMissingHttpMethodsAreRefused() {
        refused(IdempotencySettings.METHODS, IdempotencySettings.METHODS, "POST, FETCH");
        refused(IdempotencySettings.METHODS, IdempotencySettings.METHODS, " , ");
    }

    @Test
    void headerNamesMustBeTokens() {
        refused(IdempotencySettings.HEADER, IdempotencySettings.HEADER, "Idempotency Key");
        refused(IdempotencySettings.REPLAYED_HEADER, IdempotencySettings.REPLAYED_HEADER, "Replayed:");
        refused(IdempotencySettings.REPLAY_HEADERS, IdempotencySettings.REPLAY_HEADERS, "X-Ok, X Bad");
    }

    @ParameterizedTest
    @ValueSource(strings = {"Set-Cookie", "set-cookie", "X-Request-Id, Authorization", "Proxy-Authorization", "Cookie",
            "WWW-Authenticate", "Set-Cookie2"})
    void replayHeadersRefuseCookiesAndCredentials(String headers) {
        String message = refused(IdempotencySettings.REPLAY_HEADERS, IdempotencySettings.REPLAY_HEADERS, headers);
        assertTrue(message.contains("never recorded"), message);
    }

    @Test
    void coalescingIsOffByDefaultAndOnWhenAsked() {
        assertFalse(settings().redis().coalesce());
        assertTrue(settings(IdempotencySettings.REDIS_COALESCE, "true").redis().coalesce());
        assertTrue(settings(IdempotencySettings.REDIS_COALESCE, " TRUE ").redis().coalesce());
        assertFalse(settings(IdempotencySettings.REDIS_COALESCE, "false").redis().coalesce());
    }

    @ParameterizedTest
    @ValueSource(strings = {"yes", "1", "on", "coalesce"})
    void coalesceMustBeABooleanAndTheRefusalNamesTheProperty(String bad) {
        String message = refused(IdempotencySettings.REDIS_COALESCE, IdempotencySettings.REDIS_COALESCE, bad);
        assertTrue(message.contains("true or false") && message.contains(bad), message);
    }

    @Test
    void aCoalescedBatchWaitsFiftyMicrosecondsForCompanyByDefaultAndWhatTheSettingSays() {
        assertEquals(Duration.ofNanos(50_000), settings().redis().coalesceLinger());
        assertEquals(Duration.ZERO, settings(IdempotencySettings.REDIS_COALESCE_LINGER, "0").redis().coalesceLinger());
        assertEquals(Duration.ofMillis(10), settings(IdempotencySettings.REDIS_COALESCE_LINGER, "10000").redis().coalesceLinger());
    }

    @ParameterizedTest
    @ValueSource(strings = {"-1", "10001", "50us", "0.05"})
    void aCoalesceLingerOutsideZeroToTenMillisecondsIsRefusedNamingTheProperty(String bad) {
        String message = refused(IdempotencySettings.REDIS_COALESCE_LINGER, IdempotencySettings.REDIS_COALESCE_LINGER, bad);
        assertTrue(message.contains("between 0 and 10000"), message);
    }

    @Test
    void verifyHostnameMustBeABoolean() {
        refused(IdempotencySettings.REDIS_VERIFY_HOSTNAME, IdempotencySettings.REDIS_VERIFY_HOSTNAME, "yes");
    }

    @Test
    void unreadableTrustStoreIsRefusedWithoutShowingItsPassword() {
        String message = refused(IdempotencySettings.REDIS_TRUSTSTORE,
                IdempotencySettings.REDIS_URL, "rediss://cache:6380",
                IdempotencySettings.REDIS_TRUSTSTORE, "/nonexistent/truststore.p12",
                IdempotencySettings.REDIS_TRUSTSTORE_PASSWORD, "trust-s3cr3t");
        assertFalse(message.contains("trust-s3cr3t"), message);
    }

    @Test
    void messageSaysItIsAnIdemkeyConfigurationProblem() {
        String message = refused(IdempotencySettings.STORE, IdempotencySettings.STORE, "x");
        assertTrue(message.startsWith("Invalid Idemkey configuration: idempotency.store "), message);
    }
}
