package io.idemkey.sample;

import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.Positive;

/**
 * What a client sends to place an order.
 *
 * <p>The canonical constructor is written out, without the constraints: Java copies a record
 * component's annotations onto the implicit constructor's parameters, and Payara Micro's OpenAPI
 * scanner fails on constraints it finds there ({@code /openapi} answers 500). The constraints still
 * apply: Bean Validation reads them from the fields.
 */
public record OrderRequest(@NotBlank String item, @Positive int quantity) {

    public OrderRequest(String item, int quantity) {
        this.item = item;
        this.quantity = quantity;
    }
}
