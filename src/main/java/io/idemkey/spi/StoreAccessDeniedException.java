package io.idemkey.spi;

/**
 * The store answered, and refused the call: the credentials Idemkey connects with are not accepted,
 * or lack a permission the call needs (a Redis ACL user without a command or a key pattern). A
 * configuration error, not an outage: nothing was applied, and it lasts until the store's user or
 * Idemkey's settings change. The message says what was refused and what is needed, never a secret.
 */
public class StoreAccessDeniedException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * The store refused the call.
     *
     * @param message what was refused, and what the store's user needs
     * @param cause the client's or driver's exception
     */
    public StoreAccessDeniedException(String message, Throwable cause) {
        super(message, cause);
    }
}
