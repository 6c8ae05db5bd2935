package io.idemkey.spi;

/**
 * The store could not be reached (connection refused, timed out, pool exhausted). The operation may
 * or may not have been applied; callers treat the store as unavailable.
 */
public class StoreUnavailableException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * The store could not be reached.
     *
     * @param message what failed
     * @param cause the client's or driver's exception
     */
    public StoreUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
