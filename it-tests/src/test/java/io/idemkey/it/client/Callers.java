package io.idemkey.it.client;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.client.Client;
import jakarta.ws.rs.client.ClientBuilder;
import jakarta.ws.rs.client.WebTarget;
import org.eclipse.microprofile.config.inject.ConfigProperty;

import jakarta.inject.Inject;

import java.util.concurrent.TimeUnit;

/**
 * The JAX-RS client of the callers: one per application, with the same address and timeouts as the
 * Rest Client ({@code transfers/mp-rest/*}).
 */
@ApplicationScoped
public class Callers {

    @Inject
    @ConfigProperty(name = "transfers/mp-rest/url")
    String url;

    @Inject
    @ConfigProperty(name = "transfers/mp-rest/readTimeout", defaultValue = "5000")
    long readTimeoutMillis;

    private volatile Client client;

    WebTarget transfers() {
        if (client == null) {
            synchronized (this) {
                if (client == null) {
                    client = ClientBuilder.newBuilder().connectTimeout(2, TimeUnit.SECONDS)
                            .readTimeout(readTimeoutMillis, TimeUnit.MILLISECONDS).build();
                }
            }
        }
        return client.target(url).path("transfers");
    }

    @PreDestroy
    void close() {
        if (client != null) {
            client.close();
        }
    }
}
