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
 * 0xA4 (1 byte) | status (2 bytes) | key id length (1 byte) | key id (ASCII)
 *      | nonce (12 bytes) | AES-256-GCM(plain form) | tag (16 bytes)
 * associated data: the bytes before the nonce, the stored fingerprint's length (1 byte), the stored
 *      fingerprint, then the record's store key (UTF-8)
 * </pre>
 * The status stays readable (operators may count outcomes in the store); it is authenticated like
 * the rest. Body and headers are inside the ciphertext only. What a replay relies on is bound to the
 * ciphertext: the store key (a record moved under another key does not decrypt) and the fingerprint
 * the record is kept with (a record whose stored fingerprint was replaced by another request's does
 * not decrypt either, so it never answers that request).
 *
 * <p>Reading with a cipher: a record sealed under a key id that is not configured, one sealed in
 * another form than the above (first byte 0xA3: its associated data held no fingerprint), or a plain
 * record (written before encryption was turned on) unless {@code readUnencrypted}, is
 * {@link UnreadableRecordException}; a record that does not authenticate (changed bytes, moved to
 * another key, kept with another fingerprint) or does not parse is {@link IllegalArgumentException}.
 * Neither is ever replayed.
 */
public final class RecordCodec {

    /** No encryption: the plain form. */
    public static final RecordCodec PLAIN = new RecordCodec(null, true);

    /** First byte of a sealed record; the plain form starts with its version (2), never this. */
    static final int SEALED = 0xA4;
    /** First byte of a record sealed with only its header and store key as associated data: never read. */
    static final int SEALED_WITHOUT_FINGERPRINT = 0xA3;

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

    /**
     * The stored form of {@code response} under {@code recordKey} (the key the store keeps it at),
     * kept with {@code fingerprint} (the fingerprint the store keeps with it).
     */
    public byte[] encode(String recordKey, byte[] fingerprint, StoredResponse response) {
        byte[] plain = StoredResponseCodec.encode(response);
        if (cipher == null) {
            return plain;
        }
        byte[] header = header(response.status(), cipher.currentKeyId());
        byte[] sealed = cipher.encrypt(plain, associatedData(header, fingerprint, recordKey));
        byte[] out = Arrays.copyOf(header, header.length + sealed.length);
        System.arraycopy(sealed, 0, out, header.length, sealed.length);
        return out;
    }

    /**
     * The response stored under {@code recordKey} with {@code fingerprint}.
     *
     * @throws UnreadableRecordException if the record is intact but cannot be read with the keys configured
     * @throws IllegalArgumentException  if the record is corrupt, changed, moved or kept with another fingerprint
     */
    public StoredResponse decode(String recordKey, byte[] fingerprint, byte[] stored) {
        if (stored.length > 0 && (stored[0] & 0xff) == SEALED_WITHOUT_FINGERPRINT) {
            throw new UnreadableRecordException("the record is sealed in a form whose associated data does not"
                    + " hold its fingerprint; it is never replayed");
        }
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
        byte[] plain = cipher.decrypt(keyId, stored, header.length, associatedData(header, fingerprint, recordKey));
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
        int first = stored.length > 0 ? stored[0] & 0xff : -1;
        int at = first == SEALED || first == SEALED_WITHOUT_FINGERPRINT ? 1 : 2;
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

    /** The header (self-delimiting: it holds its key id's length), the fingerprint with its length, the store key. */
    private static byte[] associatedData(byte[] header, byte[] fingerprint, String recordKey) {
        if (fingerprint.length > 255) {
            throw new IllegalArgumentException("a stored fingerprint has at most 255 bytes, not " + fingerprint.length);
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(header.length + 1 + fingerprint.length + recordKey.length() + 8);
        out.writeBytes(header);
        out.write(fingerprint.length);
        out.writeBytes(fingerprint);
        out.writeBytes(recordKey.getBytes(StandardCharsets.UTF_8));
        return out.toByteArray();
    }

    @Override
    public String toString() {
        return cipher == null ? "unencrypted" : cipher + (readUnencrypted ? ", reading unencrypted records" : "");
    }
}
