package io.idemkey.testing;

import redis.clients.jedis.Jedis;

import java.nio.charset.StandardCharsets;

/** Reads Idemkey's records in Redis the way {@code record.lua} writes them, for assertions. */
public final class RedisRecords {

    private RedisRecords() {
    }

    /** "P" (in progress), "C" (completed), or null when there is no record. */
    public static String state(Jedis redis, String recordKey) {
        byte[] record = redis.get(recordKey.getBytes(StandardCharsets.UTF_8));
        return record == null || record.length == 0 ? null : String.valueOf((char) record[0]);
    }
}
