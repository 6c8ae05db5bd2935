package io.idemkey.sample;

import jakarta.validation.constraints.Positive;

/** How much of a payment to give back. */
public record RefundRequest(@Positive long amountCents) {
}
