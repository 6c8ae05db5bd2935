package io.idemkey.sample.messages;

/**
 * A payment to apply, as the queue carries it (JSON). Its idempotency key is the AMQP
 * {@code message-id} the publisher sets, the same on every copy of the message.
 *
 * @param account       the account credited
 * @param amountCents   the amount, positive
 * @param processMillis how long applying it takes (stands in for a payment provider's latency)
 */
public record PaymentMessage(String account, long amountCents, long processMillis) {

    /** Why the message cannot be applied, or null if it can. */
    String problem() {
        if (account == null || account.isBlank()) {
            return "no account";
        }
        if (amountCents <= 0) {
            return "the amount must be positive, not " + amountCents;
        }
        return null;
    }
}
