package io.idemkey.it;

import io.idemkey.testing.RedisCluster;
import io.idemkey.testing.RedisServer;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.URL;
import java.time.Duration;
import java.util.Map;

import static org.awaitility.Awaitility.await;

/**
 * The status table on this run's test server with its records in a Redis Cluster (3 masters, 3
 * replicas, on loopback): {@code idempotency.redis.mode=cluster}. Round trips are counted on every
 * master (MONITOR); the outage stops the whole cluster.
 */
@RunAsClient
@ExtendWith(ArquillianExtension.class)
class StatusTableOnClusterIT extends StatusTableTests {

    private static RedisCluster cluster;

    @ArquillianResource
    URL base;

    @Deployment
    static WebArchive deployment() {
        cluster = RedisCluster.start(3);
        return deployment(Map.of("idempotency.redis.mode", "cluster", "idempotency.redis.nodes", cluster.nodesProperty()));
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @BeforeEach
    void client() {
        http = new Http(base);
    }

    @Override
    boolean validatesBeans() {
        return true;
    }

    /** The commands clients send to any master: the key decides which one. */
    @Override
    StoreCalls countStoreCalls() {
        return redisCalls(cluster.masters());
    }

    @Override
    void stopStore() {
        cluster.nodes().forEach(RedisServer::stop);
    }

    @Override
    void restartStore() {
        cluster.nodes().forEach(RedisServer::restart);
        await().atMost(Duration.ofSeconds(30)).until(cluster::isUp);
    }
}
