package io.idemkey.docs;

import io.idemkey.Idempotency;
import io.idemkey.Idempotent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;
import java.time.Duration;

/** docs/methods-and-messages.md. */
class MethodsSnippets {

    static class Declined extends Exception {}

    record PaymentMessage(String account, long cents) {}

    record AppliedPayment(String entryId) {}

    record Payment(String account, long cents) {}

    record Receipt(String id) {}

    record Entry(String account, long cents) {}

    interface Ledger {
        AppliedPayment apply(String messageId, PaymentMessage payment) throws Declined;

        void apply(Entry entry);
    }

    interface Gateway {
        Receipt charge(Payment payment) throws Declined;
    }

    Ledger ledger;

    Gateway gateway;

    // tag::payment-applier[]
    @ApplicationScoped
    public class PaymentApplier {
        @Transactional                                              // optional: see "exactly once out" below
        @Idempotent(scope = "payments", lockTtlSeconds = 30, recordedExceptions = Declined.class)
        public AppliedPayment apply(@Idempotent.Key String messageId, PaymentMessage payment) throws Declined {
            return ledger.apply(messageId, payment);                // runs once per message id
        }
    }
    // end::payment-applier[]

    class Listener {
        // tag::programmatic[]
        @Inject Idempotency idempotency;

        // end::programmatic[]
        Receipt onPayment(String paymentId, Payment payment, String messageId, Entry entry) throws Declined {
            // tag::programmatic[]
            Receipt receipt = idempotency.scope("payments")
                    .lockTtl(Duration.ofSeconds(60))
                    .arguments(payment)                         // fingerprinted
                    .recording(Declined.class)
                    .call(paymentId, Receipt.class, () -> gateway.charge(payment));
            idempotency.scope("ledger").run(messageId, () -> ledger.apply(entry));
            // end::programmatic[]
            return receipt;
        }
    }
}
