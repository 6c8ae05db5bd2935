package io.idemkey.client;

import io.idemkey.IdempotencyKey;
import jakarta.ws.rs.Priorities;
import org.eclipse.microprofile.rest.client.RestClientBuilder;
import org.eclipse.microprofile.rest.client.spi.RestClientListener;

import java.util.Arrays;

/**
 * Gives every MicroProfile Rest Client whose interface carries {@code @IdempotencyKey} (on the
 * interface or a method) the filter that sends each call's key. Found by the Rest Client
 * implementation through {@code META-INF/services}; nothing to register by hand.
 */
public class IdempotencyRestClientListener implements RestClientListener {

    @Override
    public void onNewClient(Class<?> serviceInterface, RestClientBuilder builder) {
        if (guarded(serviceInterface)) {
            builder.register(new KeyHeaderClientFilter(), Priorities.HEADER_DECORATOR);
        }
    }

    static boolean guarded(Class<?> serviceInterface) {
        return serviceInterface.isAnnotationPresent(IdempotencyKey.class)
                || Arrays.stream(serviceInterface.getMethods()).anyMatch(m -> m.isAnnotationPresent(IdempotencyKey.class));
    }
}
