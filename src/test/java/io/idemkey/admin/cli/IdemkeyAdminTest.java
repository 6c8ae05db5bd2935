package io.idemkey.admin.cli;

import io.idemkey.core.OwnerTokens;
import io.idemkey.core.RecordCipher;
import io.idemkey.core.RecordAdmin;
import io.idemkey.core.RecordCodec;
import io.idemkey.core.RecordIdentifiers;
import io.idemkey.core.RecordKey;
import io.idemkey.core.StoredResponse;
import io.idemkey.spi.AcquireResult;
import io.idemkey.spi.IdempotencyStore;
import io.idemkey.store.jdbc.JdbcIdempotencyStore;
import io.idemkey.store.redis.RedisIdempotencyStore;
import io.idemkey.store.redis.RedisStoreOptions;
import io.idemkey.testing.LogCapture;
import io.idemkey.testing.MariaDbServer;
import io.idemkey.testing.PostgresServer;
import io.idemkey.testing.RedisCluster;
import io.idemkey.testing.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The command line tool against real stores: Redis, a Redis Cluster, PostgreSQL and MariaDB (each
 * started once, privately), with records written as the engine writes them (its owner tokens, its
 * record keys, its codec), and its answers to bad arguments.
 */
class IdemkeyAdminTest {

    private static final Duration LOCK = Duration.ofMinutes(5);
    private static final byte[] FINGERPRINT = new byte[16];

    private static RedisServer redis;
    private static RedisCluster cluster;
    private static PostgresServer postgres;
    private static MariaDbServer mariadb;

    @RegisterExtension
    final LogCapture audit = new LogCapture(RecordAdmin.AUDIT_LOGGER);
    private final String prefix = "cli-" + UUID.randomUUID().toString().substring(0, 8) + ":";

    @AfterAll
    static void stopServers() {
        for (AutoCloseable server : new AutoCloseable[] {redis, cluster, postgres, mariadb}) {
            if (server != null) {
                try {
                    server.close();
                } catch (Exception e) {
                    // stopping anyway
                }
            }
        }
    }

    private record Result(int status, String out, String err) {
    }

    private Result run(String... args) {
        return runWith(Map.of("USER", "tester"), args);
    }

    private static Result runWith(Map<String, String> environment, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = IdemkeyAdmin.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), environment);
        return new Result(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private String[] args(List<String> store, String... rest) {
        List<String> all = new ArrayList<>(store);
        all.add("--key-prefix");
        all.add(prefix);
        all.addAll(List.of(rest));
        return all.toArray(String[]::new);
    }

    @Test
    void onRedis() {
        if (redis == null) {
            redis = RedisServer.start();
        }
        try (IdempotencyStore store = RedisIdempotencyStore.open(RedisStoreOptions.fromUrl(redis.url(), null, null))) {
            operatorsWorkflow(store, List.of("--store", redis.url()));
        }
    }

    @Test
    void onARedisClusterEveryMasterIsWalked() {
        if (cluster == null) {
            cluster = RedisCluster.start(3);
        }
        RedisStoreOptions options = RedisStoreOptions.fromUrl("redis://ignored", null, null).cluster(cluster.seeds());
        String seed = cluster.seeds().get(0).getHost() + ":" + cluster.seeds().get(0).getPort();
        try (IdempotencyStore store = RedisIdempotencyStore.open(options)) {
            operatorsWorkflow(store, List.of("--store", "redis://" + seed, "--cluster"));
        }
    }

    @Test
    void onPostgres() {
        if (postgres == null) {
            postgres = PostgresServer.start();
        }
        JdbcIdempotencyStore store = new JdbcIdempotencyStore(postgres.dataSource(), "idempotency_keys", 5);
        store.createTable();
        operatorsWorkflow(store, List.of("--store", postgres.jdbcUrl(), "--user", "postgres", "--password", "x"));
    }

    @Test
    void onMariaDb() {
        if (mariadb == null) {
            mariadb = MariaDbServer.start();
        }
        JdbcIdempotencyStore store = new JdbcIdempotencyStore(mariadb.dataSource(), "idempotency_keys", 5);
        store.createTable();
        operatorsWorkflow(store, List.of("--store", mariadb.jdbcUrl(), "--user", MariaDbServer.USER,
                "--password", MariaDbServer.PASSWORD));
    }

    /**
     * Records as the engine leaves them: twelve keys stuck for ten minutes (enough for several pages
     * on every store), one young, one completed; then look-up, the stuck list page by page, a purge
     * refused without force and done with it, each in the audit line.
     */
    private void operatorsWorkflow(IdempotencyStore store, List<String> storeArgs) {
        Instant tenMinutesAgo = Instant.now().minus(Duration.ofMinutes(10));
        for (int i = 0; i < 12; i++) {
            acquire(store, RecordKey.of(prefix, "alice", "stuck-" + i), OwnerTokens.newToken(tenMinutesAgo));
        }
        acquire(store, RecordKey.of(prefix, "alice", "young"), OwnerTokens.newToken(Instant.now()));
        String done = RecordKey.of(prefix, "alice", "done");
        String token = OwnerTokens.newToken(Instant.now());
        acquire(store, done, token);
        assertTrue(store.complete(done, token, RecordCodec.PLAIN.encode(done, FINGERPRINT, new StoredResponse(201, List.of(),
                "{\"id\":7}".getBytes(StandardCharsets.UTF_8))), Duration.ofHours(24)));

        Result lookUp = run(args(storeArgs, "look-up", "--caller", "alice", "--key", "done", "--body"));
        assertEquals(0, lookUp.status(), lookUp.err());
        assertTrue(lookUp.out().startsWith(done + " completed status=201 "), lookUp.out());
        assertTrue(lookUp.out().contains("{\"id\":7}"), lookUp.out());
        Result running = run(args(storeArgs, "look-up", "--caller", "alice", "--key", "stuck-3"));
        assertTrue(running.out().contains(" in-progress owner-age=PT10M"), running.out());
        assertEquals(1, run(args(storeArgs, "look-up", "--caller", "bob", "--key", "done")).status(), "another caller's key");

        List<String> stuck = new ArrayList<>();
        String cursor = "";
        int pages = 0;
        do {
            List<String> page = new ArrayList<>(List.of("stuck", "--older-than", "PT5M", "--limit", "5"));
            if (!cursor.isEmpty()) {
                page.addAll(List.of("--cursor", cursor));
            }
            Result result = run(args(storeArgs, page.toArray(String[]::new)));
            assertEquals(0, result.status(), result.err());
            List<String> lines = result.out().lines().toList();
            stuck.addAll(lines.subList(0, lines.size() - 1));
            String last = lines.get(lines.size() - 1);
            cursor = last.equals("(last page)") ? "" : last.substring("next page: --cursor '".length(), last.length() - 1);
            assertTrue(++pages < 50);
        } while (!cursor.isEmpty());
        List<String> keys = stuck.stream().map(line -> line.substring(0, line.indexOf(' '))).sorted().toList();
        assertEquals(java.util.stream.IntStream.range(0, 12).mapToObj(i -> RecordKey.of(prefix, "alice", "stuck-" + i))
                .sorted().toList(), keys, "the twelve stuck keys, neither the young one nor the completed one");

        Result refused = run(args(storeArgs, "purge", "--caller", "alice", "--key", "stuck-0", "--reason", "INC-1"));
        assertEquals(1, refused.status(), refused.out());
        assertTrue(refused.out().startsWith("refused: "), refused.out());
        Result forced = run(args(storeArgs, "purge", "--caller", "alice", "--key", "stuck-0", "--reason", "INC-1",
                "--force", "--as", "carol"));
        assertEquals(0, forced.status(), forced.err());
        assertEquals(1, run(args(storeArgs, "look-up", "--caller", "alice", "--key", "stuck-0")).status());
        assertEquals(0, run(args(storeArgs, "purge", "--caller", "alice", "--key", "done", "--reason", "INC-2")).status());
        String stuck0 = RecordKey.of(prefix, "alice", "stuck-0");
        assertEquals(List.of(
                "idempotency-admin look-up-body by=\"tester (IdemkeyAdmin)\" record=\"" + done + "\" outcome=SHOWN",
                "idempotency-admin purge by=\"tester (IdemkeyAdmin)\" record=\"" + stuck0 + "\" force=false outcome=IN_PROGRESS reason=\"INC-1\"",
                "idempotency-admin purge by=\"carol (IdemkeyAdmin)\" record=\"" + stuck0 + "\" force=true outcome=PURGED reason=\"INC-1\"",
                "idempotency-admin purge by=\"tester (IdemkeyAdmin)\" record=\"" + done + "\" force=false outcome=PURGED reason=\"INC-2\""),
                audit.messages());
    }

    private static void acquire(IdempotencyStore store, String recordKey, String token) {
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(recordKey, FINGERPRINT, token, LOCK));
    }

    @Test
    void withHashedIdentifiersTheLookUpDerivesTheKeyFromTheIdentifierKey() {
        if (redis == null) {
            redis = RedisServer.start();
        }
        byte[] identifierKey = new byte[32];
        new SecureRandom().nextBytes(identifierKey);
        String hashed = RecordIdentifiers.hashed(prefix, identifierKey, false).storeKey(RecordKey.of(prefix, "alice", "k"));
        try (IdempotencyStore store = RedisIdempotencyStore.open(RedisStoreOptions.fromUrl(redis.url(), null, null))) {
            acquire(store, hashed, OwnerTokens.newToken(Instant.now().minus(Duration.ofHours(1))));
        }
        String base64 = Base64.getEncoder().encodeToString(identifierKey);
        Result found = run(args(List.of("--store", redis.url()), "--identifier-key", base64, "look-up", "--caller", "alice", "--key", "k"));
        assertEquals(0, found.status(), found.err());
        assertTrue(found.out().startsWith(hashed + " in-progress"), found.out());
        assertEquals(1, run(args(List.of("--store", redis.url()), "look-up", "--caller", "alice", "--key", "k")).status(),
                "without the identifier key, the plain key holds nothing");
        Result stuck = run(args(List.of("--store", redis.url()), "stuck", "--older-than", "PT30M"));
        assertTrue(stuck.out().startsWith(prefix + "h=") && !stuck.out().contains("alice"), stuck.out());
    }

    /** A sealed record under a hashed key, completed as the engine completes one; its store key. */
    private String sealedRecord(IdempotencyStore store, byte[] identifierKey, String encryptionKeys, String caller, String key,
                                String body) {
        RecordIdentifiers ids = RecordIdentifiers.hashed(prefix, identifierKey, false);
        RecordCodec codec = new RecordCodec(RecordCipher.parse(encryptionKeys), false);
        String storeKey = ids.storeKey(RecordKey.of(prefix, caller, key));
        byte[] fingerprint = ids.storedFingerprint(storeKey, new byte[32]);
        String token = OwnerTokens.newToken(Instant.now());
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(storeKey, fingerprint, token, LOCK));
        assertTrue(store.complete(storeKey, token, codec.encode(storeKey, fingerprint,
                new StoredResponse(201, List.of(), body.getBytes(StandardCharsets.UTF_8))), Duration.ofHours(1)));
        return storeKey;
    }

    private static String randomKey() {
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        return Base64.getEncoder().encodeToString(key);
    }

    /**
     * The identifier and encryption keys come from files or from the environment (the names the
     * application's MicroProfile Config reads), not only from flags that the process list shows;
     * a body look-up writes its audit line.
     */
    @Test
    void theKeysComeFromFilesOrTheEnvironmentAndABodyLookUpIsAudited() throws Exception {
        if (redis == null) {
            redis = RedisServer.start();
        }
        String identifierKey = randomKey();
        String encryptionKeys = "k1:" + randomKey();
        String storeKey;
        try (IdempotencyStore store = RedisIdempotencyStore.open(RedisStoreOptions.fromUrl(redis.url(), null, null))) {
            storeKey = sealedRecord(store, Base64.getDecoder().decode(identifierKey), encryptionKeys, "alice", "k",
                    "{\"card\":\"4111\"}");
        }
        List<String> lookUp = List.of("--store", redis.url(), "--key-prefix", prefix, "look-up", "--caller", "alice", "--key", "k",
                "--body");

        Result fromEnvironment = runWith(Map.of("USER", "tester", IdemkeyAdmin.IDENTIFIER_KEY_VARIABLE, identifierKey,
                IdemkeyAdmin.ENCRYPTION_KEYS_VARIABLE, encryptionKeys), lookUp.toArray(String[]::new));
        assertEquals(0, fromEnvironment.status(), fromEnvironment.err());
        assertTrue(fromEnvironment.out().startsWith(storeKey + " completed status=201"), fromEnvironment.out());
        assertTrue(fromEnvironment.out().contains("{\"card\":\"4111\"}"), fromEnvironment.out());

        java.nio.file.Path directory = java.nio.file.Files.createTempDirectory("idemkey-cli-keys");
        java.nio.file.Path identifierFile = java.nio.file.Files.writeString(directory.resolve("identifier-key"), identifierKey + "\n");
        java.nio.file.Path keysFile = java.nio.file.Files.writeString(directory.resolve("keys"), encryptionKeys + "\n");
        List<String> fromFiles = new ArrayList<>(List.of("--identifier-key-file", identifierFile.toString(),
                "--encryption-keys-file", keysFile.toString(), "--as", "carol"));
        fromFiles.addAll(lookUp);
        Result read = run(fromFiles.toArray(String[]::new));
        assertEquals(0, read.status(), read.err());
        assertTrue(read.out().contains("{\"card\":\"4111\"}"), read.out());

        Result withoutKeys = run(lookUp.toArray(String[]::new));
        assertEquals(1, withoutKeys.status(), "without the identifier key the plain key holds nothing: " + withoutKeys.out());

        List<String> both = new ArrayList<>(List.of("--identifier-key-file", identifierFile.toString(), "--identifier-key",
                identifierKey));
        both.addAll(lookUp);
        assertUsage("--identifier-key or --identifier-key-file, not both", both.toArray(String[]::new));
        List<String> missing = new ArrayList<>(List.of("--encryption-keys-file", directory.resolve("absent").toString()));
        missing.addAll(lookUp);
        Result unreadable = run(missing.toArray(String[]::new));
        assertEquals(2, unreadable.status(), unreadable.err());
        assertTrue(unreadable.err().contains("--encryption-keys-file: cannot read"), unreadable.err());

        assertEquals(List.of(
                "idempotency-admin look-up-body by=\"tester (IdemkeyAdmin)\" record=\"" + storeKey + "\" outcome=SHOWN",
                "idempotency-admin look-up-body by=\"carol (IdemkeyAdmin)\" record=\"" + storeKey + "\" outcome=SHOWN",
                "idempotency-admin look-up-body by=\"tester (IdemkeyAdmin)\" record=\"" + RecordKey.of(prefix, "alice", "k")
                        + "\" outcome=ABSENT"),
                audit.messages());
    }

    /**
     * The tool as operators run it, in a JVM of its own whose class path is this test's without the
     * Jedis jar, against PostgreSQL: it reads an encrypted record there (keys from the environment),
     * and a Redis URL is a failure saying that Jedis is missing, not a stack trace.
     */
    @Test
    void againstPostgresTheToolRunsWithoutJedisOnTheClassPath() throws Exception {
        if (postgres == null) {
            postgres = PostgresServer.start();
        }
        JdbcIdempotencyStore store = new JdbcIdempotencyStore(postgres.dataSource(), "idempotency_keys", 5);
        store.createTable();
        String identifierKey = randomKey();
        String encryptionKeys = "k1:" + randomKey();
        String storeKey = sealedRecord(store, Base64.getDecoder().decode(identifierKey), encryptionKeys, "alice", "k",
                "{\"id\":7}");
        List<String> classPath = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
            if (!java.nio.file.Path.of(entry).getFileName().toString().startsWith("jedis-")) {
                classPath.add(entry);
            }
        }
        assertTrue(classPath.size() < System.getProperty("java.class.path").split(java.io.File.pathSeparator).length,
                "this test's class path holds Jedis, and the tool's does not");

        Result found = fork(classPath, Map.of(IdemkeyAdmin.IDENTIFIER_KEY_VARIABLE, identifierKey,
                IdemkeyAdmin.ENCRYPTION_KEYS_VARIABLE, encryptionKeys),
                "--store", postgres.jdbcUrl(), "--user", "postgres", "--key-prefix", prefix,
                "look-up", "--caller", "alice", "--key", "k", "--body");
        assertEquals(0, found.status(), found.out() + found.err());
        assertTrue(found.out().startsWith(storeKey + " completed status=201"), found.out());
        assertTrue(found.out().contains("{\"id\":7}"), found.out());
        Result stuck = fork(classPath, Map.of(), "--store", postgres.jdbcUrl(), "--user", "postgres", "--key-prefix", prefix,
                "stuck", "--older-than", "0");
        assertEquals(0, stuck.status(), stuck.out() + stuck.err());

        Result redisUrl = fork(classPath, Map.of(), "--store", "redis://127.0.0.1:1", "stuck", "--older-than", "0");
        assertEquals(4, redisUrl.status(), redisUrl.out() + redisUrl.err());
        assertTrue(redisUrl.err().contains("the Redis client (Jedis) is not on the class path"), redisUrl.err());
    }

    /** {@code java -cp <classPath> IdemkeyAdmin args}, with these environment variables besides the inherited ones. */
    private static Result fork(List<String> classPath, Map<String, String> environment, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java")
                .toString(), "-cp", String.join(java.io.File.pathSeparator, classPath), IdemkeyAdmin.class.getName()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().remove(IdemkeyAdmin.IDENTIFIER_KEY_VARIABLE);
        builder.environment().remove(IdemkeyAdmin.ENCRYPTION_KEYS_VARIABLE);
        builder.environment().putAll(environment);
        java.nio.file.Path out = java.nio.file.Files.createTempFile("idemkey-cli", ".out");
        java.nio.file.Path err = java.nio.file.Files.createTempFile("idemkey-cli", ".err");
        Process process = builder.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        if (!process.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("the tool did not end within 60 s");
        }
        return new Result(process.exitValue(), java.nio.file.Files.readString(out), java.nio.file.Files.readString(err));
    }

    @Test
    void badArgumentsAreRefusedWithTheReasonTheUsageAndStatus2() {
        assertUsage("no command", "--store", "redis://127.0.0.1:1");
        assertUsage("--store is required", "stuck", "--older-than", "60");
        assertUsage("--reason is required", "--store", "redis://127.0.0.1:1", "purge", "--caller", "a", "--key", "k");
        assertUsage("either --caller", "--store", "redis://127.0.0.1:1", "look-up", "--caller", "a", "--scope", "s", "--key", "k");
        assertUsage("--older-than must be", "--store", "redis://127.0.0.1:1", "stuck", "--older-than", "soon");
        assertUsage("--limit must be a number from 1 to 1000", "--store", "redis://127.0.0.1:1", "stuck", "--older-than", "60", "--limit", "0");
        assertUsage("--force is not an option of look-up", "--store", "redis://127.0.0.1:1", "look-up", "--caller", "a", "--key", "k", "--force");
        assertUsage("must start with redis://", "--store", "mysql://u:secret@db/x", "stuck", "--older-than", "60");
        assertUsage("idempotency.encryption.identifier-key", "--store", "redis://127.0.0.1:1", "--identifier-key", "short",
                "stuck", "--older-than", "60");
        Result unreachable = run("--store", "redis://127.0.0.1:1", "stuck", "--older-than", "60");
        assertEquals(3, unreachable.status(), unreachable.err());
        assertTrue(unreachable.err().contains("cannot be reached"), unreachable.err());
    }

    @Test
    void refusedCredentialsAreAFailureOfTheirOwnWithStatus4AndNoPasswordIsEverPrinted() {
        if (redis == null) {
            redis = RedisServer.start();
        }
        Result refused = run("--store", "redis://nobody:wrongpw@127.0.0.1:" + redis.port(), "look-up", "--caller", "a", "--key", "k");
        assertEquals(4, refused.status(), "not 1 (absent): " + refused.err());
        assertTrue(refused.err().startsWith("error: ") && refused.err().lines().count() == 1, refused.err());
        assertFalse(refused.err().contains("wrongpw"), refused.err());
        assertEquals("No suitable driver found for jdbc:postgresql://h:1/orders?user=ops&password=***",
                IdemkeyAdmin.withoutPasswords("No suitable driver found for jdbc:postgresql://h:1/orders?user=ops&password=s3cretPW"));
        assertEquals("redis://ops:***@h:6379 and jdbc:mariadb://h/db;password=***;x=1",
                IdemkeyAdmin.withoutPasswords("redis://ops:pw@h:6379 and jdbc:mariadb://h/db;password=pw;x=1"));
        assertEquals("redis://u:***@h, redis://host:6379/0, jdbc:postgresql://h:5432/db, ops@example.com",
                IdemkeyAdmin.withoutPasswords("redis://u:p@ss@h, redis://host:6379/0, jdbc:postgresql://h:5432/db, ops@example.com"));
    }

    private void assertUsage(String expected, String... args) {
        Result result = run(args);
        assertEquals(2, result.status(), String.join(" ", args) + ": " + result.err());
        assertTrue(result.err().contains(expected), result.err());
        assertTrue(result.err().contains("usage: IdemkeyAdmin"), result.err());
        assertTrue(!result.err().contains("secret"), "no password in messages: " + result.err());
    }

    static String joined(List<String> lines) {
        return lines.stream().collect(Collectors.joining("\n"));
    }
}
