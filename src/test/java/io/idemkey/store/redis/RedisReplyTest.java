package io.idemkey.store.redis;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import redis.clients.jedis.exceptions.JedisDataException;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Each error reply the store acts on is read as its kind, by how Redis (and Valkey) word it; any
 * other reply is {@link RedisReply#OTHER}; and the kinds that are outages, and writes refused for
 * now, are exactly those the store treats so.
 */
class RedisReplyTest {

    static Stream<Arguments> replies() {
        return Stream.of(
                Arguments.of("READONLY You can't write against a read only replica.", RedisReply.READ_ONLY),
                Arguments.of("LOADING Redis is loading the dataset in memory", RedisReply.LOADING),
                Arguments.of("MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
                        RedisReply.MASTER_DOWN),
                Arguments.of("TRYAGAIN Multiple keys request during rehashing of slot", RedisReply.TRY_AGAIN),
                Arguments.of("OOM command not allowed when used memory > 'maxmemory'.", RedisReply.OUT_OF_MEMORY),
                Arguments.of("NOREPLICAS Not enough good replicas to write.", RedisReply.TOO_FEW_REPLICAS),
                Arguments.of("WRONGPASS invalid username-password pair or user is disabled.", RedisReply.CREDENTIALS_REFUSED),
                Arguments.of("NOAUTH Authentication required.", RedisReply.CREDENTIALS_REFUSED),
                Arguments.of("ERR ACL failure in script: No permissions to run the 'incr' command script: 3f8a, on"
                        + " @user_script:14.", RedisReply.REFUSED_IN_SCRIPT),
                Arguments.of("ERR The user executing the script can't run this command or subcommand script: 3f8a,"
                        + " on @user_script:14.", RedisReply.REFUSED_IN_SCRIPT),
                Arguments.of("ERR syntax error", RedisReply.SYNTAX_ERROR),
                Arguments.of("ERR unknown command 'SET', with args beginning with: ", RedisReply.UNSUPPORTED),
                Arguments.of("ERR unsupported option IFEQ", RedisReply.UNSUPPORTED),
                // replies the store has no kind for: Jedis types NOPERM, the rest are defects or the script's own
                Arguments.of("NOPERM User idemkey has no permissions to run the 'incr' command", RedisReply.OTHER),
                Arguments.of("WRONGTYPE Operation against a key holding the wrong kind of value", RedisReply.OTHER),
                Arguments.of("ERR Error running script: the key holds no record of Idemkey's", RedisReply.OTHER),
                Arguments.of("ERR value is not an integer or out of range LOADING", RedisReply.OTHER),
                Arguments.of("", RedisReply.OTHER));
    }

    @ParameterizedTest
    @MethodSource("replies")
    void aReplyIsReadAsItsKind(String reply, RedisReply kind) {
        assertEquals(kind, RedisReply.of(reply), reply);
        assertEquals(kind, RedisReply.of(new JedisDataException(reply)), "the reply Jedis made an exception of: " + reply);
    }

    @Test
    void everyKindHasAReplyAbove() {
        assertEquals(EnumSet.allOf(RedisReply.class), kinds(replies().map(arguments -> (RedisReply) arguments.get()[1])));
    }

    @Test
    void aReplyWithoutTextIsOther() {
        assertEquals(RedisReply.OTHER, RedisReply.of((String) null));
        assertEquals(RedisReply.OTHER, RedisReply.of(new JedisDataException((String) null)));
    }

    @Test
    void theOutagesAreTheNotNowReplies() {
        assertEquals(EnumSet.of(RedisReply.READ_ONLY, RedisReply.LOADING, RedisReply.MASTER_DOWN, RedisReply.TRY_AGAIN,
                        RedisReply.OUT_OF_MEMORY, RedisReply.TOO_FEW_REPLICAS),
                kinds(Arrays.stream(RedisReply.values()).filter(RedisReply::outage)));
    }

    @Test
    void onlyAFullRedisAndTooFewReplicasRefuseAWriteBeforeLookingAtTheKey() {
        assertEquals(EnumSet.of(RedisReply.OUT_OF_MEMORY, RedisReply.TOO_FEW_REPLICAS),
                kinds(Arrays.stream(RedisReply.values()).filter(RedisReply::writeRefused)));
    }

    private static Set<RedisReply> kinds(Stream<RedisReply> kinds) {
        return kinds.collect(Collectors.toCollection(() -> EnumSet.noneOf(RedisReply.class)));
    }
}
