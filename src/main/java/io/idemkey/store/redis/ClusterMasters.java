package io.idemkey.store.redis;

import redis.clients.jedis.Connection;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.providers.ClusterConnectionProvider;
import redis.clients.jedis.util.JedisClusterCRC16;

/**
 * The masters of a Redis Cluster as a Jedis cluster client knows them (its slot cache), which
 * asks the nodes for the slots again ({@code CLUSTER SLOTS}) after a MOVED.
 */
final class ClusterMasters implements Masters {

    private final ClusterConnectionProvider slots;

    ClusterMasters(ClusterConnectionProvider slots) {
        this.slots = slots;
    }

    @Override
    public HostAndPort masterOf(byte[] key) {
        return slots.getNode(JedisClusterCRC16.getSlot(key));
    }

    @Override
    public Connection connection(HostAndPort master) {
        return slots.getConnection(master);
    }

    @Override
    public void moved(Connection connection) {
        slots.renewSlotCache(connection);
    }
}
