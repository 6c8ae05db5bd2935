package io.idemkey.store.redis;

import redis.clients.jedis.Connection;
import redis.clients.jedis.HostAndPort;

import java.util.List;
import java.util.function.Supplier;

/**
 * Where a client sends a record's commands, for what the store pipelines on a connection of its
 * own (a completion with {@code WAIT}, renewals): the master that holds a key, as the client knows
 * it now, and a pooled connection to a master. One server and Sentinel have one master; a cluster
 * has one per slot range, and is told when its view may be out of date.
 */
interface Masters extends AutoCloseable {

    /** The master that holds {@code key} now, as far as the client knows (null: none known for its slot). */
    HostAndPort masterOf(byte[] key);

    /**
     * A connection from {@code master}'s pool (a cluster node the client did not know yet gets a
     * pool; null: any master); closing it gives it back.
     */
    Connection connection(HostAndPort master);

    /** Every master as the client knows them now, in a stable order (host, then port). */
    List<HostAndPort> all();

    /** A node answered MOVED on {@code connection}: the slots moved, ask that node for them. */
    default void moved(Connection connection) {
    }

    /**
     * A call got no answer (a broken or silent connection, a node gone) or an answer that says the
     * cluster changed: the topology may be out of date, look again soon, off the caller's thread.
     */
    default void unanswered() {
    }

    /** Stops what it does in the background; the client's pools are the client's to close. */
    @Override
    default void close() {
    }

    /** The one master of a server or of a Sentinel group, at {@code address} now, reached through {@code connections}. */
    static Masters one(Supplier<HostAndPort> address, Supplier<Connection> connections) {
        return new Masters() {
            @Override
            public HostAndPort masterOf(byte[] key) {
                return address.get();
            }

            @Override
            public Connection connection(HostAndPort master) {
                return connections.get();
            }

            @Override
            public List<HostAndPort> all() {
                return List.of(address.get());
            }
        };
    }
}
