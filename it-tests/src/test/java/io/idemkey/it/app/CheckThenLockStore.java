package io.idemkey.it.app;

import io.idemkey.spi.AcquireResult;
import io.idemkey.spi.IdempotencyStore;
import io.idemkey.spi.Renewal;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.config.ConfigProvider;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.params.SetParams;

import java.net.URI;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The seeds' check-then-lock pattern (seed 001's middleware, seed 002's first version), as an
 * {@link IdempotencyStore} for the benchmark only ({@code idempotency.store=custom}): acquire is a
 * GET, then a SET NX PX, then (when the SET lost a race) another GET; complete is a SET. Three
 * round trips where Idemkey's Lua script needs one, and a window between the GET and the SET.
 */
@ApplicationScoped
public class CheckThenLockStore implements IdempotencyStore {

    private JedisPooled redis;
    private final Map<String, String> fingerprints = new ConcurrentHashMap<>();

    private synchronized JedisPooled redis() {
        if (redis == null) {
            redis = new JedisPooled(URI.create(ConfigProvider.getConfig().getValue("idempotency.redis.url", String.class)));
        }
        return redis;
    }

    @Override
    public AcquireResult acquire(String recordKey, byte[] fingerprint, String ownerToken, Duration lockTtl) {
        String existing = redis().get(recordKey);
        if (existing == null) {
            String taken = redis().set(recordKey, "P|" + hex(fingerprint) + "|" + ownerToken,
                    SetParams.setParams().nx().px(lockTtl.toMillis()));
            if ("OK".equals(taken)) {
                fingerprints.put(ownerToken, hex(fingerprint));
                return AcquireResult.ACQUIRED;
            }
            existing = redis().get(recordKey);
            if (existing == null) {
                return new AcquireResult.InProgress(lockTtl);
            }
        }
        String[] record = existing.split("\\|", 4);
        if (!record[1].equals(hex(fingerprint))) {
            return AcquireResult.MISMATCH;
        }
        if (record[0].equals("P")) {
            return new AcquireResult.InProgress(lockTtl);
        }
        return new AcquireResult.Completed(Base64.getDecoder().decode(record[3]), Duration.ofMinutes(1));
    }

    /** Seed 002 overwrites without looking (one SET): the request kept its fingerprint in memory. */
    @Override
    public boolean complete(String recordKey, String ownerToken, byte[] response, Duration ttl) {
        redis().set(recordKey, "C|" + fingerprints.remove(ownerToken) + "|" + ownerToken + "|"
                + Base64.getEncoder().encodeToString(response), SetParams.setParams().px(ttl.toMillis()));
        return true;
    }

    @Override
    public boolean release(String recordKey, String ownerToken) {
        fingerprints.remove(ownerToken);
        redis().del(recordKey);
        return true;
    }

    @Override
    public Renewal renew(String recordKey, String ownerToken, Duration lockTtl) {
        return redis().pexpire(recordKey, lockTtl.toMillis()) == 1 ? Renewal.RENEWED : Renewal.LOST;
    }

    @Override
    public boolean isAvailable() {
        return true;
    }

    @PreDestroy
    @Override
    public void close() {
        if (redis != null) {
            redis.close();
        }
    }

    private static String hex(byte[] bytes) {
        StringBuilder out = new StringBuilder();
        for (byte b : bytes) {
            out.append(String.format("%02x", b));
        }
        return out.toString();
    }
}
