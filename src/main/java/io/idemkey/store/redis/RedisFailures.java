package io.idemkey.store.redis;

import io.idemkey.spi.StoreAccessDeniedException;
import io.idemkey.spi.StoreUnavailableException;
import redis.clients.jedis.exceptions.JedisAccessControlException;
import redis.clients.jedis.exceptions.JedisBusyException;
import redis.clients.jedis.exceptions.JedisClusterException;
import redis.clients.jedis.exceptions.JedisClusterOperationException;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.exceptions.JedisNoScriptException;
import redis.clients.jedis.exceptions.JedisRedirectionException;

import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * What a Jedis call's failure means to the store's caller, on Jedis's typed exceptions where it
 * has them and on the reply's kind ({@link RedisReply}) where it has none: an outage
 * ({@link StoreUnavailableException}: 503, or fail-open), a refusal of the credentials or of a
 * permission ({@link StoreAccessDeniedException}: a configuration error, never an outage), a
 * broken connection (which {@link RedisCommands} sends the call again for), or a defect, thrown
 * as it is.
 */
final class RedisFailures {

    /** Jedis's message when its pool gave no connection (the cause says why: none free in time, the pool closed). */
    private static final String NO_CONNECTION_FROM_POOL = "Could not get a resource from the pool";
    /** How deep causes and suppressed exceptions are followed. */
    private static final int DEPTH = 8;

    private final String description;

    /** @param description where the store points, for messages (never with credentials) */
    RedisFailures(String description) {
        this.description = description;
    }

    /**
     * What a call's failure is, on the first try and the retry alike: "not now" replies
     * ({@code -LOADING} after a restart, {@code -CLUSTERDOWN}, ...) are outages, and so is a
     * cluster that keeps redirecting; a cluster client that used up its own attempts on broken
     * connections counts as one broken connection; a refusal of the credentials or of a permission
     * is neither ({@link #denied}). {@code NOSCRIPT} and a broken connection are returned as they
     * are, for the caller to act on.
     */
    RuntimeException ofCall(JedisException e) {
        if (e instanceof JedisNoScriptException || e instanceof JedisConnectionException) {
            return e;
        }
        if (e instanceof JedisAccessControlException refused) {
            return denied(refused);
        }
        if (e instanceof JedisClusterOperationException) {
            JedisConnectionException broken = brokenConnection(e);
            JedisAccessControlException refused = accessControl(e, DEPTH);
            return broken != null ? broken : refused != null ? denied(refused) : unavailable(e);
        }
        if (e instanceof JedisRedirectionException || e instanceof JedisClusterException || e instanceof JedisBusyException) {
            // the slots moved faster than the client followed; no master for a slot; a script running too long
            return unavailable(e);
        }
        if (e instanceof JedisDataException reply) {
            RedisReply kind = RedisReply.of(reply);
            if (kind == RedisReply.REFUSED_IN_SCRIPT) {
                return denied(reply);
            }
            return kind.outage() ? unavailable(e) : e;
        }
        if (e.getCause() instanceof NoSuchElementException) {
            return unavailable(e); // no free pooled connection within the wait limit
        }
        if (NO_CONNECTION_FROM_POOL.equals(e.getMessage())) { // not Jedis's other pool failures (giving a connection back)
            if (e.getCause() instanceof IllegalStateException) {
                // the pool was closed as the call took a connection from it (a cluster's topology
                // refresh dropped a node that left): the command was not sent, so it goes again,
                // as on a broken connection
                return new JedisConnectionException(e.getMessage(), e);
            }
            if (e.getCause() instanceof InterruptedException) {
                return unavailable(e); // the pool closed while the call waited for a connection
            }
        }
        return e;
    }

    /**
     * What a failure to make the client is: a node that answered and refused the credentials (or
     * {@code CLUSTER SLOTS}) is a refusal, one that answered otherwise a defect, and no answer an
     * outage.
     */
    RuntimeException ofConnect(JedisException e) {
        if (e instanceof JedisAccessControlException refused) {
            return denied(refused);
        }
        if (e instanceof JedisDataException) {
            return e;
        }
        JedisAccessControlException refused = accessControl(e, DEPTH);
        return refused != null ? denied(refused) : unavailable(e);
    }

    StoreUnavailableException unavailable(JedisException e) {
        return new StoreUnavailableException("Redis at " + description + " is unavailable: " + e.getMessage(), e);
    }

    /**
     * Redis refused the credentials ({@link RedisReply#CREDENTIALS_REFUSED}) or a command or key to
     * the user ({@code NOPERM}, or {@link RedisReply#REFUSED_IN_SCRIPT}): a configuration error,
     * not an outage; the message says what the user needs.
     */
    StoreAccessDeniedException denied(JedisDataException e) {
        String reply = String.valueOf(e.getMessage());
        boolean credentials = RedisReply.of(reply) == RedisReply.CREDENTIALS_REFUSED;
        return new StoreAccessDeniedException("Redis at " + description + (credentials
                ? " does not accept the user and password Idemkey connects with: " + reply
                : " refuses a command or a key to the user Idemkey connects as: " + RedisAcl.withoutFullStop(reply)
                        + RedisAcl.ruleNeeded("<key prefix>")), e);
    }

    /** Whether an error reply refuses a command or a key to the user, typed by Jedis or not. */
    static boolean refused(JedisDataException e) {
        return e instanceof JedisAccessControlException || RedisReply.of(e) == RedisReply.REFUSED_IN_SCRIPT;
    }

    /**
     * Whether a connection failure was a timeout: a read's is the cause of Jedis's exception, a
     * connect's a suppressed exception of its "Failed to connect" (one per address tried), and a
     * cluster client's failure carries the node's further down; so causes and suppressed
     * exceptions are followed, to a bounded depth.
     */
    static boolean timedOut(Throwable e) {
        return timedOut(e, DEPTH);
    }

    private static boolean timedOut(Throwable e, int depth) {
        if (e == null || depth == 0) {
            return false;
        }
        if (e instanceof SocketTimeoutException || timedOut(e.getCause(), depth - 1)) {
            return true;
        }
        for (Throwable suppressed : e.getSuppressed()) {
            if (timedOut(suppressed, depth - 1)) {
                return true;
            }
        }
        return false;
    }

    /** The broken connection a cluster client's attempts ended on, if that is how they ended. */
    private static JedisConnectionException brokenConnection(JedisException e) {
        List<Throwable> last = new ArrayList<>(Arrays.asList(e.getSuppressed()));
        last.add(e.getCause());
        for (Throwable failure : last) {
            if (failure instanceof JedisConnectionException broken) {
                return new JedisConnectionException(e.getMessage(), broken);
            }
        }
        return null;
    }

    /** The refusal of credentials or permissions among {@code e}'s causes and suppressed exceptions (a client's start, a cluster's attempts), if any. */
    private static JedisAccessControlException accessControl(Throwable e, int depth) {
        if (e == null || depth == 0) {
            return null;
        }
        if (e instanceof JedisAccessControlException refused) {
            return refused;
        }
        JedisAccessControlException found = accessControl(e.getCause(), depth - 1);
        for (Throwable suppressed : e.getSuppressed()) {
            if (found == null) {
                found = accessControl(suppressed, depth - 1);
            }
        }
        return found;
    }
}
