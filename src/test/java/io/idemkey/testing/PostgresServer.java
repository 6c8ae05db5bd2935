package io.idemkey.testing;

import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * A private PostgreSQL cluster for a test, on a free port, so that the test can stop it to simulate
 * an outage: {@code initdb} into a temporary directory, then {@code pg_ctl start}. PostgreSQL refuses
 * to run as root, so as root both run as the {@code postgres} user. Trust authentication on
 * 127.0.0.1; the database is {@code postgres}, the user {@code postgres}.
 */
public final class PostgresServer implements TestDatabase {

    private static final boolean ROOT = "root".equals(System.getProperty("user.name"));

    private final Host host;
    private final int port;
    /** Whether commits reach the disk (fsync), as in production: for benchmarks. */
    private final boolean durable;
    private final Path directory;
    private final Path data;

    private PostgresServer(Host host, int port, boolean durable) {
        this.host = host;
        this.port = port;
        this.durable = durable;
        try {
            this.directory = Files.createTempDirectory("idemkey-postgres-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        this.data = directory.resolve("data");
    }

    /** Creates and starts a new cluster on a free port (under a second here). */
    public static PostgresServer start() {
        return start(Host.LOOPBACK, false);
    }

    /** The same, with every commit flushed to disk (fsync on), as production runs: for benchmarks. */
    public static PostgresServer startDurable() {
        return start(Host.LOOPBACK, true);
    }

    /** A durable cluster on {@code host} (a network namespace of the benchmark's, say). */
    public static PostgresServer startDurableOn(Host host) {
        return start(host, true);
    }

    private static PostgresServer start(Host host, boolean durable) {
        PostgresServer server = new PostgresServer(host, FreePort.next(), durable);
        if (ROOT) {
            server.run("chown", "postgres:postgres", server.directory.toString());
        }
        server.runAsPostgres(program("initdb"), "-D", server.data.toString(), "-U", "postgres", "-A", "trust", "-E", "UTF8",
                "--no-sync");
        if (!host.equals(Host.LOOPBACK)) {
            server.trustEveryAddress(); // clients reach a server on another host from an address of their own
        }
        server.startProcess();
        Runtime.getRuntime().addShutdownHook(new Thread(server::stop));
        return server;
    }

    private void trustEveryAddress() {
        try {
            Files.writeString(data.resolve("pg_hba.conf"), "host all all 0.0.0.0/0 trust\n", StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public int port() {
        return port;
    }

    /** The address it listens on. */
    public String address() {
        return host.address();
    }

    public String jdbcUrl() {
        return "jdbc:postgresql://" + host.address() + ":" + port + "/postgres";
    }

    @Override
    public String name() {
        return "PostgreSQL";
    }

    /** A plain (unpooled) data source on the cluster; the password is ignored by trust authentication. */
    public DataSource dataSource() {
        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        dataSource.setUrl(jdbcUrl());
        dataSource.setUser("postgres");
        dataSource.setPassword("unused");
        dataSource.setConnectTimeout(2);
        dataSource.setSocketTimeout(5);
        return dataSource;
    }

    /** Runs statements (no parameters, no results): DDL, test data. */
    public void execute(String sql) {
        try (Connection connection = dataSource().getConnection(); Statement statement = connection.createStatement()) {
            statement.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    /**
     * A plain (unpooled) data source as a container's pool gets it from its users' configuration: no
     * socket timeout, so a read waits for the database as long as it takes.
     */
    public DataSource dataSourceWithoutReadTimeout() {
        PGSimpleDataSource dataSource = (PGSimpleDataSource) dataSource();
        dataSource.setSocketTimeout(0);
        return dataSource;
    }

    /**
     * Freezes every process of the cluster (SIGSTOP): its connections stay open and nothing answers on
     * them, as when its host vanishes without a reset (a partition, a dead machine). {@link #thaw()} ends it.
     */
    public synchronized void freeze() {
        signal("STOP");
    }

    /** Lets a frozen cluster run on. */
    public synchronized void thaw() {
        signal("CONT");
    }

    private void signal(String signal) {
        String postmaster;
        try {
            postmaster = Files.readAllLines(data.resolve("postmaster.pid")).get(0).strip();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try {
            new ProcessBuilder("pkill", "-" + signal, "-P", postmaster).start().waitFor(); // its backends, if any
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        run("kill", "-" + signal, postmaster);
    }

    /** Stops the cluster at once (as an outage would: connections drop); its data stays. */
    public synchronized void stop() {
        if (Files.exists(data.resolve("postmaster.pid"))) {
            runAsPostgres(program("pg_ctl"), "-D", data.toString(), "-m", "immediate", "-w", "stop");
        }
    }

    /** Starts the stopped cluster again on the same port, with its data. */
    public synchronized void restart() {
        stop();
        startProcess();
    }

    @Override
    public void close() {
        stop();
    }

    private void startProcess() {
        runAsPostgresOnHost(program("pg_ctl"), "-D", data.toString(), "-l", directory.resolve("postgres.log").toString(),
                // fsync off (unless durable): the operating system keeps what a stopped server wrote; a
                // commit is never acknowledged before its WAL is written (a stop must not lose what a
                // test saw committed). pg_stat_statements: tests count the statements a request costs.
                // Prepared transactions: XA DataSources (Open Liberty's choice) in two-phase commits.
                "-o", "-p " + port + " -k " + directory + " -c listen_addresses=" + host.address()
                        + (durable ? "" : " -c fsync=off -c full_page_writes=off")
                        + " -c shared_preload_libraries=pg_stat_statements"
                        + " -c max_prepared_transactions=16",
                "-w", "start");
    }

    /**
     * A server program of PostgreSQL's: from the {@code PATH}, else from the newest
     * {@code /usr/lib/postgresql/<version>/bin}, where Debian installs them off the {@code PATH}.
     */
    static String program(String name) {
        for (String directory : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (!directory.isEmpty() && Files.isExecutable(Path.of(directory, name))) {
                return name;
            }
        }
        Path versions = Path.of("/usr/lib/postgresql");
        try (Stream<Path> installed = Files.isDirectory(versions) ? Files.list(versions) : Stream.empty()) {
            return installed.map(version -> version.resolve("bin").resolve(name))
                    .filter(Files::isExecutable)
                    .max(Comparator.comparingInt(PostgresServer::majorVersion))
                    .map(Path::toString)
                    .orElse(name);
        } catch (IOException e) {
            return name;
        }
    }

    private static int majorVersion(Path program) {
        try {
            return Integer.parseInt(program.getParent().getParent().getFileName().toString());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private void runAsPostgres(String... command) {
        run(asPostgres(command).toArray(String[]::new));
    }

    /** The server itself runs on its host (pg_ctl starts it there); the other commands anywhere. */
    private void runAsPostgresOnHost(String... command) {
        run(host.command(asPostgres(command)).toArray(String[]::new));
    }

    private static List<String> asPostgres(String... command) {
        List<String> line = new ArrayList<>();
        if (ROOT) {
            line.addAll(List.of("runuser", "-u", "postgres", "--"));
        }
        line.addAll(List.of(command));
        return line;
    }

    private void run(String... command) {
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(directory.resolve("commands.log").toFile())).start();
            if (process.waitFor() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed; see " + directory.resolve("commands.log"));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + String.join(" ", command) + " (is PostgreSQL installed? it-tests/install-prerequisites installs it)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
