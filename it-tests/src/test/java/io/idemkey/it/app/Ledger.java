package io.idemkey.it.app;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.config.ConfigProvider;
import redis.clients.jedis.JedisPooled;

import java.net.URI;
import java.util.UUID;

/**
 * The chaos run's record of what really executed: one entry per method body that ran to its end, in
 * a Redis of its own (never restarted), so it survives this server being killed and is shared by
 * both servers. The instance id changes when the server restarts.
 */
@ApplicationScoped
public class Ledger {

    private final String instance = UUID.randomUUID().toString().substring(0, 8);
    private JedisPooled redis;

    private synchronized JedisPooled redis() {
        if (redis == null) {
            redis = new JedisPooled(URI.create(
                    ConfigProvider.getConfig().getValue("chaos.ledger.url", String.class)));
        }
        return redis;
    }

    public String instance() {
        return instance;
    }

    /** Notes that the method body for this key ran: {@code instance|epoch millis|result id}. */
    public void executed(String key, String resultId) {
        redis().rpush("chaos:executions:" + key, instance + "|" + System.currentTimeMillis() + "|" + resultId);
    }

    @PreDestroy
    void close() {
        if (redis != null) {
            redis.close();
        }
    }
}
