package io.idemkey.sample;

import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Positive;

/**
 * A charge request. {@code clientTimestamp} and {@code requestNonce} change on every retry a client
 * makes, so the endpoint leaves them out of the fingerprint ({@code excludeFields}). The canonical
 * constructor is written out for Payara Micro's OpenAPI scanner (see {@link OrderRequest}).
 */
public record PaymentRequest(@NotBlank String orderId,
                             @Positive long amountCents,
                             @NotBlank @Pattern(regexp = "[A-Z]{3}") String currency,
                             String clientTimestamp,
                             String requestNonce) {

    public PaymentRequest(String orderId, long amountCents, String currency, String clientTimestamp,
                          String requestNonce) {
        this.orderId = orderId;
        this.amountCents = amountCents;
        this.currency = currency;
        this.clientTimestamp = clientTimestamp;
        this.requestNonce = requestNonce;
    }
}
