package io.idemkey.sample.messages;

import java.time.Instant;

/** The outcome of applying a payment: what the ledger holds; every copy of the message gets this one back. */
public record AppliedPayment(String messageId, String account, long amountCents, String appliedBy,
                             Instant appliedAt) {
}
