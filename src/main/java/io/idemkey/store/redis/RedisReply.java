package io.idemkey.store.redis;

import redis.clients.jedis.exceptions.JedisException;

import java.util.List;

/**
 * What an error reply of Redis's means to the store, read from how it starts: the error code
 * Redis puts first ({@code LOADING}, {@code OOM}, ...) or, for an {@code ERR}, the words after it.
 * The one place the store reads a reply's text. Jedis has types of its own for some replies
 * ({@code NOSCRIPT}, {@code MOVED}, {@code ASK}, {@code BUSY}, {@code CLUSTERDOWN}, and
 * {@code NOPERM}, {@code WRONGPASS} and {@code NOAUTH} as an access-control failure); the store
 * goes by those types where there are some, and by these kinds for what a type does not say.
 */
enum RedisReply {

    /** {@code READONLY}: a replica, reached where the master was wanted (a failover under way). */
    READ_ONLY("READONLY"),
    /** {@code LOADING}: a restarted server still loading its data. */
    LOADING("LOADING"),
    /** {@code MASTERDOWN}: a replica whose link to its master is down. */
    MASTER_DOWN("MASTERDOWN"),
    /** {@code TRYAGAIN}: a key being migrated between cluster nodes. */
    TRY_AGAIN("TRYAGAIN"),
    /** {@code OOM}: memory full under {@code noeviction}; Redis refuses the write before it looks at the key. */
    OUT_OF_MEMORY("OOM"),
    /**
     * {@code NOREPLICAS}: fewer replicas than {@code min-replicas-to-write}; Redis refuses the
     * write before it looks at the key.
     */
    TOO_FEW_REPLICAS("NOREPLICAS"),
    /** {@code WRONGPASS}, or {@code NOAUTH}: the credentials refused, or none given where Redis wants them. */
    CREDENTIALS_REFUSED("WRONGPASS", "NOAUTH"),
    /**
     * A command or key the record script called that the user may not use. Redis answers an error
     * of the script's for it, not {@code NOPERM} (a script's declared keys are checked before it
     * runs, and refused with {@code NOPERM}): {@code ERR ACL failure in script: ...} from Redis 7.2
     * and in Valkey, {@code ERR The user executing the script can't run this command or subcommand}
     * in Redis 7.0.
     */
    REFUSED_IN_SCRIPT("ERR ACL failure in script", "ERR The user executing the script can't"),
    /** {@code ERR syntax error}: options of a command this server does not take. */
    SYNTAX_ERROR("ERR syntax error"),
    /**
     * {@code ERR unknown ...}, {@code ERR unsupported ...}: a command or option this server, or a
     * proxy before it, does not know.
     */
    UNSUPPORTED("ERR unknown", "ERR unsupported"),
    /** Any other reply: the record script's own error, a key of another type, ... */
    OTHER;

    private final List<String> prefixes;

    RedisReply(String... prefixes) {
        this.prefixes = List.of(prefixes);
    }

    /** The kind of the error reply {@code reply} (null: {@link #OTHER}). */
    static RedisReply of(String reply) {
        if (reply != null) {
            for (RedisReply kind : values()) {
                for (String prefix : kind.prefixes) {
                    if (reply.startsWith(prefix)) {
                        return kind;
                    }
                }
            }
        }
        return OTHER;
    }

    /** The kind of the error reply Jedis made {@code e} of. */
    static RedisReply of(JedisException e) {
        return of(e.getMessage());
    }

    /**
     * Whether the reply means "not now", not a defect: a replica, a restart still loading its data,
     * a master without its replicas, a key being migrated, or a write refused for now. The store is
     * unavailable, as when Redis does not answer.
     */
    boolean outage() {
        return switch (this) {
            case READ_ONLY, LOADING, MASTER_DOWN, TRY_AGAIN, OUT_OF_MEMORY, TOO_FEW_REPLICAS -> true;
            default -> false;
        };
    }

    /**
     * Whether Redis refused to write for now before it looked at the key ({@link #OUT_OF_MEMORY},
     * {@link #TOO_FEW_REPLICAS}): it refuses every {@code SET} then, even one that would write
     * nothing, and the record script only its first write, so a script still answers a read.
     */
    boolean writeRefused() {
        return this == OUT_OF_MEMORY || this == TOO_FEW_REPLICAS;
    }
}
