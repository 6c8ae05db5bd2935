package io.idemkey.admin.cli;

import io.idemkey.config.ConfigLookup;
import io.idemkey.config.ConfigurationException;
import io.idemkey.config.IdempotencySettings;
import io.idemkey.config.StoredDataProtection;
import io.idemkey.core.RecordAdmin;
import io.idemkey.spi.IdempotencyStore;
import io.idemkey.spi.StoreInspection;
import io.idemkey.spi.StoreUnavailableException;
import io.idemkey.store.jdbc.JdbcIdempotencyStore;

import javax.sql.DataSource;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Clock;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.logging.Logger;

/**
 * The admin API's operations from a shell, against a store URL, for operators without the
 * application's credentials (docs/operations.md has the command):
 * <pre>
 * IdemkeyAdmin --store URL [options] look-up (--caller C | --scope S) --key K [--body]
 * IdemkeyAdmin --store URL [options] purge   (--caller C | --scope S) --key K --reason R [--force] [--as NAME]
 * IdemkeyAdmin --store URL [options] stuck   --older-than AGE [--limit N] [--cursor C]
 * </pre>
 * {@code --caller} names an HTTP request's scope value (empty for the global scope), {@code --scope}
 * an idempotent call's scope. Options: {@code --user}, {@code --password} (or the environment's
 * {@code IDEMKEY_STORE_PASSWORD}), {@code --cluster} (the Redis URL names one node of a cluster),
 * {@code --table} (JDBC), {@code --key-prefix}, and the application's
 * {@code idempotency.encryption.identifier-key} and {@code .keys} where it sets them: from a file
 * ({@code --identifier-key-file}, {@code --encryption-keys-file}), the environment
 * ({@value #IDENTIFIER_KEY_VARIABLE}, {@value #ENCRYPTION_KEYS_VARIABLE}, the names the application's
 * MicroProfile Config reads too) or, visible in the process list, flags ({@code --identifier-key},
 * {@code --encryption-keys}). Exit status: 0 done, 1 the key is absent or in progress (purge
 * refused), 2 bad arguments, 3 the store unreachable, 4 any other failure (refused credentials, a
 * missing driver, ...). Passwords and keys are never printed. Needs the client of the store it
 * opens only: a JDBC store runs without Jedis on the class path.
 */
public final class IdemkeyAdmin {

    static final int OK = 0;
    static final int NOT_DONE = 1;
    static final int USAGE = 2;
    static final int UNAVAILABLE = 3;
    static final int FAILED = 4;

    /** The environment variable holding {@code idempotency.encryption.keys}, as MicroProfile Config maps it. */
    static final String ENCRYPTION_KEYS_VARIABLE = "IDEMPOTENCY_ENCRYPTION_KEYS";
    /** The environment variable holding {@code idempotency.encryption.identifier-key}, as MicroProfile Config maps it. */
    static final String IDENTIFIER_KEY_VARIABLE = "IDEMPOTENCY_ENCRYPTION_IDENTIFIER_KEY";

    /** A password in a URL or a driver's message: {@code user:password@}, {@code password=...}. */
    private static final java.util.regex.Pattern PASSWORDS = java.util.regex.Pattern.compile(
            "(?i)(://[^/@:\\s]*:)\\S*@|(password=)[^&;\\s]*");

    static final String USAGE_TEXT = """
            usage: IdemkeyAdmin --store URL [options] look-up (--caller C | --scope S) --key K [--body] [--as NAME]
                   IdemkeyAdmin --store URL [options] purge   (--caller C | --scope S) --key K --reason R [--force] [--as NAME]
                   IdemkeyAdmin --store URL [options] stuck   --older-than AGE [--limit N] [--cursor C]
            URL: redis://[user:password@]host:port, rediss://..., jdbc:postgresql://host:port/db, jdbc:mariadb://host:port/db
            options: --user U  --password P (or IDEMKEY_STORE_PASSWORD)  --cluster  --table T (JDBC, default idempotency_keys)
                     --key-prefix P (default idempotency:)  --ttl-hours H (for a completed record's age, default 24)
                     --identifier-key-file F (or IDEMPOTENCY_ENCRYPTION_IDENTIFIER_KEY, or --identifier-key K)
                     --encryption-keys-file F (or IDEMPOTENCY_ENCRYPTION_KEYS, or --encryption-keys K)
                     (the application's idempotency.encryption.identifier-key / .keys)
            AGE: whole seconds or an ISO-8601 duration (PT15M)""";

    private static final List<String> FLAGS = List.of("--body", "--force", "--cluster");

    private IdemkeyAdmin() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err, System.getenv()));
    }

    /** Runs one command; what {@link #main} exits with. */
    static int run(String[] args, PrintStream out, PrintStream err, Map<String, String> environment) {
        Map<String, String> options = new HashMap<>();
        List<String> commands = new ArrayList<>();
        try {
            for (int i = 0; i < args.length; i++) {
                String arg = args[i];
                if (FLAGS.contains(arg)) {
                    options.put(arg, "true");
                } else if (arg.startsWith("--")) {
                    if (i + 1 >= args.length) {
                        throw new IllegalArgumentException(arg + " needs a value");
                    }
                    if (options.put(arg, args[++i]) != null) {
                        throw new IllegalArgumentException(arg + " is given twice");
                    }
                } else {
                    commands.add(arg);
                }
            }
            if (commands.size() != 1 || !List.of("look-up", "purge", "stuck").contains(commands.get(0))) {
                throw new IllegalArgumentException(commands.isEmpty() ? "no command: look-up, purge or stuck"
                        : "one command of look-up, purge or stuck, not " + commands);
            }
            String store = required(options, "--store");
            Map<String, String> config = new LinkedHashMap<>();
            secret(options, environment, "--identifier-key", IDENTIFIER_KEY_VARIABLE)
                    .ifPresent(v -> config.put(StoredDataProtection.IDENTIFIER_KEY, v));
            secret(options, environment, "--encryption-keys", ENCRYPTION_KEYS_VARIABLE)
                    .ifPresent(v -> config.put(StoredDataProtection.KEYS, v));
            // only what the tool needs: the prefix and the protection (the store's own settings need its client)
            String keyPrefix = IdempotencySettings.keyPrefix(options.getOrDefault("--key-prefix", "idempotency:"));
            StoredDataProtection protection = StoredDataProtection.from(ConfigLookup.of(config), keyPrefix);
            Duration ttl = Duration.ofHours(number(options.getOrDefault("--ttl-hours", "24"), "--ttl-hours", 1, 8760));
            String command = commands.get(0);
            checkKnown(options, command);
            if (command.equals("stuck")) {
                age(required(options, "--older-than"));
                number(options.getOrDefault("--limit", "100"), "--limit", 1, 1000);
            } else {
                target(options);
                required(options, "--key");
                if (command.equals("purge")) {
                    RecordAdmin.checkReason(required(options, "--reason"));
                }
            }
            String password = options.getOrDefault("--password", environment.get("IDEMKEY_STORE_PASSWORD"));
            try (IdempotencyStore opened = open(store, options.get("--user"), password, options.containsKey("--cluster"),
                    options.getOrDefault("--table", "idempotency_keys"))) {
                RecordAdmin admin = new RecordAdmin((StoreInspection) opened, keyPrefix,
                        protection.identifiers(), protection.codec(), ttl, Clock.systemUTC(),
                        purged -> { }); // the applications' replay caches are theirs: docs/operations.md
                return execute(command, admin, options, out, environment);
            }
        } catch (IllegalArgumentException | ConfigurationException e) {
            err.println("error: " + withoutPasswords(e.getMessage()));
            err.println(USAGE_TEXT);
            return USAGE;
        } catch (StoreUnavailableException e) {
            err.println("error: the store cannot be reached: " + withoutPasswords(e.getMessage()));
            return UNAVAILABLE;
        } catch (RuntimeException e) { // refused credentials, a missing driver, a store's own error: not "absent"
            err.println("error: " + e.getClass().getSimpleName() + ": " + withoutPasswords(String.valueOf(e.getMessage())));
            return FAILED;
        }
    }

    private static int execute(String command, RecordAdmin admin, Map<String, String> options, PrintStream out,
                               Map<String, String> environment) {
        if (command.equals("stuck")) {
            RecordAdmin.StuckPage page = admin.stuck(age(options.get("--older-than")), options.getOrDefault("--cursor", ""),
                    number(options.getOrDefault("--limit", "100"), "--limit", 1, 1000));
            for (RecordAdmin.KeyState state : page.records()) {
                out.println(describe(state));
            }
            out.println(page.nextCursor().isEmpty() ? "(last page)" : "next page: --cursor '" + page.nextCursor() + "'");
            return OK;
        }
        String storeKey = options.containsKey("--caller") ? admin.requestStoreKey(options.get("--caller"), options.get("--key"))
                : admin.callStoreKey(options.get("--scope"), options.get("--key"));
        String who = options.getOrDefault("--as", environment.getOrDefault("USER", "unknown")) + " (IdemkeyAdmin)";
        if (command.equals("look-up")) {
            Optional<RecordAdmin.KeyState> state = options.containsKey("--body") ? admin.lookUpWithBody(storeKey, who)
                    : admin.lookUp(storeKey);
            out.println(state.map(IdemkeyAdmin::describe).orElse("no record under " + storeKey));
            return state.isPresent() ? OK : NOT_DONE;
        }
        StoreInspection.Purge outcome = admin.purge(storeKey, options.containsKey("--force"), who, options.get("--reason"));
        out.println(switch (outcome) {
            case PURGED -> "purged " + storeKey;
            case ABSENT -> "no record under " + storeKey;
            case IN_PROGRESS -> "refused: " + storeKey + " is in progress (its request may still run); --force purges it";
        });
        return outcome == StoreInspection.Purge.PURGED ? OK : NOT_DONE;
    }

    static String describe(RecordAdmin.KeyState state) {
        StringBuilder line = new StringBuilder(state.storeKey());
        if (state.completed()) {
            line.append(" completed status=").append(state.status()).append(" size=").append(state.size())
                    .append("B age=").append(state.age()).append(" ttl-left=").append(state.timeLeft());
        } else {
            line.append(" in-progress owner-age=").append(state.ownerAge() == null ? "unknown" : state.ownerAge())
                    .append(" lease-left=").append(state.timeLeft());
        }
        line.append(" fingerprint=").append(state.fingerprint());
        if (state.body() != null) {
            line.append("\n").append(state.body().text() != null ? state.body().text() : "(body unreadable: "
                    + state.body().unreadable() + ")");
        }
        return line.toString();
    }

    private static void checkKnown(Map<String, String> options, String command) {
        List<String> allowed = new ArrayList<>(List.of("--store", "--user", "--password", "--cluster", "--table",
                "--key-prefix", "--identifier-key", "--identifier-key-file", "--encryption-keys", "--encryption-keys-file",
                "--ttl-hours"));
        allowed.addAll(switch (command) {
            case "look-up" -> List.of("--caller", "--scope", "--key", "--body", "--as");
            case "purge" -> List.of("--caller", "--scope", "--key", "--reason", "--force", "--as");
            default -> List.of("--older-than", "--limit", "--cursor");
        });
        for (String option : options.keySet()) {
            if (!allowed.contains(option)) {
                throw new IllegalArgumentException(option + " is not an option of " + command);
            }
        }
    }

    private static void target(Map<String, String> options) {
        if (options.containsKey("--caller") == options.containsKey("--scope")) {
            throw new IllegalArgumentException("give either --caller (an HTTP request's scope value, '' for the global"
                    + " scope) or --scope (an idempotent call's scope)");
        }
    }

    /**
     * A secret setting: from the file {@code <flag>-file} names (trimmed), the flag's value, or the
     * environment variable; at most one of the two options. Never quoted in a message.
     */
    static Optional<String> secret(Map<String, String> options, Map<String, String> environment, String flag,
                                   String variable) {
        String file = options.get(flag + "-file");
        if (file != null && options.containsKey(flag)) {
            throw new IllegalArgumentException("give " + flag + " or " + flag + "-file, not both");
        }
        if (file != null) {
            try {
                return Optional.of(Files.readString(Path.of(file), StandardCharsets.UTF_8).trim());
            } catch (IOException | InvalidPathException e) {
                throw new IllegalArgumentException(flag + "-file: cannot read " + file + " (" + e.getClass().getSimpleName()
                        + ")");
            }
        }
        return Optional.ofNullable(options.containsKey(flag) ? options.get(flag) : environment.get(variable));
    }

    private static String required(Map<String, String> options, String name) {
        String value = options.get(name);
        if (value == null) {
            throw new IllegalArgumentException(name + " is required");
        }
        return value;
    }

    private static int number(String value, String name, int min, int max) {
        try {
            int n = Integer.parseInt(value);
            if (n >= min && n <= max) {
                return n;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new IllegalArgumentException(name + " must be a number from " + min + " to " + max + ", not '" + value + "'");
    }

    static Duration age(String value) {
        try {
            Duration age = value.matches("\\d{1,11}") ? Duration.ofSeconds(Long.parseLong(value)) : Duration.parse(value);
            if (!age.isNegative()) {
                return age;
            }
        } catch (DateTimeParseException e) {
            // below
        }
        throw new IllegalArgumentException("--older-than must be whole seconds or an ISO-8601 duration such as PT15M,"
                + " not '" + value + "'");
    }

    /** The store the URL names; JDBC through the driver on the class path (DriverManager). */
    static IdempotencyStore open(String url, String user, String password, boolean cluster, String table) {
        if (url.startsWith("redis://") || url.startsWith("rediss://")) {
            try {
                return RedisStores.open(url, user, password, cluster);
            } catch (NoClassDefFoundError noJedis) {
                throw new IllegalStateException("the Redis client (Jedis) is not on the class path: " + noJedis.getMessage());
            }
        }
        if (cluster) {
            throw new IllegalArgumentException("--cluster is for a Redis URL");
        }
        if (url.startsWith("jdbc:postgresql:") || url.startsWith("jdbc:mariadb:")) {
            if (!JdbcIdempotencyStore.isTableName(table)) {
                throw new IllegalArgumentException("--table must be a table name, not '" + table + "'");
            }
            return new JdbcIdempotencyStore(new DriverManagerDataSource(url, user, password), table, 10);
        }
        throw new IllegalArgumentException("the store URL must start with redis://, rediss://, jdbc:postgresql: or"
                + " jdbc:mariadb:, not '" + url.replaceFirst("//[^@/]*@", "//***@") + "'");
    }

    /** Connections straight from the JDBC driver: the tool runs for one command. */
    private record DriverManagerDataSource(String url, String user, String password) implements DataSource {
        @Override
        public Connection getConnection() throws SQLException {
            return DriverManager.getConnection(url, user, password);
        }

        @Override
        public Connection getConnection(String username, String pass) throws SQLException {
            return DriverManager.getConnection(url, username, pass);
        }

        @Override
        public PrintWriter getLogWriter() {
            return null;
        }

        @Override
        public void setLogWriter(PrintWriter out) {
        }

        @Override
        public void setLoginTimeout(int seconds) {
            DriverManager.setLoginTimeout(seconds);
        }

        @Override
        public int getLoginTimeout() {
            return DriverManager.getLoginTimeout();
        }

        @Override
        public Logger getParentLogger() throws SQLFeatureNotSupportedException {
            throw new SQLFeatureNotSupportedException();
        }

        @Override
        public <T> T unwrap(Class<T> type) throws SQLException {
            throw new SQLException("not a wrapper");
        }

        @Override
        public boolean isWrapperFor(Class<?> type) {
            return false;
        }

        @Override
        public String toString() {
            return "DriverManager[" + url.replaceFirst("//[^@/]*@", "//***@") + "]";
        }
    }

    /** {@code text} with every password in it (a URL's {@code user:password@}, {@code password=...}) replaced by ***. */
    static String withoutPasswords(String text) {
        return text == null ? null : PASSWORDS.matcher(text).replaceAll(m -> m.group(1) != null
                ? java.util.regex.Matcher.quoteReplacement(m.group(1) + "***@")
                : java.util.regex.Matcher.quoteReplacement(m.group(2) + "***"));
    }
}
