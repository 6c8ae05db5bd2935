package io.idemkey.it.misplaced;

import io.idemkey.IdempotencyKey;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;

/**
 * {@code @IdempotencyKey} where Idemkey cannot honour it: on a sub-resource locator, whose returned
 * resource's methods it would not guard. Deploying this must fail, naming the method.
 */
@Path("/misplaced")
public class LocatorResource {

    @Path("/payments")
    @IdempotencyKey
    public Payments payments() {
        return new Payments();
    }

    public static class Payments {
        @POST
        public String charge() {
            return "charged";
        }
    }
}
