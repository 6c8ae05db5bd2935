package io.idemkey.store.jdbc;

/**
 * The DataSource leads to a database the JDBC store does not speak to (or a version too old): the
 * message names it and the supported ones. At deployment it fails the deployment.
 */
public final class UnsupportedDatabaseException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    UnsupportedDatabaseException(String message) {
        super(message);
    }
}
