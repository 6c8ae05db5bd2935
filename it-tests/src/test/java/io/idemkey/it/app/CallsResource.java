package io.idemkey.it.app;

import io.idemkey.Idempotency;
import io.idemkey.IdempotencyException;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.json.bind.JsonbBuilder;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;

import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * Drives idempotent calls from the tests (unguarded endpoints: the calls are what is guarded). Each
 * answers the call's outcome as text: {@code returned <JSON>} or {@code threw <class simple name>: <message>}.
 */
@Path("/calls")
@RequestScoped
@Produces(MediaType.TEXT_PLAIN)
public class CallsResource {

    private static final Type RECEIPTS = new ArrayList<IdempotentPayments.Receipt>() { }.getClass().getGenericSuperclass();

    @Inject
    IdempotentPayments payments;

    @Inject
    IdempotentTransfers transfers;

    @Inject
    Idempotency idempotency;

    @Inject
    Executions executions;

    @POST
    @Path("/charge/{id}")
    public String charge(@PathParam("id") String id, @QueryParam("cents") @DefaultValue("100") long cents,
                         @QueryParam("sleep") @DefaultValue("0") long sleepMillis, @QueryParam("fail") boolean fail) {
        return outcome(() -> {
            List<IdempotentPayments.Receipt> receipts = payments.charge(id, cents, sleepMillis, fail);
            return receipts.get(0).getClass().getSimpleName() + " " + JsonbBuilder.create().toJson(receipts);
        });
    }

    @POST
    @Path("/notify/{id}")
    public String notify(@PathParam("id") String id) {
        return outcome(() -> {
            payments.notify(id);
            return "nothing";
        });
    }

    @POST
    @Path("/transfer/{id}")
    public String transfer(@PathParam("id") String id, @QueryParam("then") String then) {
        return outcome(() -> transfers.transfer(id, new IdempotentTransfers.Instructions(100, then)));
    }

    /** The programmatic form: the same charge as a lambda. */
    @POST
    @Path("/programmatic/{id}")
    public String programmatic(@PathParam("id") String id, @QueryParam("cents") @DefaultValue("100") long cents) {
        return outcome(() -> {
            List<IdempotentPayments.Receipt> receipts = idempotency.scope("it-programmatic").arguments(cents).recording(Declined.class)
                    .call(id, RECEIPTS, () -> {
                        int run = executions.record("programmatic:" + id);
                        if (cents < 0) {
                            throw new Declined("declined: " + cents);
                        }
                        return List.of(new IdempotentPayments.Receipt(id, cents, run));
                    });
            return receipts.get(0).getClass().getSimpleName() + " " + JsonbBuilder.create().toJson(receipts);
        });
    }

    /** How often the named call ran; a query parameter, since names hold a colon (see GuardedResource#executions). */
    @GET
    @Path("/runs")
    public String runs(@QueryParam("name") String name) {
        return Integer.toString(executions.count(name));
    }

    private static String outcome(Callable<String> call) {
        try {
            return "returned " + call.call();
        } catch (IdempotencyException e) {
            return "threw " + e.getClass().getSimpleName() + ": " + e.getMessage();
        } catch (Exception e) {
            return "threw " + e.getClass().getSimpleName() + ": " + e.getMessage();
        }
    }
}
