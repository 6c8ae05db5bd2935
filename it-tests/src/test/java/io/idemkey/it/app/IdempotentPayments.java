package io.idemkey.it.app;

import io.idemkey.Idempotent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import java.util.List;

/** {@code @Idempotent} methods of a CDI bean, as services and message listeners have them; each counts its runs. */
@ApplicationScoped
public class IdempotentPayments {

    /** What a charge returns: a generic type, read back as such. */
    public record Receipt(String payment, long cents, int run) {
    }

    @Inject
    Executions executions;

    @Idempotent(scope = "it-payments", recordedExceptions = Declined.class)
    public List<Receipt> charge(@Idempotent.Key String paymentId, long cents, long sleepMillis, boolean fail) throws Declined {
        int run = executions.record("charge:" + paymentId);
        pause(sleepMillis);
        if (fail) {
            throw new IllegalStateException("the gateway timed out");
        }
        if (cents < 0) {
            throw new Declined("declined: " + cents + " is not an amount");
        }
        return List.of(new Receipt(paymentId, cents, run));
    }

    /** No scope: the method's own ({@code IdempotentPayments.notify}); nothing returned. */
    @Idempotent
    public void notify(@Idempotent.Key String id) {
        executions.record("notify:" + id);
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
