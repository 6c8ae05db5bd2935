package io.idemkey.core;

/**
 * The entity has no single canonical form here (malformed, repeated member, too deep, a lone
 * surrogate): the fingerprint hashes its raw bytes instead. Carries no stack trace, since it is
 * thrown for ordinary hostile input and always caught.
 */
final class NotCanonicalizable extends RuntimeException {
    private static final long serialVersionUID = 1L;

    NotCanonicalizable() {
        super(null, null, false, false);
    }
}
