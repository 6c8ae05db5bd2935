package io.idemkey.sample;

import java.time.Instant;

/** A captured payment and how much of it was refunded. */
public record Payment(String id, String orderId, long amountCents, String currency, long refundedCents,
                      Instant capturedAt) {

    Payment refund(long cents) {
        return new Payment(id, orderId, amountCents, currency, refundedCents + cents, capturedAt);
    }
}
