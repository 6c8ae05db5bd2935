package io.idemkey.sample;

import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.Positive;

/** What a client sends to place an order. */
public record OrderRequest(@NotBlank String item, @Positive int quantity) {
}
