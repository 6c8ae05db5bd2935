package io.idemkey.it;

import io.idemkey.core.RecordKey;
import io.idemkey.testing.RedisRecords;
import io.idemkey.testing.RedisServer;
import redis.clients.jedis.Jedis;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;

/** The private Redis of this test JVM, shared by the deployments (started on first use). */
public final class TestRedis {

    private static RedisServer server;

    private TestRedis() {
    }

    public static synchronized RedisServer get() {
        if (server == null) {
            server = RedisServer.start();
        }
        return server;
    }

    /**
     * Waits until the lease that {@code key}'s record (global scope) holds now has run out, with the
     * record still in progress afterwards: only a renewal can have kept it (instead of sleeping past it).
     */
    public static void awaitLeaseRunOutStillInProgress(String key) {
        try (Jedis redis = get().client()) {
            String recordKey = RecordKey.of("idempotency:", "", key);
            long leaseEnds = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(redis.pttl(recordKey));
            await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(50)).until(() ->
                    System.nanoTime() > leaseEnds + TimeUnit.MILLISECONDS.toNanos(100)
                            && "P".equals(RedisRecords.state(redis, recordKey)));
        }
    }
}
