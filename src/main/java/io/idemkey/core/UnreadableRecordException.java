package io.idemkey.core;

/**
 * A completed record that is intact in the store but cannot be read with the keys configured now: it
 * was sealed under a key id that is no longer in {@code idempotency.encryption.keys}, or it was
 * written unencrypted before encryption was turned on. Such a record is never replayed (its bytes
 * would be garbage or unauthenticated) and never run again (its operation completed): the request is
 * answered 503 until the key is configured again or the record expires.
 */
public final class UnreadableRecordException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    public UnreadableRecordException(String message) {
        super(message);
    }
}
