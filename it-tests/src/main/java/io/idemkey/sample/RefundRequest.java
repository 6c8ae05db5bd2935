package io.idemkey.sample;

import jakarta.validation.constraints.Positive;

/**
 * How much of a payment to give back. The canonical constructor is written out for Payara Micro's
 * OpenAPI scanner (see {@link OrderRequest}).
 */
public record RefundRequest(@Positive long amountCents) {

    public RefundRequest(long amountCents) {
        this.amountCents = amountCents;
    }
}
