package io.idemkey.it;

import io.idemkey.core.RecordKey;
import io.idemkey.testing.RedisRecords;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import redis.clients.jedis.Jedis;

import java.net.URL;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Seed 002's scenarios on the Arquillian-managed server of this run, with the Redis store. */
@RunAsClient
@ExtendWith(ArquillianExtension.class)
class SeedScenariosIT extends SeedScenarioTests {

    @ArquillianResource
    URL base;

    @Deployment
    static WebArchive deployment() {
        return Deployments.guardedApp("seed-scenarios", Map.of());
    }

    @BeforeEach
    void client() {
        http = new Http(base);
    }

    @Override
    void assertRecordCompletedForADay(String key) {
        try (Jedis redis = TestRedis.get().client()) {
            String recordKey = RecordKey.of("idempotency:", "", key);
            assertEquals("C", RedisRecords.state(redis, recordKey), "the record is COMPLETED");
            long ttl = redis.pttl(recordKey);
            assertTrue(ttl > 23 * 3600_000L && ttl <= 24 * 3600_000L, "expires after ttlHours: " + ttl);
        }
    }

    @Override
    ServerProcess startPodA(Path war) {
        return ServerProcess.startForTests(ServerProcess.Kind.ofThisRun(), List.of(war));
    }

    @Override
    Map<String, String> podAConfig() {
        return Map.of();
    }

    @Override
    void stopStore() {
        TestRedis.get().stop();
    }

    @Override
    void restartStore() {
        TestRedis.get().restart();
    }
}
