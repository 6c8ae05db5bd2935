package io.idemkey.core;

import io.idemkey.spi.StoreInspection;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.logging.Logger;

/**
 * What operators may do with records, over a store that offers {@link StoreInspection}: look a key up,
 * purge one (with a reason, in an audit line), list the keys stuck in progress. Plain Java, shared by
 * the admin API ({@code io.idemkey.admin}) and the command line tool ({@code io.idemkey.admin.cli}).
 *
 * <p>Keys are found as the engine stores them: the record key ({@link RecordKey}) of the caller and
 * the client's key, or of an idempotent call's scope and key, then {@link RecordIdentifiers#storeKey}
 * (the HMAC, where identifiers are hashed). With hashed identifiers the stuck list can show only the
 * store keys ({@code <prefix>h=<hash>}): neither caller nor key can be read back from them, but a
 * look-up of a suspected caller and key gives the same store key to compare.
 *
 * <p>Audit lines go to the logger {@value #AUDIT_LOGGER} at INFO, one per purge attempt, refused
 * ones included: {@code idempotency-admin purge by=<who> record=<store key> force=<bool>
 * outcome=<PURGED|ABSENT|IN_PROGRESS> reason="<why>"}; and one per look-up of a body (a body is
 * the decrypted response, personal data), refused ones included: {@code idempotency-admin
 * look-up-body by=<who> record=<store key> outcome=<SHOWN|UNREADABLE|IN_PROGRESS|ABSENT|REFUSED>}.
 */
public final class RecordAdmin {

    /** The logger of the audit lines. */
    public static final String AUDIT_LOGGER = "io.idemkey.audit";
    /** The longest reason a purge takes. */
    public static final int MAX_REASON_LENGTH = 500;
    /** How many store pages one stuck-list page looks at, at most. */
    static final int STORE_PAGES_PER_PAGE = 10;

    private static final Logger AUDIT = Logger.getLogger(AUDIT_LOGGER);
    private static final HexFormat HEX = HexFormat.of();

    private final StoreInspection store;
    private final String keyPrefix;
    private final RecordIdentifiers identifiers;
    private final RecordCodec codec;
    private final Duration defaultTtl;
    private final Clock clock;
    private final Consumer<String> purged;

    /**
     * @param store       the store's inspection capability
     * @param keyPrefix   {@code idempotency.key-prefix}
     * @param identifiers how store keys are made (plain or HMAC)
     * @param codec       how completed records are read (to show a body, where asked and allowed)
     * @param defaultTtl  {@code idempotency.ttl}: a completed record's age is this less its TTL left
     * @param clock       now, for owner ages
     * @param purged      told the store key of each record purged (the engine forgets its cached replay)
     */
    public RecordAdmin(StoreInspection store, String keyPrefix, RecordIdentifiers identifiers, RecordCodec codec,
                       Duration defaultTtl, Clock clock, Consumer<String> purged) {
        this.store = Objects.requireNonNull(store, "store");
        this.keyPrefix = Objects.requireNonNull(keyPrefix, "keyPrefix");
        this.identifiers = Objects.requireNonNull(identifiers, "identifiers");
        this.codec = Objects.requireNonNull(codec, "codec");
        this.defaultTtl = Objects.requireNonNull(defaultTtl, "defaultTtl");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.purged = Objects.requireNonNull(purged, "purged");
    }

    /** The store key of an HTTP request's record: the caller (its scope value, empty for none) and the client's key. */
    public String requestStoreKey(String caller, String key) {
        return identifiers.storeKey(RecordKey.of(keyPrefix, caller, key));
    }

    /** The store key of an idempotent call's record: the call's scope and key. */
    public String callStoreKey(String scope, String key) {
        return identifiers.storeKey(RecordKey.ofCall(keyPrefix, scope, key));
    }

    /** The record under {@code storeKey}, as operators see it, without its headers and body. */
    public Optional<KeyState> lookUp(String storeKey) {
        return store.inspect(storeKey).map(record -> state(record, false));
    }

    /**
     * The record under {@code storeKey} with a completed record's headers and body decoded (the
     * caller checked that this is allowed), and the audit line saying who looked.
     *
     * @param who who asks (a user name)
     */
    public Optional<KeyState> lookUpWithBody(String storeKey, String who) {
        String outcome = "FAILED"; // the store's answer did not come back
        try {
            Optional<KeyState> state = store.inspect(storeKey).map(record -> state(record, true));
            outcome = state.map(found -> !found.completed() ? "IN_PROGRESS"
                    : found.body().text() != null ? "SHOWN" : "UNREADABLE").orElse("ABSENT");
            return state;
        } catch (RuntimeException failed) {
            outcome = "FAILED(" + failed.getClass().getSimpleName() + ")";
            throw failed;
        } finally {
            auditLookUp(storeKey, who, outcome);
        }
    }

    /** Writes the audit line of a body look-up refused before the store was asked (bodies are not shown here). */
    public void bodyRefused(String storeKey, String who) {
        auditLookUp(storeKey, who, "REFUSED");
    }

    private static void auditLookUp(String storeKey, String who, String outcome) {
        AUDIT.info(() -> "idempotency-admin look-up-body by=" + quoted(who) + " record=" + quoted(storeKey)
                + " outcome=" + outcome);
    }

    /**
     * Purges the record under {@code storeKey} and writes the audit line.
     *
     * @param who    who asks (a user name)
     * @param reason why (required: 1 to {@value #MAX_REASON_LENGTH} characters, one line)
     * @throws IllegalArgumentException if the reason is missing or not one line
     */
    public StoreInspection.Purge purge(String storeKey, boolean force, String who, String reason) {
        checkReason(reason);
        String outcome = "FAILED"; // the store's answer did not come back: the record may be gone all the same
        boolean answered = false;
        try {
            StoreInspection.Purge answer = store.purge(storeKey, force);
            outcome = answer.name();
            answered = true;
            if (answer == StoreInspection.Purge.PURGED) {
                purged.accept(storeKey);
            }
            return answer;
        } catch (RuntimeException failed) {
            outcome = answered ? outcome + " (then: " + failed.getClass().getSimpleName() + ")"
                    : "FAILED(" + failed.getClass().getSimpleName() + ")";
            throw failed;
        } finally {
            String written = outcome;
            AUDIT.info(() -> "idempotency-admin purge by=" + quoted(who) + " record=" + quoted(storeKey) + " force=" + force
                    + " outcome=" + written + " reason=" + quoted(reason));
        }
    }

    /** The reason a purge needs, checked: present, one line, bounded. */
    public static void checkReason(String reason) {
        if (reason == null || reason.isBlank()) {
            throw new IllegalArgumentException("a purge needs a reason (it goes into the audit line)");
        }
        if (reason.length() > MAX_REASON_LENGTH) {
            throw new IllegalArgumentException("the reason has " + reason.length() + " characters; at most "
                    + MAX_REASON_LENGTH);
        }
        if (reason.chars().anyMatch(Character::isISOControl)) {
            throw new IllegalArgumentException("the reason must be one line of text, without control characters");
        }
    }

    /**
     * One page of the records in progress for at least {@code olderThan} (by their owner token's time;
     * a record whose token has no time is listed, its age unknown). Looks at no more than
     * {@value #STORE_PAGES_PER_PAGE} store pages of {@code limit}: a page may hold fewer records
     * than the limit, even none, and still have a next one.
     *
     * @param cursor the empty string for the first page, then the previous page's {@link StuckPage#nextCursor()}
     * @throws IllegalArgumentException for a limit out of 1 to 1000, a negative age or a cursor the store did not make
     */
    public StuckPage stuck(Duration olderThan, String cursor, int limit) {
        if (olderThan.isNegative()) {
            throw new IllegalArgumentException("the age must not be negative: " + olderThan);
        }
        StoreInspection.checkLimit(limit);
        Instant now = clock.instant();
        List<KeyState> found = new ArrayList<>();
        String next = cursor;
        for (int pages = 0; pages < STORE_PAGES_PER_PAGE && found.size() < limit; pages++) {
            StoreInspection.Page page = store.inProgress(keyPrefix, next, limit);
            for (StoreInspection.StoredRecord record : page.records()) {
                Optional<Duration> age = ownerAge(record, now);
                if (age.isEmpty() || age.get().compareTo(olderThan) >= 0) {
                    found.add(state(record, false));
                }
            }
            next = page.nextCursor();
            if (next.isEmpty()) {
                break;
            }
        }
        return new StuckPage(found, next);
    }

    private Optional<Duration> ownerAge(StoreInspection.StoredRecord record, Instant now) {
        return OwnerTokens.acquiredAt(record.ownerToken()).map(at -> at.isAfter(now) ? Duration.ZERO : Duration.between(at, now));
    }

    private KeyState state(StoreInspection.StoredRecord record, boolean withBody) {
        String fingerprint = HEX.formatHex(record.fingerprint());
        if (!record.completed()) {
            return new KeyState(record.recordKey(), false, fingerprint, ownerAge(record, clock.instant()).orElse(null),
                    record.timeLeft(), null, 0, null, null);
        }
        byte[] stored = record.response();
        Integer status = RecordCodec.storedStatus(stored).orElse(null);
        Duration age = defaultTtl.compareTo(record.timeLeft()) >= 0 ? defaultTtl.minus(record.timeLeft()) : null;
        Body body = null;
        if (withBody) {
            try {
                StoredResponse response = codec.decode(record.recordKey(), record.fingerprint(), stored);
                body = new Body(response.headers(), new String(response.body(), StandardCharsets.UTF_8), null);
            } catch (IllegalArgumentException e) { // unreadable with the keys configured, or corrupt
                body = new Body(List.of(), null, e.getMessage());
            }
        }
        return new KeyState(record.recordKey(), true, fingerprint, null, record.timeLeft(), status, stored.length, age, body);
    }

    private static String quoted(String value) {
        StringBuilder out = new StringBuilder(value.length() + 2).append('"');
        for (char c : value.toCharArray()) {
            if (c == '"' || c == '\\') {
                out.append('\\');
            }
            out.append(Character.isISOControl(c) ? '?' : c);
        }
        return out.append('"').toString();
    }

    /**
     * A record as operators see it.
     *
     * @param storeKey    the key the store keeps it under
     * @param completed   completed, or in progress
     * @param fingerprint the stored fingerprint, hex: 16 bytes of the request's SHA-256 fingerprint, or, with hashed
     *                    identifiers, of its HMAC ({@link RecordIdentifiers#storedFingerprint})
     * @param ownerAge    in progress: how long since its owner acquired it (null if its token does not say)
     * @param timeLeft    in progress: the lease left; completed: the TTL left
     * @param status      completed: the stored HTTP status (null for a record it cannot tell)
     * @param size        completed: the stored record's size in bytes (encrypted, where records are)
     * @param age         completed: {@code idempotency.ttl} less the TTL left (null where the TTL left is longer:
     *                    an endpoint with a TTL of its own)
     * @param body        the decoded response, only where asked for
     */
    public record KeyState(String storeKey, boolean completed, String fingerprint, Duration ownerAge, Duration timeLeft,
                           Integer status, int size, Duration age, Body body) {
    }

    /**
     * A completed record's response, decoded.
     *
     * @param headers    the replayed headers
     * @param text       the body as UTF-8 text (null if unreadable)
     * @param unreadable why it could not be read (null if it could)
     */
    public record Body(List<StoredResponse.Header> headers, String text, String unreadable) {
    }

    /**
     * One page of stuck records.
     *
     * @param records    the records in progress for at least the age asked
     * @param nextCursor the cursor of the next page, empty after the last
     */
    public record StuckPage(List<KeyState> records, String nextCursor) {
    }
}
