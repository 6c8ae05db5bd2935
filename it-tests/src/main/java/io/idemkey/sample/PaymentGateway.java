package io.idemkey.sample;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.config.inject.ConfigProperty;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Stands in for a payment provider: charging takes a while ({@code sample.gateway.latency-ms}), as
 * it does for real, which is exactly when clients time out and retry.
 */
@ApplicationScoped
public class PaymentGateway {

    @Inject
    @ConfigProperty(name = "sample.gateway.latency-ms", defaultValue = "1500")
    long latencyMillis;

    private final AtomicLong sequence = new AtomicLong();
    private final AtomicLong charges = new AtomicLong();
    private final Map<String, Payment> payments = new ConcurrentHashMap<>();

    public Payment charge(PaymentRequest request) {
        try {
            Thread.sleep(latencyMillis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while charging", e);
        }
        charges.incrementAndGet();
        Payment payment = new Payment("pay_" + sequence.incrementAndGet(), request.orderId(), request.amountCents(),
                request.currency(), 0, Instant.now());
        payments.put(payment.id(), payment);
        return payment;
    }

    public Optional<Payment> find(String id) {
        return Optional.ofNullable(payments.get(id));
    }

    /** Refunds part of a payment; empty when more than what is left was asked for. */
    public synchronized Optional<Payment> refund(String id, long cents) {
        Payment payment = payments.get(id);
        if (payment == null || payment.refundedCents() + cents > payment.amountCents()) {
            return Optional.empty();
        }
        Payment refunded = payment.refund(cents);
        payments.put(id, refunded);
        return Optional.of(refunded);
    }

    /** How many charges really reached the provider: what a duplicate would inflate. */
    public long charges() {
        return charges.get();
    }
}
