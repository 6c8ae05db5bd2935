package io.idemkey.store.redis;

import io.idemkey.core.RecordIdentifiers;
import io.idemkey.core.RecordKey;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import redis.clients.jedis.util.JedisClusterCRC16;

import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Hashed store keys keep Redis Cluster's rules: a record and its request counter share a slot, a {tag} prefix holds. */
class HashedKeySlotsTest {

    private static final byte[] IDENTIFIER_KEY = "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

    @ParameterizedTest
    @ValueSource(strings = {"idempotency:", "{orders}idempotency:"})
    void aRecordAndItsCounterShareASlot(String prefix) {
        RecordIdentifiers ids = RecordIdentifiers.hashed(prefix, IDENTIFIER_KEY, false);
        for (int i = 0; i < 500; i++) {
            String storeKey = ids.storeKey(RecordKey.of(prefix, "caller{" + i + "}", "key}{" + i));
            assertTrue(storeKey.startsWith(prefix + "h="), storeKey);
            String hash = storeKey.substring(prefix.length() + 2);
            assertEquals(43, hash.length());
            assertFalse(hash.matches(".*[:{}#].*"), hash);
            String counter = RedisIdempotencyStore.counterKey(storeKey);
            assertEquals(JedisClusterCRC16.getSlot(storeKey), JedisClusterCRC16.getSlot(counter));
            assertTrue(counter.startsWith(prefix), "under the prefix an ACL user is limited to: " + counter);
            if (prefix.startsWith("{orders}")) {
                assertEquals(JedisClusterCRC16.getSlot("orders"), JedisClusterCRC16.getSlot(storeKey), "the prefix's tag holds");
            }
        }
    }
}
