package io.idemkey.it.app;

import io.idemkey.Idempotent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.transaction.Transactional;

/**
 * An {@code @Idempotent} method whose effect is a row of {@code effects} in the database of the
 * JDBC store ({@link ExactlyOnceResource}), written in its JTA transaction: with the JDBC store the
 * outcome commits with the effect. {@code then} (not fingerprinted) says what happens after the
 * effect, as {@code X-Then} does for {@link ExactlyOnceResource}.
 */
@ApplicationScoped
public class IdempotentTransfers {

    /** The transfer's arguments; {@code then} is left out of the fingerprint. */
    public record Instructions(long cents, String then) {
    }

    @Transactional
    @Idempotent(scope = "it-transfers", lockTtlSeconds = 3, excludeFields = "then")
    public String transfer(@Idempotent.Key String id, Instructions instructions) throws Exception {
        long effect = ExactlyOnceResource.insertEffect(id);
        String then = instructions.then() == null ? "" : instructions.then();
        switch (then) {
            case "crash" -> HaltAfterCommit.register();
            case "hold" -> ExactlyOnceResource.hold(id);
            case "rollback-only" -> ExactlyOnceResource.registry().setRollbackOnly();
            case "explode" -> throw new IllegalStateException("exploded after effect " + effect);
            default -> {
            }
        }
        return "transfer " + id + " effect " + effect;
    }
}
