package io.idemkey.docs;

import io.idemkey.client.IdempotentRequests;
import io.idemkey.client.KeyReusedException;
import io.idemkey.client.RetriesExhaustedException;
import jakarta.ws.rs.client.Entity;
import jakarta.ws.rs.client.WebTarget;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

/** docs/payments.md: the payments service's client. */
class PaymentsClientSnippets {

    record Order(String id, String paymentKey, long amountCents, String currency, String cardToken) {}

    record ChargeRequest(String orderId, long amountCents, String currency, String cardToken) {}

    record PaymentView(long id, String orderId) {}

    record Declined(String reason) {}

    interface Orders {
        void paid(Order order, PaymentView payment);

        void declined(Order order, Declined reason);

        void retryLater(Order order);
    }

    Orders orders;

    void pay(WebTarget service, Order order) {
        // tag::client[]
        IdempotentRequests requests = IdempotentRequests.create();   // retries: idempotency.client.*
        ChargeRequest charge = new ChargeRequest(order.id(), order.amountCents(), order.currency(), order.cardToken());
        try {
            Response answer = requests.to(service.path("payments"))
                    .key(order.paymentKey())                         // stored with the order: one key per payment
                    .accept(MediaType.APPLICATION_JSON)
                    .post(Entity.json(charge));
            switch (answer.getStatus()) {
                case 201 -> orders.paid(order, answer.readEntity(PaymentView.class)); // the first answer or its replay
                case 402 -> orders.declined(order, answer.readEntity(Declined.class));
                default -> orders.retryLater(order);                 // a 500 is final here; the same key later is safe
            }
        } catch (RetriesExhaustedException outcomeUnknown) {
            orders.retryLater(order);                                // the same key later: replayed, or run once
        } catch (KeyReusedException bug) {
            throw new IllegalStateException("payment key " + order.paymentKey() + " was used for another payment", bug);
        }
        // end::client[]
    }
}
