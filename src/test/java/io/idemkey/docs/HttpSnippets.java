package io.idemkey.docs;

import io.idemkey.IdempotencyContext;
import io.idemkey.IdempotencyKey;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.Response;

/** docs/http.md. */
class HttpSnippets {

    record ChargeRequest(String account, long cents) {}

    record Charge(String id) {}

    interface Payments {
        Charge charge(ChargeRequest request);
    }

    record TransferRequest(String from, String to, long cents) {}

    record TransferResult(boolean isRetryable, String error) {}

    interface Bank {
        TransferResult transfer(TransferRequest request);
    }

    Payments payments;

    Bank bank;

    // tag::shared-contract[]
    public interface PaymentsApi {                        // shared with the Rest Client
        @POST @Path("/charges") @IdempotencyKey(ttlHours = 48)
        Charge charge(ChargeRequest request);
    }

    @Path("/payments") @RequestScoped
    public class PaymentsResource implements PaymentsApi {
        public Charge charge(ChargeRequest request) {     // guarded: 48 h
            return payments.charge(request);
        }
    }
    // end::shared-contract[]

    class TransferResource {
        // tag::mark-retryable[]
        @Inject IdempotencyContext idempotency;

        @POST @IdempotencyKey
        public Response transfer(TransferRequest request) {
            TransferResult result = bank.transfer(request);
            if (result.isRetryable()) {                   // no side effect: do not replay this failure
                idempotency.markRetryable();
                return Response.status(409).entity(result.error()).build();
            }
            return Response.ok(result).build();
        }
        // end::mark-retryable[]
    }
}
