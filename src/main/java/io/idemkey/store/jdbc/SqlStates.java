package io.idemkey.store.jdbc;

import java.sql.SQLException;

/** SQL states as drivers and containers report them. */
final class SqlStates {

    private SqlStates() {
    }

    /**
     * The SQL state of the exception or, where it has none (a container's wrapper: Payara reports the
     * driver's failures in an SQLException of its own), of the first it wraps that has one; "" if none does.
     */
    static String of(SQLException failure) {
        for (Throwable e = failure; e != null; e = e.getCause() == e ? null : e.getCause()) {
            if (e instanceof SQLException sql && sql.getSQLState() != null) {
                return sql.getSQLState();
            }
        }
        return "";
    }

    /** The vendor error code of the first exception in the chain that has one (MariaDB's 1205, say); 0 if none. */
    static int vendorCode(SQLException failure) {
        for (Throwable e = failure; e != null; e = e.getCause() == e ? null : e.getCause()) {
            if (e instanceof SQLException sql && sql.getErrorCode() != 0) {
                return sql.getErrorCode();
            }
        }
        return 0;
    }
}
