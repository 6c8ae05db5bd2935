package io.idemkey.it.misplaced;

import io.idemkey.Idempotent;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.concurrent.CompletionStage;

/**
 * {@code @Idempotent} where Idemkey cannot honour it: every method here would run unguarded, so
 * deploying this must fail, naming each.
 */
@ApplicationScoped
public class MisplacedCalls {

    @Idempotent
    public String noKey(String paymentId) {
        return paymentId;
    }

    @Idempotent
    public String twoKeys(@Idempotent.Key String paymentId, @Idempotent.Key String orderId) {
        return paymentId + orderId;
    }

    public String keyWithoutIdempotent(@Idempotent.Key String paymentId) {
        return paymentId;
    }

    @Idempotent
    public CompletionStage<String> asynchronous(@Idempotent.Key String paymentId) {
        return null;
    }
}
