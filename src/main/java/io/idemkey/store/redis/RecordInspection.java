package io.idemkey.store.redis;

import io.idemkey.spi.StoreInspection;
import io.idemkey.spi.StoreInspection.Page;
import io.idemkey.spi.StoreInspection.Purge;
import io.idemkey.spi.StoreInspection.StoredRecord;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Connection;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.Response;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static io.idemkey.store.redis.RecordLayout.LISTED;
import static io.idemkey.store.redis.RecordLayout.bytes;

/**
 * The store's {@link StoreInspection} on Redis: one record looked at or purged (the record
 * script's {@code inspect} and {@code purge}), and the records in progress under a key prefix,
 * page by page, walked with {@code SCAN} over every master.
 */
final class RecordInspection {

    /** How many SCAN calls one page of {@link #inProgress} makes at most. */
    static final int SCANS_PER_PAGE = 10;

    private final RedisCommands commands;

    RecordInspection(RedisCommands commands) {
        this.commands = commands;
    }

    Optional<StoredRecord> inspect(String recordKey) {
        return RecordLayout.stored(recordKey, (List<?>) commands.script(recordKey, RecordLayout.INSPECT));
    }

    Purge purge(String recordKey, boolean force) {
        return RecordLayout.purged(commands.script(recordKey, RecordLayout.PURGE, bytes(force ? "1" : "0")));
    }

    /**
     * {@code SCAN} with {@code MATCH <prefix>*} on each master in turn ({@link Masters#all()}: one for
     * a server or Sentinel, each of a cluster's), then the record script's {@code listed} for the
     * keys found, pipelined on the same connection: it answers only for a record in progress (a few
     * hundred bytes at most), so no completed record's response leaves Redis. The cursor is the
     * master's index and its SCAN cursor, {@code <index>:<cursor>}; a page makes at most
     * {@value #SCANS_PER_PAGE} SCAN calls of {@code COUNT} max(100, limit), stops once it holds the
     * limit (the last call's records all kept: a SCAN cursor cannot stop half-way, so a page may
     * hold up to one call's records more), and stops at the end of a master (so a key a failover
     * moves between masters may be seen twice, or, when a cluster's masters change while the pages
     * are walked, missed on that walk).
     */
    Page inProgress(String keyPrefix, String cursor, int limit) {
        StoreInspection.checkLimit(limit);
        int master = 0;
        String scanCursor = "0";
        if (!cursor.isEmpty()) {
            int colon = cursor.indexOf(':');
            try {
                master = Integer.parseInt(cursor.substring(0, Math.max(0, colon)));
                scanCursor = Long.toUnsignedString(Long.parseUnsignedLong(cursor.substring(colon + 1)));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not a cursor of the Redis store: " + cursor);
            }
            if (master < 0) {
                throw new IllegalArgumentException("not a cursor of the Redis store: " + cursor);
            }
        }
        int startMaster = master;
        String startCursor = scanCursor;
        return commands.execute(client -> page(keyPrefix, startMaster, startCursor, limit));
    }

    private Page page(String keyPrefix, int masterIndex, String scanCursor, int limit) {
        Masters masters = commands.masters();
        List<HostAndPort> all = masters.all();
        if (masterIndex >= all.size()) {
            return new Page(List.of(), "");
        }
        List<StoredRecord> found = new ArrayList<>();
        String next = scanCursor;
        try (Connection connection = masters.connection(all.get(masterIndex))) {
            byte[] sha1 = (byte[]) connection.executeCommand(
                    new CommandArguments(Protocol.Command.SCRIPT).add("LOAD").add(RecordLayout.SCRIPT.source()));
            ScanParams match = new ScanParams().match(RecordLayout.globEscaped(keyPrefix) + "*").count(Math.max(100, limit));
            for (int scans = 0; scans < SCANS_PER_PAGE && found.size() < limit; scans++) {
                Pipeline pipeline = new Pipeline(connection);
                Response<ScanResult<byte[]>> scanned = pipeline.scan(bytes(next), match);
                pipeline.sync();
                next = scanned.get().getCursor();
                List<byte[]> keys = scanned.get().getResult().stream().filter(key -> !RecordLayout.isCounter(key)).toList();
                Pipeline inspections = new Pipeline(connection);
                List<Response<Object>> replies = new ArrayList<>(keys.size());
                for (byte[] key : keys) {
                    replies.add(inspections.evalsha(sha1, List.of(key), List.of(LISTED)));
                }
                inspections.sync();
                for (int i = 0; i < keys.size(); i++) {
                    Object reply;
                    try {
                        reply = replies.get(i).get();
                    } catch (JedisDataException notARecord) { // moved away meanwhile, or a key of another kind
                        if (RedisFailures.refused(notARecord)) {
                            throw notARecord; // refused to this user: classified as a refusal by the command runner
                        }
                        continue;
                    }
                    RecordLayout.stored(new String(keys.get(i), StandardCharsets.UTF_8), (List<?>) reply)
                            .filter(record -> !record.completed())
                            .ifPresent(found::add);
                }
                if ("0".equals(next)) {
                    break;
                }
            }
        }
        String nextCursor = "0".equals(next) ? (masterIndex + 1 < all.size() ? (masterIndex + 1) + ":0" : "")
                : masterIndex + ":" + next;
        return new Page(found, nextCursor);
    }
}
