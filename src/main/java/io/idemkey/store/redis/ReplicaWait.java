package io.idemkey.store.redis;

import redis.clients.jedis.Pipeline;
import redis.clients.jedis.Response;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import java.util.logging.Logger;

/**
 * {@code wait-replicas}: the {@code WAIT} that follows a completion on its connection (in a
 * cluster: to the record's master), which returns once that many replicas have everything the
 * connection wrote, the completion included, or at the timeout; and what is done with its answer.
 * A completion the replicas did not all acknowledge in time is logged and counted, and still
 * reported done: the master has it, and the caller's response must go out.
 */
final class ReplicaWait {

    /** The store's logger: the one an operator configures for the Redis store. */
    private static final Logger LOG = Logger.getLogger(RedisIdempotencyStore.class.getName());

    private final int replicas;
    private final long timeoutMillis;
    private final LongAdder notReplicated = new LongAdder();
    private volatile Runnable whenNotReplicated = () -> { };

    /**
     * @param replicas replicas that must acknowledge a completion; 0: none, no {@code WAIT}
     * @param timeout  how long a completion waits for them
     */
    ReplicaWait(int replicas, Duration timeout) {
        this.replicas = replicas;
        this.timeoutMillis = Math.max(1, timeout.toMillis());
    }

    /** Whether completions wait for replicas. */
    boolean wanted() {
        return replicas > 0;
    }

    /** {@code WAIT} on the pipeline, after the completion; its reply is how many replicas acknowledged. */
    Response<Long> sendTo(Pipeline pipeline) {
        return pipeline.waitReplicas(replicas, timeoutMillis);
    }

    /**
     * The record script's completion and {@code WAIT} in one pipeline on a connection to the
     * record's master ({@link RedisCommands#onMaster}): {reply, replicas that acknowledged}.
     */
    List<?> completion(RedisCommands commands, List<byte[]> keys, List<byte[]> argv) {
        return commands.withScript((client, sha1) -> (List<?>) commands.onMaster(keys.get(0), asking -> pipeline -> {
            RedisCommands.asking(pipeline, asking);
            Response<Object> completed = RedisCommands.script(pipeline, keys, argv, sha1);
            Response<Long> waited = sendTo(pipeline);
            return () -> List.of(completed.get(), waited.get());
        }));
    }

    /** A completion fewer than {@code wait-replicas} replicas acknowledged in time is logged and counted. */
    void check(String recordKey, long acknowledged) {
        if (acknowledged < replicas) {
            notReplicated.increment();
            whenNotReplicated.run();
            LOG.warning("Idemkey: the completion of the record " + recordKey + " was acknowledged by " + acknowledged
                    + " of the " + replicas + " replicas wanted within " + timeoutMillis + " ms: it is on the master"
                    + " only, and a failover now may forget it (idempotency.redis.wait-replicas)");
        }
    }

    /** Runs {@code action} for each completion fewer replicas acknowledged in time than wanted. */
    void whenNotReplicated(Runnable action) {
        this.whenNotReplicated = action;
    }

    /** Completions fewer replicas acknowledged in time than wanted, since the store opened. */
    long notReplicated() {
        return notReplicated.sum();
    }
}
