package io.idemkey.store.redis;

import redis.clients.jedis.Protocol;
import redis.clients.jedis.Response;
import redis.clients.jedis.exceptions.JedisDataException;

import java.util.Arrays;
import java.util.function.Function;
import java.util.function.Supplier;

import static io.idemkey.store.redis.RecordLayout.bytes;

/**
 * The plain commands the store sends in place of the record script where the server has them
 * ({@link ServerCapabilities}), each the script's decision in one atomic step: an acquire's
 * {@code SET ... NX ... GET} and {@code PTTL}, and a completion's {@code SET ... IFEQ}. Each is
 * given as commands for a pipeline to the key's master, with {@code ASKING} before each where
 * the slot is being migrated ({@link RedisCommands#onMaster}).
 */
final class PlainCommands {

    private static final byte[] NX = bytes("NX");
    private static final byte[] PX = bytes("PX");
    private static final byte[] GET = bytes("GET");
    private static final byte[] IFEQ = bytes("IFEQ");

    private PlainCommands() {
    }

    /**
     * {@code SET key <record> NX PX <ttl> GET}, then {@code PTTL key}; their reply: {null, 0} where
     * the record was written, else {the record there, the time it has left}.
     */
    static Function<Boolean, CoalescedCalls.Request> setThenPttl(byte[] key, byte[] record, byte[] ttl) {
        return asking -> pipeline -> {
            RedisCommands.asking(pipeline, asking);
            Response<Object> found = pipeline.sendCommand(Protocol.Command.SET, key, record, NX, PX, ttl, GET);
            RedisCommands.asking(pipeline, asking);
            Response<Long> left = pipeline.pttl(key);
            // acquired whatever PTTL answered (a slot migrating between the two redirects only the second)
            return () -> {
                Object existing = found.get();
                return existing == null ? Arrays.asList(null, 0L) : Arrays.asList(existing, left.get());
            };
        };
    }

    /**
     * {@code SET key <completed> IFEQ <expected> PX <ttl>}, and {@code WAIT} after it where
     * completions wait for replicas; their reply: {OK or null where nothing was written, the
     * replicas that acknowledged or null}.
     */
    static Function<Boolean, CoalescedCalls.Request> setIfEqual(byte[] key, byte[] completed, byte[] expected, byte[] ttl,
                                                                ReplicaWait replicas) {
        return asking -> pipeline -> {
            RedisCommands.asking(pipeline, asking);
            Response<Object> set = pipeline.sendCommand(Protocol.Command.SET, key, completed, IFEQ, expected, PX, ttl);
            Response<Long> waited = replicas.wanted() ? replicas.sendTo(pipeline) : null;
            return () -> Arrays.asList(set.get(), waited == null ? null : waited.get());
        };
    }

    /**
     * The commands' reply, or null where Redis refused their {@code SET} before looking at the key
     * because it may not write now ({@link RedisReply#writeRefused()}).
     */
    static Object unlessWriteRefused(Supplier<Object> commands) {
        try {
            return commands.get();
        } catch (JedisDataException e) {
            if (RedisReply.of(e).writeRefused()) {
                return null;
            }
            throw e;
        }
    }
}
