package io.idemkey.it.app;

import jakarta.validation.constraints.NotBlank;

/** A request body; {@code name} is required (bean validation). */
public class Payload {

    @NotBlank
    public String name;

    public Integer amount;

    public String clientTimestamp;

    public String requestNonce;
}
