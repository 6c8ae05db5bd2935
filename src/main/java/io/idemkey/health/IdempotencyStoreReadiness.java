package io.idemkey.health;

import io.idemkey.cdi.IdempotencyRuntime;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;

import java.util.Locale;

/**
 * The readiness of the idempotency store ({@code /health/ready}), with Idemkey's counters as data.
 * DOWN while the store cannot be reached: fail-closed endpoints answer 503 then, so a load balancer
 * had better send their requests to an instance that can serve them.
 *
 * <p>Active where the server provides MicroProfile Health (Payara Micro; Open Liberty with
 * {@code mpHealth-4.0}); elsewhere the container skips this bean, whose interface it cannot load.
 */
@Readiness
@ApplicationScoped
public class IdempotencyStoreReadiness implements HealthCheck {

    static final String NAME = "idempotency-store";

    @Inject
    IdempotencyRuntime runtime;

    @Override
    public HealthCheckResponse call() {
        HealthCheckResponseBuilder response = HealthCheckResponse.named(NAME)
                .status(runtime.store().isAvailable())
                .withData("store", runtime.settings().store().name().toLowerCase(Locale.ROOT))
                .withData("lease-renewal", runtime.renewsOnManagedThreads() ? "managed threads" : "private threads");
        runtime.engine().metrics().snapshot().forEach(response::withData);
        return response.build();
    }
}
