package io.idemkey.sample.messages;

import io.idemkey.Idempotent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;
import org.eclipse.microprofile.config.inject.ConfigProperty;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Applies a payment at most once per message id, whatever the broker redelivers and to whichever
 * instance: the {@code @Idempotent} method the consumer calls. A copy that arrives while the first
 * is being applied gets {@code IdempotencyException.InProgress}; a copy after it gets the first
 * copy's {@link AppliedPayment} without the ledger being touched again.
 */
@ApplicationScoped
public class PaymentApplier {

    @Inject
    Ledger ledger;

    @Inject
    @ConfigProperty(name = "sample.instance", defaultValue = "sample")
    String instance;

    private final AtomicInteger applying = new AtomicInteger();

    @Transactional // where the server has JTA: with the JDBC store, the ledger entry and the record commit together
    @Idempotent(scope = "payments", lockTtlSeconds = 30)
    public AppliedPayment apply(@Idempotent.Key String messageId, PaymentMessage payment) throws InterruptedException {
        applying.incrementAndGet();
        try {
            Thread.sleep(payment.processMillis());
            return ledger.apply(messageId, payment, instance);
        } finally {
            applying.decrementAndGet();
        }
    }

    /** How many payments this instance is applying right now. */
    public int applying() {
        return applying.get();
    }
}
