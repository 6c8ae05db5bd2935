package io.idemkey.testing;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;

/**
 * A connection pool that behaves as a container's does by default where it matters to the JDBC
 * store (Payara's, without connection validation): at most {@code size} connections; a borrower
 * waits up to {@code maxWait} for a free one (and stops waiting, with an {@code SQLException}, when
 * interrupted); idle connections are handed out last-in first-out, never checked; a connection is
 * removed only when its user aborts it ({@link Connection#abort}, counted in {@link #aborted}) or it
 * cannot be put back in auto-commit when given back. Connections are real ones from the given data
 * source.
 */
public final class NonValidatingPool implements DataSource, AutoCloseable {

    private final DataSource physical;
    private final int size;
    private final Duration maxWait;
    private final Deque<Connection> idle = new ArrayDeque<>();
    private int open;
    private boolean closed;
    /** Connections removed because their user aborted them. */
    public final AtomicInteger aborted = new AtomicInteger();

    public NonValidatingPool(DataSource physical, int size, Duration maxWait) {
        this.physical = physical;
        this.size = size;
        this.maxWait = maxWait;
    }

    @Override
    public Connection getConnection() throws SQLException {
        Connection connection = take();
        return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                new java.lang.reflect.InvocationHandler() {
                    private boolean handedBack;

                    @Override
                    public Object invoke(Object proxy, java.lang.reflect.Method method, Object[] args) throws Throwable {
                        switch (method.getName()) {
                            case "close" -> {
                                if (!handedBack) {
                                    handedBack = true;
                                    giveBack(connection);
                                }
                                return null;
                            }
                            case "abort" -> {
                                if (!handedBack) {
                                    handedBack = true;
                                    destroy(connection);
                                }
                                return null;
                            }
                            case "isClosed" -> {
                                return handedBack || connection.isClosed();
                            }
                            default -> {
                                try {
                                    return method.invoke(connection, args);
                                } catch (InvocationTargetException e) {
                                    throw e.getCause();
                                }
                            }
                        }
                    }
                });
    }

    private Connection take() throws SQLException {
        long deadline = System.nanoTime() + maxWait.toNanos();
        synchronized (this) {
            while (!closed && idle.isEmpty() && open >= size) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new SQLException("no free connection within " + maxWait.toMillis() + " ms");
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(this, left);
                } catch (InterruptedException e) {
                    throw new SQLException("interrupted while waiting for a connection", e); // the interrupt consumed
                }
            }
            if (closed) {
                throw new SQLException("the pool is closed");
            }
            if (!idle.isEmpty()) {
                return idle.pop();
            }
            open++;
        }
        try {
            return physical.getConnection();
        } catch (SQLException | RuntimeException e) {
            synchronized (this) {
                open--;
                notifyAll();
            }
            throw e;
        }
    }

    private void giveBack(Connection connection) {
        try {
            connection.setAutoCommit(true);
        } catch (SQLException | RuntimeException broken) {
            discard(connection); // not handed out again, and its place is free
            return;
        }
        synchronized (this) {
            if (!closed) {
                idle.push(connection);
                notifyAll();
                return;
            }
        }
        discard(connection); // given back after the pool closed
    }

    private void destroy(Connection connection) {
        aborted.incrementAndGet();
        discard(connection);
    }

    private void discard(Connection connection) {
        try {
            connection.close();
        } catch (SQLException ignored) {
            // it is dead already
        }
        synchronized (this) {
            open--;
            notifyAll();
        }
    }

    /** Borrows every connection the pool has room for and gives them back: that many idle ones. */
    public void fill() throws SQLException {
        List<Connection> borrowed = new ArrayList<>();
        try {
            for (int i = 0; i < size; i++) {
                borrowed.add(getConnection());
            }
        } finally {
            for (Connection connection : borrowed) {
                connection.close();
            }
        }
    }

    /**
     * Closes the idle connections and each borrowed one as its user gives it back; a borrower then
     * gets an {@code SQLException}.
     */
    @Override
    public void close() {
        List<Connection> idleOnes;
        synchronized (this) {
            closed = true;
            idleOnes = new ArrayList<>(idle);
            idle.clear();
            notifyAll();
        }
        idleOnes.forEach(this::discard);
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        throw new SQLFeatureNotSupportedException();
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
    }

    @Override
    public int getLoginTimeout() {
        return 0;
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
}
