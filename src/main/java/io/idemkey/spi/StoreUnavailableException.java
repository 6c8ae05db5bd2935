package io.idemkey.spi;

/**
 * The store could not be reached (connection refused, timed out, pool exhausted). The operation may
 * or may not have been applied; callers treat the store as unavailable.
 */
public class StoreUnavailableException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public StoreUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
