package io.idemkey.it.app;

import io.idemkey.IdempotencyContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import java.util.UUID;

/**
 * The body of the {@link Contracts} resources: counts executions per key and, asked to, marks the
 * outcome retryable through {@link IdempotencyContext}, which only works when Idemkey's CDI
 * interceptor ran around the resource method.
 */
@ApplicationScoped
public class ContractCharges {

    @Inject
    Executions executions;

    @Inject
    IdempotencyContext idempotency;

    String charge(String placement, boolean retryable) {
        String key = idempotency.key().orElse("none");
        int execution = executions.record(placement + ":" + key);
        if (retryable) {
            idempotency.markRetryable();
        }
        return "{\"placement\":\"" + placement + "\",\"execution\":" + execution + ",\"id\":\"" + UUID.randomUUID() + "\"}";
    }
}
