package io.idemkey.core;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Optional;

/**
 * The one place where a completed record becomes the bytes a store keeps, and back: every store
 * (Redis, JDBC, memory, an application's own) sees only what this returns.
 *
 * <p>Without a {@link RecordCipher} the record is {@link StoredResponseCodec}'s plain form. With one
 * it is sealed:
 * <pre>
 * 0xA3 (1 byte) | status (2 bytes) | key id length (1 byte) | key id (ASCII)
 *      | nonce (12 bytes) | AES-256-GCM(plain form) | tag (16 bytes)
 * associated data: the bytes before the nonce, then the record's store key (UTF-8)
 * </pre>
 * The status stays readable (operators may count outcomes in the store); it is authenticated like
 * the rest. Body and headers are inside the ciphertext only.
 *
 * <p>Reading with a cipher: a record sealed under a key id that is not configured, or a plain record
 * (written before encryption was turned on) unless {@code readUnencrypted}, is
 * {@link UnreadableRecordException}; a record that does not authenticate (changed bytes, or moved to
 * another key) or does not parse is {@link IllegalArgumentException}. Neither is ever replayed.
 */
public final class RecordCodec {

    /** No encryption: the plain form, as before issue 28. */
    public static final RecordCodec PLAIN = new RecordCodec(null, true);

    /** First byte of a sealed record; the plain form starts with its version (2), never this. */
    static final int SEALED = 0xA3;

    private final RecordCipher cipher;
    private final boolean readUnencrypted;

    /**
     * @param cipher          the keys, or null for no encryption
     * @param readUnencrypted with a cipher: whether plain records (written before encryption was
     *                        turned on) are still replayed; for a migration window of {@code ttlHours}
     */
    public RecordCodec(RecordCipher cipher, boolean readUnencrypted) {
        this.cipher = cipher;
        this.readUnencrypted = readUnencrypted;
    }

    /** Whether plain records are still read although records are encrypted (the migration window). */
    public boolean readsUnencrypted() {
        return cipher != null && readUnencrypted;
    }

    public boolean encrypts() {
        return cipher != null;
    }

    /** The stored form of {@code response} under {@code recordKey} (the key the store keeps it at). */
    public byte[] encode(String recordKey, StoredResponse response) {
        byte[] plain = StoredResponseCodec.encode(response);
        if (cipher == null) {
            return plain;
        }
        byte[] header = header(response.status(), cipher.currentKeyId());
        byte[] sealed = cipher.encrypt(plain, associatedData(header, recordKey));
        byte[] out = Arrays.copyOf(header, header.length + sealed.length);
        System.arraycopy(sealed, 0, out, header.length, sealed.length);
        return out;
    }

    /**
     * The response stored under {@code recordKey}.
     *
     * @throws UnreadableRecordException if the record is intact but cannot be read with the keys configured
     * @throws IllegalArgumentException  if the record is corrupt, changed or moved
     */
    public StoredResponse decode(String recordKey, byte[] stored) {
        if (stored.length == 0 || (stored[0] & 0xff) != SEALED) {
            if (cipher != null && !readUnencrypted) {
                throw new UnreadableRecordException("the record is not encrypted (written before "
                        + "idempotency.encryption.keys was set?); it is not replayed unless "
                        + "idempotency.encryption.read-unencrypted=true");
            }
            return StoredResponseCodec.decode(stored);
        }
        if (stored.length < 4) {
            throw new IllegalArgumentException("corrupt sealed record: too short");
        }
        int status = ((stored[1] & 0xff) << 8) | (stored[2] & 0xff);
        int idLength = stored[3] & 0xff;
        if (idLength == 0 || stored.length < 4 + idLength) {
            throw new IllegalArgumentException("corrupt sealed record: key id");
        }
        String keyId = new String(stored, 4, idLength, StandardCharsets.US_ASCII);
        if (cipher == null) {
            throw new UnreadableRecordException("the record is encrypted under the key '" + keyId
                    + "', but idempotency.encryption.keys is not set");
        }
        if (!cipher.knows(keyId)) {
            throw new UnreadableRecordException("the record is encrypted under the key '" + keyId
                    + "', which idempotency.encryption.keys no longer lists " + cipher.keyIds());
        }
        byte[] header = Arrays.copyOf(stored, 4 + idLength);
        byte[] plain = cipher.decrypt(keyId, stored, header.length, associatedData(header, recordKey));
        StoredResponse response = StoredResponseCodec.decode(plain);
        if (response.status() != status) {
            throw new IllegalArgumentException("corrupt sealed record: status differs");
        }
        return response;
    }

    /**
     * The HTTP status a stored record holds, read without keys: a sealed record keeps it readable in its
     * header, the plain form after its version and flags. Empty for bytes that are neither.
     */
    public static Optional<Integer> storedStatus(byte[] stored) {
        int at = stored.length > 0 && (stored[0] & 0xff) == SEALED ? 1 : 2;
        if (stored.length < at + 2) {
            return Optional.empty();
        }
        int status = ((stored[at] & 0xff) << 8) | (stored[at + 1] & 0xff);
        return status >= 100 && status <= 999 ? Optional.of(status) : Optional.empty();
    }

    private static byte[] header(int status, String keyId) {
        byte[] id = keyId.getBytes(StandardCharsets.US_ASCII);
        byte[] header = new byte[4 + id.length];
        header[0] = (byte) SEALED;
        header[1] = (byte) (status >>> 8);
        header[2] = (byte) status;
        header[3] = (byte) id.length;
        System.arraycopy(id, 0, header, 4, id.length);
        return header;
    }

    private static byte[] associatedData(byte[] header, String recordKey) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(header.length + recordKey.length() + 8);
        out.writeBytes(header);
        out.writeBytes(recordKey.getBytes(StandardCharsets.UTF_8));
        return out.toByteArray();
    }

    @Override
    public String toString() {
        return cipher == null ? "unencrypted" : cipher + (readUnencrypted ? ", reading unencrypted records" : "");
    }
}
