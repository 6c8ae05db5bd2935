package io.idemkey.testing;

import org.mariadb.jdbc.MariaDbDataSource;

import javax.sql.DataSource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * A private MariaDB server for a test, on a free port, so that the test can stop, kill or freeze it:
 * {@code mariadb-install-db} into a temporary directory, then {@code mariadbd} (as root, which it
 * allows with {@code --user=root}). A database {@code idemkey} and a user {@code idemkey} (password
 * {@code idemkey}) that may log in over TCP from the host's address. Commits reach the operating
 * system at once and the disk once a second, unless durable (benchmarks): a killed server loses
 * nothing a test saw committed.
 */
public final class MariaDbServer implements TestDatabase {

    public static final String DATABASE = "idemkey";
    public static final String USER = "idemkey";
    public static final String PASSWORD = "idemkey";

    private final Host host;
    private final int port;
    private final boolean durable;
    private final Path directory;
    private final Path data;
    private final Path socket;
    private Process process;

    private MariaDbServer(Host host, int port, boolean durable) {
        this.host = host;
        this.port = port;
        this.durable = durable;
        try {
            this.directory = Files.createTempDirectory("idemkey-mariadb-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        this.data = directory.resolve("data");
        this.socket = directory.resolve("mariadb.sock");
    }

    /** Installs and starts a new server on a free port (about a second here). */
    public static MariaDbServer start() {
        return start(Host.LOOPBACK, false);
    }

    /** A server on {@code host} (a network namespace of the benchmark's, say), every commit flushed to disk. */
    public static MariaDbServer startDurableOn(Host host) {
        return start(host, true);
    }

    private static MariaDbServer start(Host host, boolean durable) {
        MariaDbServer server = new MariaDbServer(host, FreePort.next(), durable);
        server.run(List.of(program("mariadb-install-db"), "--no-defaults", "--datadir=" + server.data,
                "--auth-root-authentication-method=normal", "--skip-test-db", "--user=" + System.getProperty("user.name")));
        server.startProcess();
        server.rootSql("CREATE DATABASE IF NOT EXISTS " + DATABASE + ";"
                + " CREATE USER IF NOT EXISTS '" + USER + "'@'" + host.address() + "' IDENTIFIED BY '" + PASSWORD + "';"
                + " CREATE USER IF NOT EXISTS '" + USER + "'@'%' IDENTIFIED BY '" + PASSWORD + "';"
                + " GRANT ALL ON *.* TO '" + USER + "'@'" + host.address() + "';"
                + " GRANT ALL ON *.* TO '" + USER + "'@'%';");
        Runtime.getRuntime().addShutdownHook(new Thread(server::stop));
        return server;
    }

    @Override
    public String name() {
        return "MariaDB";
    }

    public String address() {
        return host.address();
    }

    public int port() {
        return port;
    }

    /** The JDBC URL of the test database (MariaDB's driver). */
    public String jdbcUrl() {
        return "jdbc:mariadb://" + host.address() + ":" + port + "/" + DATABASE;
    }

    /** A plain (unpooled) data source on the test database, with timeouts that keep a test from hanging. */
    public DataSource dataSource() {
        return dataSource("&connectTimeout=2000&socketTimeout=5000");
    }

    /**
     * A plain data source as a container's pool gets it from its users' configuration: no socket
     * timeout, so a read waits for the database as long as it takes.
     */
    public DataSource dataSourceWithoutReadTimeout() {
        return dataSource("&connectTimeout=2000");
    }

    private DataSource dataSource(String options) {
        try {
            MariaDbDataSource dataSource = new MariaDbDataSource();
            dataSource.setUrl(jdbcUrl() + "?user=" + USER + "&password=" + PASSWORD + options);
            return dataSource;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Runs statements (no parameters, no results), one at a time: DDL, test data. */
    public void execute(String sql) {
        try (Connection connection = dataSource().getConnection(); Statement statement = connection.createStatement()) {
            for (String one : sql.split(";\\s*(\\n|$)")) {
                if (!one.isBlank()) {
                    statement.execute(one);
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    /** Kills the server at once (as a crash or an outage would: connections drop); its data stays. */
    public synchronized void stop() {
        if (process != null && process.isAlive()) {
            process.destroyForcibly();
            try {
                process.waitFor();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Starts the stopped server again on the same port, with its data (InnoDB recovers what it committed). */
    public synchronized void restart() {
        stop();
        startProcess();
    }

    /**
     * Freezes the server (SIGSTOP): its connections stay open and nothing answers on them, as when its
     * host vanishes without a reset. {@link #thaw()} ends it.
     */
    public synchronized void freeze() {
        run(List.of("kill", "-STOP", Long.toString(process.pid())));
    }

    public synchronized void thaw() {
        run(List.of("kill", "-CONT", Long.toString(process.pid())));
    }

    @Override
    public void close() {
        stop();
    }

    private void startProcess() {
        List<String> command = new ArrayList<>(List.of(program("mariadbd"), "--no-defaults", "--datadir=" + data,
                "--port=" + port, "--bind-address=" + host.address(), "--socket=" + socket, "--skip-name-resolve",
                "--user=" + System.getProperty("user.name"), "--innodb-buffer-pool-size=64M",
                "--log-error=" + directory.resolve("mariadb.log"), "--pid-file=" + directory.resolve("mariadb.pid"),
                "--performance-schema=ON")); // tests count the statements a request costs (its digests)
        if (!durable) {
            command.add("--innodb-flush-log-at-trx-commit=2"); // the OS keeps what a killed server committed
        }
        try {
            process = new ProcessBuilder(host.command(command)).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(directory.resolve("mariadbd.out").toFile())).start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start mariadbd (is MariaDB installed? it-tests/install-prerequisites installs it)", e);
        }
        awaitReady();
    }

    private void awaitReady() {
        Instant deadline = Instant.now().plus(Duration.ofSeconds(60));
        while (Instant.now().isBefore(deadline)) {
            if (!process.isAlive()) {
                throw new IllegalStateException("mariadbd exited; see " + directory.resolve("mariadb.log"));
            }
            try {
                Process ping = new ProcessBuilder(host.command(List.of("mariadb-admin", "--no-defaults", "--socket=" + socket,
                        "-uroot", "--connect-timeout=1", "ping"))).redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
                if (ping.waitFor() == 0) {
                    return;
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot run mariadb-admin (is MariaDB installed?)", e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
            sleep(50);
        }
        throw new IllegalStateException("mariadbd on port " + port + " not ready after 60 s; see " + directory);
    }

    /** Root over the server's socket (root may not log in over TCP). */
    private void rootSql(String sql) {
        run(host.command(List.of("mariadb", "--no-defaults", "--socket=" + socket, "-uroot", "-e", sql)));
    }

    private void run(List<String> command) {
        try {
            Process run = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(directory.resolve("commands.log").toFile())).start();
            if (run.waitFor() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed; see " + directory.resolve("commands.log"));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + command.get(0) + " (is MariaDB installed?)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** A MariaDB program: from the {@code PATH}, else from {@code /usr/sbin} (where Debian puts the server, off users' PATH). */
    private static String program(String name) {
        for (String directory : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            if (!directory.isEmpty() && Files.isExecutable(Path.of(directory, name))) {
                return name;
            }
        }
        Path sbin = Path.of("/usr/sbin", name);
        return Files.isExecutable(sbin) ? sbin.toString() : name;
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
