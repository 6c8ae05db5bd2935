package io.idemkey.config;

import io.idemkey.core.DecisionLog;
import io.idemkey.spi.RateLimit;
import io.idemkey.store.jdbc.JdbcIdempotencyStore;
import io.idemkey.store.jdbc.JdbcStoreOptions;
import io.idemkey.store.redis.RedisStoreOptions;
import redis.clients.jedis.HostAndPort;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;

/**
 * The application-wide settings ({@code idempotency.*} in MicroProfile Config), read and validated
 * once at deployment. Immutable. {@link #toString()} never shows the password.
 *
 * @param store                 where records live
 * @param redis                 how to reach Redis (when {@code store} is {@link StoreKind#REDIS})
 * @param jdbc                  how to reach the table (when {@code store} is {@link StoreKind#JDBC})
 * @param keyPrefix             the prefix of every record key
 * @param header                the request header carrying the key
 * @param replayedHeader        the response header marking a replay
 * @param maxKeyLength          the longest accepted key
 * @param failOpen              the default failure mode: run unprotected when the store is down
 * @param methods               the guarded HTTP methods, upper case
 * @param scope                 how callers are told apart
 * @param maxRequestBytes       the largest entity buffered for the fingerprint (413 above)
 * @param maxResponseBytes      the largest response record kept, in its stored (compressed) form
 * @param replayHeaders         response headers recorded and replayed, besides the entity headers
 * @param unavailableRetryAfter the Retry-After of a 503
 * @param conflictRetryAfterMax the largest Retry-After of a 409
 * @param memoryMaxRecords      the bound of the in-memory store
 * @param replayCacheBytes      the body bytes of completed records kept in memory for replays (0: off)
 * @param rateLimitPerKey       at most so many requests per key and caller in a window; null: no limit
 * @param logFormat             how decision lines are logged: text (default) or one JSON object a line
 * @param protection            encryption of records and hashing of store keys ({@code idempotency.encryption.*})
 * @param resources             where the platform's resources are looked up: CDI beans, JNDI, or beans first
 */
public record IdempotencySettings(StoreKind store, RedisStoreOptions redis, JdbcStoreOptions jdbc, String keyPrefix,
                                  String header,
                                  String replayedHeader, int maxKeyLength, boolean failOpen, Set<String> methods,
                                  Scope scope, int maxRequestBytes, int maxResponseBytes, Set<String> replayHeaders,
                                  Duration unavailableRetryAfter, Duration conflictRetryAfterMax,
                                  int memoryMaxRecords, long replayCacheBytes, RateLimit rateLimitPerKey,
                                  DecisionLog.Format logFormat, StoredDataProtection protection,
                                  Resources resources) {

    /** Property names, in one place. */
    public static final String STORE = "idempotency.store";
    public static final String REDIS_URL = "idempotency.redis.url";
    public static final String REDIS_USER = "idempotency.redis.user";
    public static final String REDIS_PASSWORD = "idempotency.redis.password";
    public static final String REDIS_CONNECT_TIMEOUT = "idempotency.redis.connect-timeout-ms";
    public static final String REDIS_READ_TIMEOUT = "idempotency.redis.read-timeout-ms";
    public static final String REDIS_POOL_MAX_TOTAL = "idempotency.redis.pool.max-total";
    public static final String REDIS_POOL_MIN_IDLE = "idempotency.redis.pool.min-idle";
    public static final String REDIS_POOL_MAX_WAIT = "idempotency.redis.pool.max-wait-ms";
    public static final String REDIS_TRUSTSTORE = "idempotency.redis.tls.truststore";
    public static final String REDIS_TRUSTSTORE_PASSWORD = "idempotency.redis.tls.truststore-password";
    public static final String REDIS_TRUSTSTORE_TYPE = "idempotency.redis.tls.truststore-type";
    public static final String REDIS_VERIFY_HOSTNAME = "idempotency.redis.tls.verify-hostname";
    public static final String REDIS_MODE = "idempotency.redis.mode";
    public static final String REDIS_NODES = "idempotency.redis.nodes";
    public static final String REDIS_SENTINEL_MASTER = "idempotency.redis.sentinel.master";
    public static final String REDIS_WAIT_REPLICAS = "idempotency.redis.wait-replicas";
    public static final String REDIS_WAIT_TIMEOUT = "idempotency.redis.wait-timeout-ms";
    public static final String REDIS_COALESCE = "idempotency.redis.coalesce";
    public static final String REDIS_COALESCE_LINGER = "idempotency.redis.coalesce-linger-us";
    public static final String KEY_PREFIX = "idempotency.key-prefix";
    public static final String HEADER = "idempotency.header";
    public static final String REPLAYED_HEADER = "idempotency.replayed-header";
    public static final String MAX_KEY_LENGTH = "idempotency.max-key-length";
    public static final String FAILURE_MODE = "idempotency.failure-mode";
    public static final String METHODS = "idempotency.methods";
    public static final String SCOPE = "idempotency.scope";
    public static final String MAX_REQUEST_BYTES = "idempotency.max-request-bytes";
    public static final String MAX_RESPONSE_BYTES = "idempotency.max-response-bytes";
    public static final String REPLAY_HEADERS = "idempotency.replay-headers";
    public static final String UNAVAILABLE_RETRY_AFTER = "idempotency.unavailable-retry-after-seconds";
    public static final String CONFLICT_RETRY_AFTER_MAX = "idempotency.conflict-retry-after-max-seconds";
    public static final String MEMORY_MAX_RECORDS = "idempotency.memory.max-records";
    public static final String REPLAY_CACHE_BYTES = "idempotency.replay-cache-bytes";
    public static final String RATE_LIMIT_PER_KEY = "idempotency.rate-limit.per-key";
    public static final String LOG_FORMAT = "idempotency.log.format";
    public static final String RESOURCES = "idempotency.resources";
    public static final String JDBC_DATASOURCE = "idempotency.jdbc.datasource";
    public static final String JDBC_TABLE = "idempotency.jdbc.table";
    public static final String JDBC_CREATE_TABLE = "idempotency.jdbc.create-table";
    public static final String JDBC_TIMEOUT = "idempotency.jdbc.timeout-seconds";
    public static final String JDBC_CLEANUP_INTERVAL = "idempotency.jdbc.cleanup-interval-seconds";
    public static final String JDBC_CLEANUP_BATCH = "idempotency.jdbc.cleanup-batch-size";

    /**
     * Where records live: Redis, a table in the application's database, this JVM's memory, or the
     * application's own {@code IdempotencyStore} CDI bean.
     */
    public enum StoreKind { REDIS, JDBC, MEMORY, CUSTOM }

    /**
     * Where the platform's resources come from: the JDBC store's DataSource, the JTA
     * {@code TransactionSynchronizationRegistry} and the managed thread factory. A full Jakarta EE
     * server binds them in JNDI; Quarkus and Helidon offer them as CDI beans only.
     */
    public enum Resources {
        /** A CDI bean where one resolves, else a JNDI look-up: every deployment made before the choice existed. */
        AUTO,
        /** CDI beans only, never a JNDI look-up; the DataSource bean must exist. */
        CDI,
        /** JNDI look-ups only, no CDI bean looked for. */
        JNDI
    }

    /** The headers that describe the entity and are always recorded. */
    public static final List<String> ENTITY_HEADERS =
            List.of("Content-Type", "Location", "Content-Location", "ETag", "Last-Modified", "Content-Language");

    /** Headers never recorded, whatever the configuration says: credentials and cookies. */
    public static final Set<String> NEVER_RECORDED = Set.of("set-cookie", "set-cookie2", "authorization",
            "proxy-authorization", "cookie", "www-authenticate", "proxy-authenticate");

    private static final Set<String> HTTP_METHODS = Set.of("POST", "PATCH", "PUT", "DELETE", "GET", "HEAD", "OPTIONS");

    /** How callers are told apart: one caller can never replay another's response. */
    public record Scope(Kind kind, String headerName) {
        public enum Kind { PRINCIPAL, HEADER, GLOBAL }

        static Scope parse(String value) {
            String v = value.trim();
            if (v.equalsIgnoreCase("principal")) {
                return new Scope(Kind.PRINCIPAL, null);
            }
            if (v.equalsIgnoreCase("global")) {
                return new Scope(Kind.GLOBAL, null);
            }
            if (v.regionMatches(true, 0, "header:", 0, 7) && v.length() > 7 && isToken(v.substring(7))) {
                return new Scope(Kind.HEADER, v.substring(7));
            }
            throw new ConfigurationException(SCOPE, "must be principal, global or header:<Header-Name>, not '" + value + "'");
        }
    }

    /** Reads and validates every setting; throws {@link ConfigurationException} naming the first bad one. */
    public static IdempotencySettings from(ConfigLookup config) {
        StoreKind store = config.get(STORE).map(v -> Values.choice(STORE, v, StoreKind.class)).orElse(StoreKind.REDIS);
        if (store == StoreKind.REDIS) {
            requireJedis();
        }
        RedisStoreOptions redis = store == StoreKind.REDIS ? redis(config) : null;
        Resources resources = config.get(RESOURCES).map(v -> Values.choice(RESOURCES, v, Resources.class))
                .orElse(Resources.AUTO);
        JdbcStoreOptions jdbc = store == StoreKind.JDBC ? jdbc(config, resources) : null;
        String header = config.get(HEADER).map(String::trim).orElse("Idempotency-Key");
        requireToken(HEADER, header);
        String replayedHeader = config.get(REPLAYED_HEADER).map(String::trim).orElse("Idempotent-Replayed");
        requireToken(REPLAYED_HEADER, replayedHeader);
        boolean failOpen = config.get(FAILURE_MODE).map(v -> Values.choice(FAILURE_MODE, v, Mode.class) == Mode.OPEN)
                .orElse(false);
        Set<String> methods = config.get(METHODS).map(IdempotencySettings::methods).orElse(Set.of("POST", "PATCH"));
        Set<String> replayHeaders = new LinkedHashSet<>(ENTITY_HEADERS);
        for (String name : config.get(REPLAY_HEADERS).map(IdempotencySettings::list).orElse(List.of())) {
            requireToken(REPLAY_HEADERS, name);
            if (NEVER_RECORDED.contains(name.toLowerCase(Locale.ROOT))) {
                throw new ConfigurationException(REPLAY_HEADERS, "must not list " + name
                        + ": cookies and credentials are never recorded");
            }
            replayHeaders.add(name);
        }
        String keyPrefix = keyPrefix(config.get(KEY_PREFIX).orElse("idempotency:"));
        return new IdempotencySettings(store, redis, jdbc,
                keyPrefix,
                header, replayedHeader,
                integer(config, MAX_KEY_LENGTH, 255, 1, 1024),
                failOpen, methods,
                config.get(SCOPE).map(Scope::parse).orElse(new Scope(Scope.Kind.PRINCIPAL, null)),
                integer(config, MAX_REQUEST_BYTES, 1 << 20, 0, Integer.MAX_VALUE - 8),
                integer(config, MAX_RESPONSE_BYTES, 1 << 20, 0, 512 << 20),
                Set.copyOf(replayHeaders),
                Duration.ofSeconds(integer(config, UNAVAILABLE_RETRY_AFTER, 1, 1, 3600)),
                Duration.ofSeconds(integer(config, CONFLICT_RETRY_AFTER_MAX, 5, 1, 3600)),
                integer(config, MEMORY_MAX_RECORDS, 100_000, 1, 100_000_000),
                integer(config, REPLAY_CACHE_BYTES, 16 << 20, 0, Integer.MAX_VALUE),
                config.get(RATE_LIMIT_PER_KEY).map(IdempotencySettings::rateLimit).orElse(null),
                config.get(LOG_FORMAT).map(v -> Values.choice(LOG_FORMAT, v, DecisionLog.Format.class))
                        .orElse(DecisionLog.Format.TEXT),
                StoredDataProtection.from(config, keyPrefix),
                resources);
    }

    private static final Pattern HASH_TAGGED = Pattern.compile("[^{}]*\\{[^{}]+}[^{}]*");

    /**
     * The key prefix; braces only as one Redis Cluster hash tag ({@code {orders}idempotency:}): a
     * record's request counter must land in the record's slot, and a stray brace would move it.
     *
     * @throws ConfigurationException naming {@value #KEY_PREFIX} for a prefix with stray braces
     */
    public static String keyPrefix(String prefix) {
        if ((prefix.indexOf('{') >= 0 || prefix.indexOf('}') >= 0) && !HASH_TAGGED.matcher(prefix).matches()) {
            throw new ConfigurationException(KEY_PREFIX, "may hold braces only as one Redis hash tag with something"
                    + " between them, such as {orders}idempotency:, not '" + prefix + "'");
        }
        return prefix;
    }

    /** The per-key rate limit, if one is configured. */
    public Optional<RateLimit> rateLimit() {
        return Optional.ofNullable(rateLimitPerKey);
    }

    private static final Pattern RATE_LIMIT = Pattern.compile("\\s*(\\d{1,7})\\s*/\\s*(\\d{0,5})\\s*([smh])\\s*");

    /** {@code 20/1m}: permits per window, the window in seconds, minutes or hours (1 s to 24 h). */
    static RateLimit rateLimit(String value) {
        Matcher matcher = RATE_LIMIT.matcher(value.toLowerCase(Locale.ROOT));
        if (!matcher.matches()) {
            throw new ConfigurationException(RATE_LIMIT_PER_KEY, "must be <requests>/<window>, such as 20/1m, 5/30s"
                    + " or 100/1h, not '" + value + "'");
        }
        int permits = Integer.parseInt(matcher.group(1));
        long amount = matcher.group(2).isEmpty() ? 1 : Long.parseLong(matcher.group(2));
        Duration window = switch (matcher.group(3)) {
            case "s" -> Duration.ofSeconds(amount);
            case "m" -> Duration.ofMinutes(amount);
            default -> Duration.ofHours(amount);
        };
        if (permits < 1 || window.compareTo(Duration.ofSeconds(1)) < 0 || window.compareTo(Duration.ofDays(1)) > 0) {
            throw new ConfigurationException(RATE_LIMIT_PER_KEY, "allows 1 or more requests in a window of 1 s to 24 h,"
                    + " not '" + value + "'");
        }
        return new RateLimit(permits, window);
    }

    private enum Mode { CLOSED, OPEN }

    /** Whether the response header is one that is recorded and replayed. */
    public boolean replays(String headerName) {
        for (String name : replayHeaders) {
            if (name.equalsIgnoreCase(headerName)) {
                return true;
            }
        }
        return false;
    }

    /**
     * The JDBC store's options. The DataSource's name is a JNDI name, or the name of a
     * {@code @Named} DataSource bean; with {@code idempotency.resources=cdi} it may be left out
     * (null): the application's {@code @Default} DataSource bean.
     */
    private static JdbcStoreOptions jdbc(ConfigLookup config, Resources resources) {
        String dataSource = config.get(JDBC_DATASOURCE).map(String::trim).filter(name -> !name.isEmpty()).orElse(null);
        if (dataSource == null && resources != Resources.CDI) {
            throw new ConfigurationException(JDBC_DATASOURCE, "is required with " + STORE + "=jdbc: the name of the"
                    + " application's DataSource, a JNDI name such as jdbc/orders or a @Named DataSource bean's"
                    + " (with " + RESOURCES + "=cdi, unset means the @Default DataSource bean)");
        }
        String table = config.get(JDBC_TABLE).map(String::trim).orElse("idempotency_keys");
        if (!JdbcIdempotencyStore.isTableName(table)) {
            throw new ConfigurationException(JDBC_TABLE, "must be a table name ([schema.]name, letters, digits and _),"
                    + " not '" + table + "'");
        }
        boolean createTable = config.get(JDBC_CREATE_TABLE).map(v -> Values.bool(JDBC_CREATE_TABLE, v)).orElse(true);
        return new JdbcStoreOptions(dataSource, table, createTable, integer(config, JDBC_TIMEOUT, 2, 1, 600),
                Duration.ofSeconds(integer(config, JDBC_CLEANUP_INTERVAL, 300, 0, 86_400)),
                integer(config, JDBC_CLEANUP_BATCH, 1000, 1, 100_000));
    }

    /** The Redis store needs Jedis, which an application that uses another store may leave out of its WAR. */
    private static void requireJedis() {
        try {
            Class.forName("redis.clients.jedis.UnifiedJedis", false, IdempotencySettings.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            throw new ConfigurationException(STORE, "is redis (the default), but the application has no Redis client:"
                    + " add redis.clients:jedis (the application's pom excludes it?), or choose another store"
                    + " (jdbc, memory, custom)");
        }
    }

    private static RedisStoreOptions redis(ConfigLookup config) {
        String url = config.get(REDIS_URL).orElse("redis://localhost:6379");
        RedisStoreOptions options;
        try {
            options = RedisStoreOptions.fromUrl(url,
                    config.get(REDIS_USER).orElse(null), config.get(REDIS_PASSWORD).orElse(null));
        } catch (IllegalArgumentException e) {
            // The URL may hold a password: the message names the problem, never the value.
            throw new ConfigurationException(REDIS_URL, "is not a valid Redis URL (redis://[user:password@]host[:port][/db]"
                    + " or rediss://...): " + e.getMessage());
        }
        options.connectTimeout(Duration.ofMillis(integer(config, REDIS_CONNECT_TIMEOUT, 2000, 1, 600_000)))
                .readTimeout(Duration.ofMillis(integer(config, REDIS_READ_TIMEOUT, 2000, 1, 600_000)))
                .poolMaxWait(Duration.ofMillis(integer(config, REDIS_POOL_MAX_WAIT, 2000, 1, 600_000)))
                .poolMaxTotal(integer(config, REDIS_POOL_MAX_TOTAL, 64, 1, 10_000))
                .poolMinIdle(integer(config, REDIS_POOL_MIN_IDLE, 0, 0, 10_000))
                .verifyHostname(config.get(REDIS_VERIFY_HOSTNAME).map(v -> Values.bool(REDIS_VERIFY_HOSTNAME, v)).orElse(true))
                .coalesce(config.get(REDIS_COALESCE).map(v -> Values.bool(REDIS_COALESCE, v)).orElse(false))
                .coalesceLinger(Duration.of(integer(config, REDIS_COALESCE_LINGER,
                        (int) RedisStoreOptions.DEFAULT_COALESCE_LINGER.toNanos() / 1000, 0,
                        (int) RedisStoreOptions.MAX_COALESCE_LINGER.toNanos() / 1000), ChronoUnit.MICROS));
        if (options.poolMinIdle() > options.poolMaxTotal()) {
            throw new ConfigurationException(REDIS_POOL_MIN_IDLE, "must not exceed " + REDIS_POOL_MAX_TOTAL
                    + " (" + options.poolMaxTotal() + ")");
        }
        config.get(REDIS_TRUSTSTORE).ifPresent(path -> options.sslSocketFactory(trustStore(path,
                config.get(REDIS_TRUSTSTORE_PASSWORD).orElse(null),
                config.get(REDIS_TRUSTSTORE_TYPE).orElse(KeyStore.getDefaultType()))));
        topology(config, options);
        options.waitReplicas(integer(config, REDIS_WAIT_REPLICAS, 0, 0, 100),
                Duration.ofMillis(integer(config, REDIS_WAIT_TIMEOUT, 100, 1, 60_000)));
        if (options.waitReplicas() > 0 && options.waitTimeout().compareTo(options.readTimeout()) >= 0) {
            throw new ConfigurationException(REDIS_WAIT_TIMEOUT, "(" + options.waitTimeout().toMillis() + ") must be below "
                    + REDIS_READ_TIMEOUT + " (" + options.readTimeout().toMillis() + "): a completion waiting for its"
                    + " replicas would otherwise time out as an outage");
        }
        return options;
    }

    /** Sentinel or cluster: the nodes to ask, and the master's name (a standalone server needs neither). */
    private static void topology(ConfigLookup config, RedisStoreOptions options) {
        RedisStoreOptions.Mode mode = config.get(REDIS_MODE)
                .map(v -> Values.choice(REDIS_MODE, v, RedisStoreOptions.Mode.class)).orElse(RedisStoreOptions.Mode.STANDALONE);
        Optional<String> nodes = config.get(REDIS_NODES).filter(v -> !v.isBlank());
        Optional<String> master = config.get(REDIS_SENTINEL_MASTER).filter(v -> !v.isBlank());
        String modeName = mode.name().toLowerCase(Locale.ROOT);
        if (mode == RedisStoreOptions.Mode.STANDALONE) {
            // silently talking to one server when the operator listed a cluster would be a surprise
            if (nodes.isPresent()) {
                throw new ConfigurationException(REDIS_NODES, "is set, but " + REDIS_MODE
                        + " is standalone (the URL's server): set the mode to sentinel or cluster, or remove the nodes");
            }
            if (master.isPresent()) {
                throw new ConfigurationException(REDIS_SENTINEL_MASTER, "is set, but " + REDIS_MODE
                        + " is not sentinel");
            }
            return;
        }
        List<HostAndPort> addresses;
        try {
            addresses = RedisStoreOptions.parseNodes(nodes.orElseThrow(() -> new ConfigurationException(REDIS_NODES,
                    "is required when " + REDIS_MODE + " is " + modeName + ": host:port of "
                            + (mode == RedisStoreOptions.Mode.SENTINEL ? "the sentinels" : "some of the cluster's nodes")
                            + ", separated by commas")));
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException(REDIS_NODES, "must be host:port pairs separated by commas: " + e.getMessage());
        }
        if (mode == RedisStoreOptions.Mode.SENTINEL) {
            options.sentinel(master.orElseThrow(() -> new ConfigurationException(REDIS_SENTINEL_MASTER,
                    "is required when " + REDIS_MODE + " is sentinel: the name the sentinels monitor the master by")), addresses);
            return;
        }
        if (master.isPresent()) {
            throw new ConfigurationException(REDIS_SENTINEL_MASTER, "is set, but " + REDIS_MODE + " is cluster");
        }
        try {
            options.cluster(addresses);
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException(REDIS_URL, "does not suit a Redis Cluster: " + e.getMessage());
        }
    }

    private static SSLSocketFactory trustStore(String path, String password, String type) {
        try (InputStream in = Files.newInputStream(Path.of(path))) {
            KeyStore store = KeyStore.getInstance(type);
            store.load(in, password == null ? null : password.toCharArray());
            TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trust.init(store);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, trust.getTrustManagers(), null);
            return context.getSocketFactory();
        } catch (IOException | GeneralSecurityException e) {
            throw new ConfigurationException(REDIS_TRUSTSTORE, "cannot be read as a " + type + " trust store: "
                    + e.getClass().getSimpleName());
        }
    }

    private static Set<String> methods(String value) {
        Set<String> methods = new LinkedHashSet<>();
        for (String method : list(value)) {
            String m = method.toUpperCase(Locale.ROOT);
            if (!HTTP_METHODS.contains(m)) {
                throw new ConfigurationException(METHODS, "lists an unknown HTTP method: '" + method + "'");
            }
            methods.add(m);
        }
        if (methods.isEmpty()) {
            throw new ConfigurationException(METHODS, "must list at least one HTTP method");
        }
        return Set.copyOf(methods);
    }

    static List<String> list(String value) {
        return Arrays.stream(value.split(",")).map(String::trim).filter(s -> !s.isEmpty()).collect(Collectors.toList());
    }

    private static int integer(ConfigLookup config, String property, int fallback, int min, int max) {
        return config.get(property).map(v -> Values.integer(property, v, min, max)).orElse(fallback);
    }

    private static void requireToken(String property, String value) {
        if (!isToken(value)) {
            throw new ConfigurationException(property, "must be an HTTP header name, not '" + value + "'");
        }
    }

    private static boolean isToken(String value) {
        return !value.isEmpty() && value.chars().allMatch(c -> c > 0x20 && c < 0x7f && "()<>@,;:\\\"/[]?={}".indexOf(c) < 0);
    }

    @Override
    public String toString() {
        return "IdempotencySettings[store=" + store + (redis != null ? ", redis=" + redis.description() + (redis.coalesce() ? " (calls coalesced)" : "") : "")
                + (jdbc != null ? ", jdbc=" + (jdbc.dataSource() == null ? "@Default DataSource" : jdbc.dataSource())
                + "/" + jdbc.table() : "")
                + ", keyPrefix=" + keyPrefix + ", header=" + header + ", failOpen=" + failOpen + ", methods=" + methods
                + ", scope=" + scope + (rateLimitPerKey == null ? "" : ", rateLimit=" + rateLimitPerKey)
                + (protection == StoredDataProtection.NONE ? "" : ", " + protection)
                + (resources == Resources.AUTO ? "" : ", resources=" + resources.name().toLowerCase(Locale.ROOT)) + "]";
    }
}
