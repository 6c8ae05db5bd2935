package io.idemkey.store.redis;

import io.idemkey.spi.StoreUnavailableException;
import redis.clients.jedis.AbstractPipeline;
import redis.clients.jedis.Connection;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.Response;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisAskDataException;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.exceptions.JedisMovedDataException;
import redis.clients.jedis.exceptions.JedisNoScriptException;
import redis.clients.jedis.exceptions.JedisRedirectionException;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;

import static io.idemkey.store.redis.RecordLayout.SCRIPT;

/**
 * Runs the store's commands on its Jedis client (one server, Sentinel or Cluster:
 * {@link RedisStoreOptions#createClient}), made on first use, and again until a sentinel or cluster
 * node answers, never once closed; every failure classified by {@link RedisFailures}.
 *
 * <p>A command that fails on a pooled connection (Redis restarted, a proxy dropped it) is retried
 * once on a fresh connection before the store is declared unavailable, so the first request after
 * Redis returns succeeds; one that timed out (connecting, or waiting for the reply) is not: Redis
 * may have run it, and a Redis that does not answer would be waited for twice. Pooled connections
 * are not pinged on borrow. A call that ends in an outage tells the masters ({@link Masters}),
 * which in a cluster look at the topology again soon (a failover may be under way).
 *
 * <p>Besides single commands on the client, commands pipelined on a connection to a key's master
 * ({@link #onMaster}: a completion with its {@code WAIT}, an acquire's two commands), in a batch of
 * calls to that master ({@link CoalescedCalls}) where the store coalesces, and the record script by
 * its SHA-1, with its text once where a node answers {@code NOSCRIPT}.
 */
final class RedisCommands implements AutoCloseable {

    /** How many redirections in a row a call of the store's own pipelines follows ({@link #onMaster}). */
    static final int REDIRECTIONS = 5;

    private final Supplier<RedisStoreOptions.Connected> connect;
    private final Runnable afterClose;
    private final String description;
    private final RedisFailures failures;
    private final CoalescedCalls coalesced; // null: each call on a connection of its own
    private volatile RedisStoreOptions.Connected connected;
    private boolean closed; // guarded by this

    /**
     * @param connect     makes the client (called again until it succeeds, never once closed); closed here
     * @param afterClose  what to stop once closed, besides the client
     * @param description where the store points, for messages (never with credentials)
     * @param coalesced   the calls sent together, or null: each alone
     */
    RedisCommands(Supplier<RedisStoreOptions.Connected> connect, Runnable afterClose, String description,
                  RedisFailures failures, CoalescedCalls coalesced) {
        this.connect = connect;
        this.afterClose = afterClose;
        this.description = description;
        this.failures = failures;
        this.coalesced = coalesced;
    }

    /** The coalescing path's calls (null without it). */
    CoalescedCalls coalesced() {
        return coalesced;
    }

    /** The masters of the client, as it knows them now (making the client where there is none yet). */
    Masters masters() {
        return connected().masters();
    }

    /** The record script on one record's key; in a batch where the store coalesces. */
    Object script(String recordKey, byte[]... args) {
        return script(List.of(RecordLayout.bytes(recordKey)), args);
    }

    /** The record script on these keys, the record's first; in a batch where the store coalesces. */
    Object script(List<byte[]> keys, byte[]... args) {
        List<byte[]> argv = List.of(args);
        return coalesced == null ? execute(client -> script(client, keys, argv))
                : execute(client -> coalescedScript(keys, argv, client));
    }

    /**
     * Commands that call the record script in a pipeline, as {@link #execute}: given its SHA-1, and
     * where a node never saw the script ({@code NOSCRIPT}), once more given null, for its text.
     */
    <T> T withScript(BiFunction<UnifiedJedis, byte[], T> commands) {
        try {
            return execute(client -> commands.apply(client, SCRIPT.sha1()));
        } catch (JedisNoScriptException e) {
            return execute(client -> commands.apply(client, null));
        }
    }

    /**
     * Commands on the client, as {@link #attemptAgainIfBroken}; a call that ends in an outage tells
     * the masters, which in a cluster look at the topology again (a failover may be under way).
     */
    <T> T execute(Function<UnifiedJedis, T> commands) {
        try {
            return attemptAgainIfBroken(commands);
        } catch (StoreUnavailableException outage) {
            RedisStoreOptions.Connected current = connected;
            if (current != null) {
                current.masters().unanswered();
            }
            throw outage;
        }
    }

    /**
     * Commands on the client; retried once, with the idle pooled connections dropped, if a
     * connection turned out to be broken (Redis restarted, a proxy cut it): those idle beside it
     * are likely as stale. Not after a timeout, connecting or reading: Redis is slow or out of
     * reach, not restarted, waiting twice would not help, and a command it may have run (a
     * completion with {@code WAIT}, a batch of renewals) is not sent again.
     */
    private <T> T attemptAgainIfBroken(Function<UnifiedJedis, T> commands) {
        try {
            return attempt(commands);
        } catch (JedisConnectionException first) {
            if (RedisFailures.timedOut(first)) {
                throw failures.unavailable(first);
            }
            connected().dropIdleConnections().run();
            try {
                return attempt(commands);
            } catch (JedisConnectionException second) {
                throw failures.unavailable(second);
            }
        }
    }

    /** The commands on the client, their failure classified ({@link RedisFailures#ofCall}). */
    private <T> T attempt(Function<UnifiedJedis, T> commands) {
        try {
            return commands.apply(connected().client());
        } catch (JedisException e) {
            throw failures.ofCall(e);
        }
    }

    /** The client, made on first use (and again until a sentinel or cluster node answers), never once closed. */
    RedisStoreOptions.Connected connected() {
        RedisStoreOptions.Connected current = connected;
        if (current != null) {
            return current;
        }
        synchronized (this) {
            if (closed) {
                throw new StoreUnavailableException("the Redis store at " + description + " is closed", null);
            }
            if (connected == null) {
                try {
                    connected = connect.get();
                } catch (JedisException e) {
                    throw failures.ofConnect(e);
                }
            }
            return connected;
        }
    }

    /**
     * Commands pipelined on a connection to the master of {@code key}; their reply. In a cluster
     * whose slot moved (a failover, a resharding) since the client last asked, the node answers
     * with a redirection and runs the command it redirects (and, for a slot being migrated, those
     * of the others it does not hold); the commands then go to the node it names, whether the
     * client knew that node or not (an ASK to a master a scale-out has just added), with
     * {@code ASKING} before each where the slot is being migrated ({@code commands} is given
     * true: {@link #asking}), and after a MOVED the client asks the node that said so for the
     * slots; up to {@value #REDIRECTIONS} redirections in a row, as the cluster client follows
     * them. One more is thrown, an outage for this call ({@link RedisFailures#ofCall}), as an
     * error reply is.
     */
    Object onMaster(byte[] key, Function<Boolean, CoalescedCalls.Request> commands) {
        Masters masters = connected().masters();
        HostAndPort node = masters.masterOf(key);
        boolean asking = false;
        for (int redirections = 0; ; redirections++) {
            try (Connection connection = masters.connection(node)) {
                Pipeline pipeline = new Pipeline(connection);
                Supplier<Object> reply;
                try {
                    reply = commands.apply(asking).addTo(pipeline);
                    pipeline.sync(); // every reply is read: the connection goes back to the pool clean
                } catch (RuntimeException | Error e) {
                    connection.setBroken(); // commands written whose replies nobody read: never pooled again
                    throw e;
                }
                try {
                    return reply.get(); // an error reply throws here, to be classified by attempt
                } catch (JedisRedirectionException e) {
                    if (redirections == REDIRECTIONS) {
                        throw e;
                    }
                    if (e instanceof JedisMovedDataException) {
                        try {
                            masters.moved(connection);
                        } catch (RuntimeException notAsked) {
                            // the redirection is followed all the same; the next call's sending finds out
                        }
                    }
                    node = e.getTargetNode();
                    asking = e instanceof JedisAskDataException;
                }
            }
        }
    }

    /**
     * Commands in a batch of calls to the master of {@code key} ({@link CoalescedCalls}) where the
     * store coalesces; otherwise, where the client knows no master for its slot, or the slot moved
     * since (a redirection), as a call of their own ({@link #onMaster}), which follows the
     * redirection: the commands are written so that running them again is harmless (an acquire
     * that finds its own record renews it).
     */
    Object batchedOnMaster(byte[] key, Function<Boolean, CoalescedCalls.Request> commands) {
        Masters masters = connected().masters();
        HostAndPort master = coalesced == null ? null : masters.masterOf(key);
        if (master == null) {
            return onMaster(key, commands);
        }
        try {
            return coalesced.call(masters, master, commands.apply(false));
        } catch (JedisRedirectionException e) {
            return onMaster(key, commands);
        }
    }

    /** {@code ASKING} on the pipeline where {@code asking}: the next command is for a slot being migrated to this node. */
    static void asking(Pipeline pipeline, boolean asking) {
        if (asking) {
            pipeline.sendCommand(Protocol.Command.ASKING, new byte[0][]);
        }
    }

    /**
     * Record script calls on one key each, pipelined: one round trip per master that holds some
     * of the keys, by the script's SHA-1, or its text where a node never saw it ({@link #withScript}).
     * The masters are asked one after another on this thread (Jedis's cluster pipeline would start
     * threads for each call, and swallow both an interrupt and a connection's failure): every
     * master that answers runs its calls, and one that does not is reported after them, with its
     * own exception (a read timeout as a timeout). A call a cluster node redirected (its slot
     * moved) runs again as a command of its own, which follows the redirection and refreshes the
     * client's slots.
     */
    List<Object> pipelined(List<byte[]> keys, List<List<byte[]>> arguments) {
        return withScript((client, sha1) -> pipelined(client, keys, arguments, sha1));
    }

    private List<Object> pipelined(UnifiedJedis client, List<byte[]> keys, List<List<byte[]>> arguments, byte[] sha1) {
        Masters masters = connected().masters();
        Map<HostAndPort, List<Integer>> byMaster = new LinkedHashMap<>();
        for (int i = 0; i < keys.size(); i++) {
            byMaster.computeIfAbsent(masters.masterOf(keys.get(i)), master -> new ArrayList<>()).add(i);
        }
        List<Response<Object>> responses = new ArrayList<>(Collections.nCopies(keys.size(), null));
        JedisException unanswered = null;
        for (Map.Entry<HostAndPort, List<Integer>> master : byMaster.entrySet()) {
            try (Connection connection = masters.connection(master.getKey())) {
                Pipeline pipeline = new Pipeline(connection);
                for (int i : master.getValue()) {
                    responses.set(i, script(pipeline, List.of(keys.get(i)), arguments.get(i), sha1));
                }
                pipeline.sync(); // every reply is read: the connection goes back to the pool clean
            } catch (JedisException e) {
                if (unanswered == null) {
                    unanswered = e;
                } else {
                    unanswered.addSuppressed(e);
                }
            }
        }
        if (unanswered != null) {
            throw unanswered;
        }
        List<Object> replies = new ArrayList<>(responses.size());
        for (int i = 0; i < responses.size(); i++) {
            try {
                replies.add(responses.get(i).get()); // an error reply throws here, to be classified by attempt
            } catch (JedisRedirectionException moved) {
                replies.add(script(client, List.of(keys.get(i)), arguments.get(i)));
            }
        }
        return replies;
    }

    /** The record script in a pipeline: by its SHA-1, or its text where {@code sha1} is null. */
    static Response<Object> script(AbstractPipeline pipeline, List<byte[]> keys, List<byte[]> argv, byte[] sha1) {
        return sha1 != null ? pipeline.evalsha(sha1, keys, argv) : pipeline.eval(SCRIPT.source(), keys, argv);
    }

    /** The record script as one command: by its SHA-1, and with its text once where the node never saw it. */
    private static Object script(UnifiedJedis client, List<byte[]> keys, List<byte[]> argv) {
        try {
            return client.evalsha(SCRIPT.sha1(), keys, argv);
        } catch (JedisNoScriptException e) {
            return client.eval(SCRIPT.source(), keys, argv);
        }
    }

    /**
     * The record script in a batch of calls to the key's master ({@link CoalescedCalls}): by its
     * SHA-1, and with its text once where the node never saw it, as {@link #script(UnifiedJedis, List, List)}.
     * A cluster whose slot moved since the client last asked answers with a redirection and runs
     * nothing: the call then goes as a command of its own through the cluster client, which follows
     * the redirection (as a redirected renewal does); so does a call whose slot has no known master.
     */
    private Object coalescedScript(List<byte[]> keys, List<byte[]> argv, UnifiedJedis client) {
        Masters masters = connected().masters();
        HostAndPort master = masters.masterOf(keys.get(0));
        if (master == null) {
            return script(client, keys, argv);
        }
        try {
            try {
                return coalesced.call(masters, master, keys, argv, false);
            } catch (JedisNoScriptException e) {
                return coalesced.call(masters, master, keys, argv, true);
            }
        } catch (JedisRedirectionException e) {
            return script(client, keys, argv);
        }
    }

    /**
     * Closes the client and stops the background work; from now on every call is an outage, and
     * no client is made any more (a store closed before a node ever answered would otherwise make
     * one on its next call: pools, and Sentinel's listener threads, that nobody closes).
     */
    @Override
    public void close() {
        RedisStoreOptions.Connected opened;
        synchronized (this) {
            closed = true;
            opened = connected;
            connected = null;
        }
        try {
            if (opened != null) {
                opened.close();
            }
        } finally {
            afterClose.run();
        }
    }
}
