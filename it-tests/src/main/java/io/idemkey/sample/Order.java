package io.idemkey.sample;

import java.time.Instant;

/** A placed order. */
public record Order(String id, String item, int quantity, Instant createdAt) {
}
