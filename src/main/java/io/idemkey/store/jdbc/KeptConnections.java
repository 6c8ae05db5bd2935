package io.idemkey.store.jdbc;

import java.sql.Connection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;

/**
 * The connections records were completed with in transactions not ended yet, by record key and
 * owner: kept open until the transaction ends, since as it commits a container may hand out no
 * connection in it any more.
 */
final class KeptConnections {

    /** Logs as the store, whose logger operators configure. */
    private static final Logger LOG = Logger.getLogger(JdbcIdempotencyStore.class.getName());

    /**
     * How long a kept connection is kept at most. Its transaction normally ends long before and
     * {@link #ended} closes it; one whose end was never reported (a transaction timeout that ended it
     * on another thread before the completion kept its connection) is closed at the next completion
     * after this: the response is then not rendered again at commit (logged).
     */
    private static final long KEPT_AT_MOST_NANOS = TimeUnit.MINUTES.toNanos(15);

    private final Map<String, Kept> kept = new ConcurrentHashMap<>();

    /** A connection kept for its transaction, since {@code keptAt} ({@link System#nanoTime}). */
    private record Kept(Connection connection, long keptAt) {
    }

    /** Keeps the connection for its transaction; closes those kept too long (see {@link #KEPT_AT_MOST_NANOS}). */
    void keep(String recordKey, String ownerToken, Connection connection) {
        long now = System.nanoTime();
        kept.entrySet().removeIf(entry -> {
            boolean tooLong = now - entry.getValue().keptAt() > KEPT_AT_MOST_NANOS;
            if (tooLong) {
                LOG.warning(() -> "Idemkey closes a connection kept " + TimeUnit.NANOSECONDS.toMinutes(now - entry.getValue().keptAt())
                        + " minutes for a transaction whose end was never reported");
                StoreConnections.close(entry.getValue().connection());
            }
            return tooLong;
        });
        kept.put(key(recordKey, ownerToken), new Kept(connection, now));
    }

    /** The connection kept for the record's transaction, or null. */
    Connection get(String recordKey, String ownerToken) {
        Kept found = kept.get(key(recordKey, ownerToken));
        return found == null ? null : found.connection();
    }

    /** The record's transaction ended: its connection, if one was kept, is closed. */
    void ended(String recordKey, String ownerToken) {
        Kept found = kept.remove(key(recordKey, ownerToken));
        if (found != null) {
            StoreConnections.close(found.connection());
        }
    }

    /** Closes every kept connection. */
    void closeAll() {
        kept.values().forEach(found -> StoreConnections.close(found.connection()));
        kept.clear();
    }

    private static String key(String recordKey, String ownerToken) {
        return recordKey + '\n' + ownerToken;
    }
}
