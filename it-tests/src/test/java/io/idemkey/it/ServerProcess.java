package io.idemkey.it;

import io.idemkey.testing.PostgresServer;
import io.idemkey.testing.TestDatabase;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * An application server process started by a test (or by the sample launcher), for what an
 * Arquillian managed container cannot show: a deployment that fails, a server killed with
 * {@code kill -9}, two servers side by side. Its output goes to a log file.
 */
public interface ServerProcess extends AutoCloseable {

    /**
     * The JUnit resource lock of the long classes that start their servers and stores themselves and
     * never connect to the shared {@link TestRedis} (which classes on the other thread stop): with
     * {@code @Execution(CONCURRENT)} they run beside the others in the Open Liberty execution, one at
     * a time (it-tests/pom.xml); the other executions run one class per JVM and ignore both.
     */
    String SERVERS_OF_THEIR_OWN = "IT classes with servers and stores of their own";

    /** The servers Idemkey is proven on. */
    enum Kind {
        PAYARA, LIBERTY, WILDFLY;

        /** The server of this test run: {@code -Didemkey.server=payara|liberty|wildfly} (set by each failsafe execution). */
        public static Kind ofThisRun() {
            return valueOf(System.getProperty("idemkey.server", "payara").toUpperCase(Locale.ROOT));
        }
    }

    /**
     * Starts a server with these WARs deployed (context root = file name) and waits until it is ready
     * and every application has started or failed.
     *
     * @param systemProperties for the server's JVM; MicroProfile Config reads them
     */
    static ServerProcess start(Kind kind, List<Path> wars, int port, Map<String, String> systemProperties) {
        return switch (kind) {
            case PAYARA -> PayaraMicroServer.start(wars, port, systemProperties);
            case LIBERTY -> LibertyServer.start(wars, port, systemProperties, List.of());
            case WILDFLY -> WildFlyServer.start(wars, port, systemProperties);
        };
    }

    /**
     * A server of this run's kind on a free port, for the test applications (on Open Liberty they
     * need Jakarta Security, which the sample does not).
     */
    static ServerProcess startForTests(Kind kind, List<Path> wars) {
        return startForTests(kind, wars, freePort());
    }

    /** The same on a given port (a server restarted where it ran before). */
    static ServerProcess startForTests(Kind kind, List<Path> wars, int port) {
        return startForTests(kind, wars, port, Map.of());
    }

    /** The same with these system properties for the server's JVM. */
    static ServerProcess startForTests(Kind kind, List<Path> wars, int port, Map<String, String> systemProperties) {
        return switch (kind) {
            case PAYARA -> PayaraMicroServer.start(wars, port, systemProperties);
            case LIBERTY -> LibertyServer.start(wars, port, systemProperties, List.of("appSecurity-5.0"));
            case WILDFLY -> WildFlyServer.start(wars, port, systemProperties);
        };
    }

    /**
     * A server of this run's kind for the test applications with more options for its JVM, one a
     * test deploys to and undeploys from while it runs (Open Liberty, WildFly).
     */
    static ServerProcess startForRedeploys(Kind kind, List<String> jvmOptions, List<Path> wars) {
        return switch (kind) {
            case PAYARA -> throw new UnsupportedOperationException("Payara Micro is not deployed to while it runs here");
            case LIBERTY -> LibertyServer.startWithJvmOptions(jvmOptions, wars, freePort(), List.of("appSecurity-5.0"));
            case WILDFLY -> WildFlyServer.startWithJvmOptions(jvmOptions, wars, freePort());
        };
    }

    /** Deploys a WAR to the running server (context root = file name) and waits until it started. */
    default void deploy(Path war) {
        throw new UnsupportedOperationException(kind() + " is not deployed to while it runs here");
    }

    /** Undeploys an application from the running server and waits until it stopped. */
    default void undeploy(String application) {
        throw new UnsupportedOperationException(kind() + " is not undeployed from while it runs here");
    }

    /**
     * A server of this run's kind for the test applications, with the DataSource {@code jdbc/idemkey}
     * on a PostgreSQL or MariaDB: {@link #startWithDatabase}, plus Jakarta Security on Open Liberty.
     */
    static ServerProcess startForTestsWithDatabase(Kind kind, List<Path> wars, int port, TestDatabase database) {
        return startWithDatabase(kind, wars, port, Map.of(), database, List.of("appSecurity-5.0"));
    }

    /** {@link #startForTestsWithDatabase} on PostgreSQL. */
    static ServerProcess startForTestsWithPostgres(Kind kind, List<Path> wars, int port, PostgresServer postgres) {
        return startForTestsWithDatabase(kind, wars, port, postgres);
    }

    /** {@link #startWithDatabase(Kind, List, int, Map, TestDatabase, List)} on PostgreSQL. */
    static ServerProcess startWithPostgres(Kind kind, List<Path> wars, int port, Map<String, String> systemProperties,
                                           PostgresServer postgres, List<String> extraLibertyFeatures) {
        return startWithDatabase(kind, wars, port, systemProperties, postgres, extraLibertyFeatures);
    }

    /**
     * A server with the DataSource {@code jdbc/idemkey} on {@code database}, configured the way each
     * server's users do it: on Payara Micro a JDBC connection pool (with the defaults: connections
     * are not validated when handed out, so after a database restart the pool hands out dead ones)
     * and resource created by post-boot commands, the driver added with {@code --addLibs}; on Open
     * Liberty a {@code <dataSource>} with the driver as a {@code <library>} (feature jdbc-4.3); on
     * WildFly the driver deployed and a {@code data-source add} with {@code jboss-cli}, bound in
     * {@code java:/} (the applications' {@code jdbc/idemkey} resolves there), in JTA, not XA.
     */
    static ServerProcess startWithDatabase(Kind kind, List<Path> wars, int port, Map<String, String> systemProperties,
                                           TestDatabase database, List<String> extraLibertyFeatures) {
        return startWithDatabase(kind, wars, port, systemProperties, database, extraLibertyFeatures, List.of("jdbc/idemkey"),
                Map.of());
    }

    /**
     * As {@link #startWithDatabase(Kind, List, int, Map, TestDatabase, List)}, with one DataSource
     * (a pool of its own, of the given largest size or the server's default) per JNDI name, all on
     * the same database. Payara's pools are not XA (a transaction may not enlist a second one); Open
     * Liberty's PostgreSQL ones are (its choice where the driver has an XADataSource): a transaction
     * that uses two commits them in two phases. MariaDB's on Liberty are not XA: its driver (3.x) is
     * named by its DataSource class, which Liberty 26 does not find on its own (it looks for
     * Connector/J 2's MySQLDataSource).
     */
    static ServerProcess startWithDatabase(Kind kind, List<Path> wars, int port, Map<String, String> systemProperties,
                                           TestDatabase database, List<String> extraLibertyFeatures,
                                           List<String> jndiNames, Map<String, Integer> maxPoolSizes) {
        Path postgresDriver = Path.of(System.getProperty("postgresql.driverJar", "target/postgresql.jar")).toAbsolutePath();
        boolean mariadb = database.name().equals("MariaDB");
        String driver = (mariadb ? postgresDriver.resolveSibling("mariadb.jar") : postgresDriver).toString();
        return switch (kind) {
            case PAYARA -> {
                StringBuilder commands = new StringBuilder();
                for (String jndiName : jndiNames) {
                    String pool = jndiName.substring(jndiName.lastIndexOf('/') + 1) + "-pool";
                    String size = maxPoolSizes.containsKey(jndiName)
                            ? " --steadypoolsize 0 --maxpoolsize " + maxPoolSizes.get(jndiName) : "";
                    String source = mariadb
                            ? "--datasourceclassname org.mariadb.jdbc.MariaDbDataSource --restype javax.sql.DataSource%s"
                              + " --property url=jdbc\\:mariadb\\://%s\\:%d/idemkey:user=idemkey:password=idemkey"
                            : "--datasourceclassname org.postgresql.ds.PGSimpleDataSource --restype javax.sql.DataSource%s"
                              + " --property user=postgres:password=unused:serverName=%s:portNumber=%d:databaseName=postgres";
                    commands.append("create-jdbc-connection-pool ").append(source.formatted(size, database.address(),
                            database.port())).append(' ').append(pool).append('\n');
                    commands.append("create-jdbc-resource --connectionpoolid ").append(pool).append(' ').append(jndiName)
                            .append('\n');
                }
                Path file;
                try {
                    file = Files.createTempFile("idemkey-postboot-", ".asadmin");
                    Files.writeString(file, commands);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                yield PayaraMicroServer.start(wars, port, systemProperties,
                        List.of("--addLibs", driver, "--postbootcommandfile", file.toString()));
            }
            case LIBERTY -> {
                List<String> features = new ArrayList<>(extraLibertyFeatures);
                features.add("jdbc-4.3");
                StringBuilder config = new StringBuilder("<library id=\"driver\"><file name=\"%s\"/></library>\n".formatted(driver));
                for (String jndiName : jndiNames) {
                    String size = maxPoolSizes.containsKey(jndiName)
                            ? "<connectionManager maxPoolSize=\"" + maxPoolSizes.get(jndiName) + "\"/>" : "";
                    String id = jndiName.substring(jndiName.lastIndexOf('/') + 1);
                    config.append((mariadb ? """
                            <dataSource id="%s" jndiName="%s" type="javax.sql.DataSource">
                              <jdbcDriver libraryRef="driver" javax.sql.DataSource="org.mariadb.jdbc.MariaDbDataSource"/>%s
                              <properties url="jdbc:mariadb://%s:%d/idemkey" user="idemkey" password="idemkey"/>
                            </dataSource>
                            """ : """
                            <dataSource id="%s" jndiName="%s">
                              <jdbcDriver libraryRef="driver"/>%s
                              <properties.postgresql serverName="%s" portNumber="%d" databaseName="postgres" user="postgres" password="unused"/>
                            </dataSource>
                            """).formatted(id, jndiName, size, database.address(), database.port()));
                }
                yield LibertyServer.startWithConfig(wars, port, systemProperties, features, config.toString());
            }
            case WILDFLY -> {
                String driverName = mariadb ? "mariadb.jar" : "postgresql.jar";
                List<String> cli = new ArrayList<>();
                cli.add("deploy " + driver + " --name=" + driverName);
                for (String jndiName : jndiNames) {
                    String size = maxPoolSizes.containsKey(jndiName)
                            ? " --min-pool-size=0 --max-pool-size=" + maxPoolSizes.get(jndiName) : "";
                    String url = mariadb
                            ? "jdbc:mariadb://%s:%d/idemkey --user-name=idemkey --password=idemkey"
                            : "jdbc:postgresql://%s:%d/postgres --user-name=postgres --password=unused";
                    cli.add("data-source add --name=" + jndiName.substring(jndiName.lastIndexOf('/') + 1)
                            + " --jndi-name=java:/" + jndiName + " --driver-name=" + driverName + size
                            + " --connection-url=" + url.formatted(database.address(), database.port()));
                }
                yield WildFlyServer.start(wars, port, systemProperties, cli);
            }
        };
    }

    Kind kind();

    /** The id of the process started (Payara Micro: its JVM), for its CPU time and allocations. */
    long pid();

    /** The base URI of an application: {@code http://127.0.0.1:<port>/<context>/}. */
    URI uri(String context);

    /** Everything the server printed so far. */
    String log();

    Path logFile();

    /** Waits until the process ends (the sample runs until it is stopped). */
    void await() throws InterruptedException;

    /** Kills the process at once, as {@code kill -9} would. */
    void kill();

    @Override
    default void close() {
        kill();
    }

    /**
     * JVM options for the servers of a test run ({@code -Didemkey.test.serverJvmOptions}, set by each
     * failsafe execution: options that start a short-lived server sooner); none elsewhere, so the
     * benchmark and the sample measure and run servers as configured by default.
     */
    static List<String> testJvmOptions() {
        String options = System.getProperty("idemkey.test.serverJvmOptions", "").strip();
        return options.isEmpty() ? List.of() : List.of(options.split("\\s+"));
    }

    static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
