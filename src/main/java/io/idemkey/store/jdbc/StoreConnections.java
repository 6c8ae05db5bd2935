package io.idemkey.store.jdbc;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The JDBC store's connections: borrowed from the application's DataSource for one store call at a
 * time, and bounded by the store's timeout from end to end, whatever the container's pool does.
 *
 * <ul>
 * <li><b>Checkout.</b> A pool that every business transaction drained makes a borrower wait up to
 *     its own limit (30 to 60 s): the {@link CheckoutWatchdog} ends the wait at the call's deadline.
 * <li><b>Reads.</b> A statement timeout is carried out by the database, which a connection whose
 *     peer silently vanished (a partition, a dead host) never reaches, and its cancel then waits for
 *     the driver's own limit (pgjdbc: 10 s): the connection's network timeout
 *     ({@link Connection#setNetworkTimeout}) ends the read at the call's deadline instead (the
 *     connection is then broken), a second before the statement timeout would start a cancel. It
 *     is put back as it was before the connection is given back (Payara would keep it).
 * <li><b>Broken connections.</b> A pool that does not validate the connections it hands out (the
 *     default on Payara) keeps handing out those a database restart killed. Outside a transaction,
 *     one that fails as broken is aborted ({@link Connection#abort}: both servers then remove it
 *     from the pool) and the call runs again on another, while its time lasts. Inside the caller's
 *     transaction nothing runs again: the transaction's connection is the one there is.
 * </ul>
 */
final class StoreConnections implements AutoCloseable {

    private static final Logger LOG = Logger.getLogger(StoreConnections.class.getName());
    /** How much later than the network timeout the statement timeout comes (the driver's cancel: a fallback). */
    private static final int CANCEL_AFTER_SECONDS = 1;
    /** The most connections one call tries (each broken one costs a failed round trip, a few ms). */
    private static final int MOST_ATTEMPTS = 20;
    private static final Executor ON_CALLER = Runnable::run;

    /** One statement (or a few) on a borrowed connection. */
    @FunctionalInterface
    interface Work<T> {
        /**
         * @param timeoutSeconds the statement timeout to set: the call's time left, whole seconds, plus
         *                       a second (the network timeout, where the connection has one, comes first)
         */
        T run(Connection connection, int timeoutSeconds) throws SQLException;
    }

    private final DataSource dataSource;
    private final String table;
    private final Duration timeout;
    private final CheckoutWatchdog watchdog = new CheckoutWatchdog();

    StoreConnections(DataSource dataSource, String table, int timeoutSeconds) {
        this.dataSource = dataSource;
        this.table = table;
        this.timeout = Duration.ofSeconds(timeoutSeconds);
    }

    /**
     * Runs the work on a connection outside any transaction (in auto-commit mode), within the
     * store's timeout; on a broken connection, again on another.
     *
     * @throws NoConnectionException if no connection could be borrowed in time
     * @throws SQLException          what the work threw last
     */
    <T> T outsideTransaction(String operation, Work<T> work) throws SQLException {
        long deadline = System.nanoTime() + timeout.toNanos();
        for (int attempt = 1; ; attempt++) {
            Borrowed borrowed = borrow(operation, deadline);
            try {
                T result = work.run(borrowed.connection, timeoutSeconds(deadline));
                borrowed.giveBack();
                return result;
            } catch (SQLException e) {
                boolean broken = isBroken(e);
                if (broken) {
                    borrowed.discard();
                } else {
                    borrowed.giveBack();
                }
                if (!broken || attempt == MOST_ATTEMPTS || System.nanoTime() >= deadline) {
                    throw e;
                }
                int tried = attempt;
                LOG.fine(() -> "Idemkey: a broken pooled connection to " + table + " was discarded (" + e.getMessage()
                        + "); " + operation + " runs again on another (attempt " + (tried + 1) + ")");
            } catch (RuntimeException | Error e) {
                borrowed.giveBack();
                throw e;
            }
        }
    }

    /**
     * Runs the work on the connection the container enlists in the caller's transaction, once,
     * within the store's timeout.
     */
    <T> T inTransaction(String operation, Work<T> work) throws SQLException {
        return inTransaction(operation, work, result -> false, connection -> {
        });
    }

    /**
     * {@link #inTransaction(String, Work)}, keeping the connection open when {@code keep} says so of
     * the work's result: handed to {@code kept} for more work in the same transaction
     * ({@link #onKept}), to be {@linkplain #close(Connection) closed} once the transaction has ended.
     */
    <T> T inTransaction(String operation, Work<T> work, Predicate<T> keep, Consumer<Connection> kept) throws SQLException {
        long deadline = System.nanoTime() + timeout.toNanos();
        Borrowed borrowed = borrow(operation, deadline);
        boolean keeping = false;
        try {
            enlist(borrowed.connection, operation);
            T result = work.run(borrowed.connection, timeoutSeconds(deadline));
            keeping = keep.test(result);
            return result;
        } finally {
            borrowed.restore();
            if (keeping) {
                kept.accept(borrowed.connection);
            } else {
                borrowed.close();
            }
        }
    }

    /** More work in the transaction on a connection {@link #inTransaction(String, Work, Predicate, Consumer)} kept. */
    <T> T onKept(Connection connection, Work<T> work) throws SQLException {
        return work.run(connection, (int) timeout.toSeconds() + CANCEL_AFTER_SECONDS);
    }

    /** Gives a kept connection back to its pool. */
    static void close(Connection connection) {
        try {
            connection.close();
        } catch (SQLException | RuntimeException e) {
            LOG.log(Level.FINE, "Idemkey: a connection kept for a transaction could not be closed", e);
        }
    }

    /**
     * Has the container enlist the connection in the caller's transaction now, before any statement
     * runs: Open Liberty does it as the first statement is created, and refuses there a second
     * resource that is not XA ("Illegal attempt to enlist multiple 1PC XAResources"), as Payara does
     * when the connection is borrowed. Either way the store got no connection in the transaction.
     */
    private void enlist(Connection connection, String operation) {
        try (java.sql.Statement nothing = connection.createStatement()) {
            // created (on the client only, for both drivers) and closed: enlisted
        } catch (SQLException e) {
            throw new NoConnectionException("The idempotency table " + table + " could not " + operation
                    + ": no connection in the transaction (" + e.getMessage() + ")", e);
        }
    }

    /** Whether a connection can be borrowed and answers, within the timeout. */
    boolean isAvailable() {
        try {
            return outsideTransaction("check the database", (connection, seconds) -> connection.isValid(seconds));
        } catch (SQLException | RuntimeException e) {
            return false;
        }
    }

    @Override
    public void close() {
        watchdog.close();
    }

    /**
     * A connection whose failure means it is dead, not that the statement failed: said by the
     * exception or by one it wraps (Payara wraps the driver's in an SQLException of its own, without
     * an SQL state).
     */
    static boolean isBroken(SQLException failure) {
        for (Throwable e = failure; e != null; e = e.getCause() == e ? null : e.getCause()) {
            if (e instanceof SQLTransientConnectionException) {
                return false; // the pool had no connection in time (Liberty): not this connection's fault
            }
            if (e instanceof SQLNonTransientConnectionException || e instanceof SQLRecoverableException) {
                return true;
            }
            if (e instanceof SQLException sql && sql.getSQLState() != null) {
                String state = sql.getSQLState();
                return state.startsWith("08")                                                // connection exception
                        || state.equals("57P01") || state.equals("57P02") || state.equals("57P03"); // the server went down
            }
        }
        return false;
    }

    private Borrowed borrow(String operation, long deadline) {
        Duration left = Duration.ofNanos(deadline - System.nanoTime());
        if (left.isNegative() || left.isZero()) {
            throw new NoConnectionException("The idempotency table " + table + " could not " + operation
                    + ": no time left for a connection (idempotency.jdbc.timeout-seconds)", null);
        }
        Connection connection;
        try (CheckoutWatchdog.Armed watch = watchdog.arm(left)) {
            try {
                connection = dataSource.getConnection();
            } catch (SQLException e) {
                // a container's pool reports a refused connection in its own words, without an SQL state
                String why = watch.fired() ? "none within " + left.toMillis() + " ms (the pool is exhausted?)" : e.getMessage();
                throw new NoConnectionException("The idempotency table " + table + " could not " + operation
                        + ": no connection (" + why + ")", e);
            }
        }
        return new Borrowed(connection, deadline);
    }

    private static int timeoutSeconds(long deadline) {
        long left = deadline - System.nanoTime();
        return (int) Math.max(1, (left + 999_999_999L) / 1_000_000_000L) + CANCEL_AFTER_SECONDS;
    }

    /** A borrowed connection, its network timeout set for this call. */
    private static final class Borrowed {
        private final Connection connection;
        private final int networkTimeoutBefore;
        private final boolean networkTimeoutSet;

        Borrowed(Connection connection, long deadline) {
            this.connection = connection;
            int before = 0;
            boolean set = false;
            try {
                before = connection.getNetworkTimeout();
                long millis = Duration.ofNanos(deadline - System.nanoTime()).toMillis();
                connection.setNetworkTimeout(ON_CALLER, (int) Math.min(Integer.MAX_VALUE, Math.max(1, millis)));
                set = true;
            } catch (SQLException | RuntimeException | AbstractMethodError unsupported) {
                // a driver or pool without it (or Liberty, for a handle the transaction shares with others):
                // the statement timeout alone bounds the call
            }
            this.networkTimeoutBefore = before;
            this.networkTimeoutSet = set;
        }

        void giveBack() {
            restore();
            close();
        }

        /** Puts the connection's network timeout back as it was. */
        void restore() {
            try {
                if (networkTimeoutSet && !connection.isClosed()) {
                    connection.setNetworkTimeout(ON_CALLER, networkTimeoutBefore);
                }
            } catch (SQLException | RuntimeException e) {
                // the connection broke meanwhile: the pool finds out
            }
        }

        void close() {
            try {
                connection.close();
            } catch (SQLException | RuntimeException e) {
                LOG.log(Level.FINE, "Idemkey: a connection could not be given back", e);
            }
        }

        /** Gives a dead connection back so that the pool destroys it instead of handing it out again. */
        void discard() {
            try {
                connection.abort(ON_CALLER);
            } catch (SQLException | RuntimeException | AbstractMethodError e) {
                giveBack();
            }
        }
    }
}
