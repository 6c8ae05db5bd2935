package io.idemkey.store.jdbc;

import io.idemkey.spi.StoreUnavailableException;

/**
 * The JDBC store could not borrow a connection from its DataSource: the database may be away, the
 * pool exhausted, or (inside a JTA transaction) the container may refuse to enlist another resource
 * (a second non-XA DataSource in one transaction). No statement ran.
 */
public class NoConnectionException extends StoreUnavailableException {

    private static final long serialVersionUID = 1L;

    public NoConnectionException(String message, Throwable cause) {
        super(message, cause);
    }
}
