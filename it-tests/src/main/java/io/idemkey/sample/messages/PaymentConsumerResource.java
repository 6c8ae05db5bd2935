package io.idemkey.sample.messages;

import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

import java.util.Map;

/** {@code GET /payments-consumer}: what this instance's consumers did, by outcome, and how many payments it is applying. */
@Path("/payments-consumer")
@RequestScoped
public class PaymentConsumerResource {

    @Inject
    PaymentConsumer consumer;

    @GET
    @Produces(MediaType.APPLICATION_JSON)
    public Map<String, Long> counts() {
        return consumer.counts();
    }
}
