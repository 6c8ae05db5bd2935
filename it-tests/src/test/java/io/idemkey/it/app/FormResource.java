package io.idemkey.it.app;

import io.idemkey.IdempotencyContext;
import io.idemkey.IdempotencyKey;
import jakarta.inject.Inject;
import jakarta.json.Json;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonObjectBuilder;
import jakarta.ws.rs.BeanParam;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.FormParam;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Form;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.core.Response;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

/**
 * Form-encoded endpoints, one for each way JAX-RS hands a form to a resource method: {@code @FormParam}
 * parameters, a {@code MultivaluedMap} entity, a {@link Form} entity and a {@code @BeanParam} bean of
 * {@code @FormParam} fields; each guarded, and each also unguarded, to compare. Each answers with
 * the fields it received (names sorted), its execution count and a fresh id, in the body and, as
 * payment APIs do, in a {@code Request-Id} header (which the status-table deployments replay).
 */
@Path("/forms")
@Consumes(MediaType.APPLICATION_FORM_URLENCODED)
@Produces(MediaType.APPLICATION_JSON)
public class FormResource {

    @Inject
    Executions executions;

    @Inject
    IdempotencyContext idempotency;

    @POST
    @Path("/params")
    @IdempotencyKey
    public Response params(@FormParam("amount") String amount, @FormParam("currency") String currency,
                           @FormParam("tag") List<String> tags) {
        return received(fields(amount, currency, tags), idempotency.key().orElseThrow());
    }

    @POST
    @Path("/unguarded-params")
    public Response unguardedParams(@FormParam("amount") String amount, @FormParam("currency") String currency,
                                    @FormParam("tag") List<String> tags, @HeaderParam("X-Run") String run) {
        return received(fields(amount, currency, tags), "unguarded:" + run);
    }

    @POST
    @Path("/map")
    @IdempotencyKey
    public Response map(MultivaluedMap<String, String> form) {
        return received(form, idempotency.key().orElseThrow());
    }

    @POST
    @Path("/unguarded-map")
    public Response unguardedMap(MultivaluedMap<String, String> form, @HeaderParam("X-Run") String run) {
        return received(form, "unguarded:" + run);
    }

    @POST
    @Path("/form")
    @IdempotencyKey
    public Response form(Form form) {
        return received(form.asMap(), idempotency.key().orElseThrow());
    }

    @POST
    @Path("/unguarded-form")
    public Response unguardedForm(Form form, @HeaderParam("X-Run") String run) {
        return received(form.asMap(), "unguarded:" + run);
    }

    @POST
    @Path("/bean")
    @IdempotencyKey
    public Response bean(@BeanParam Charge charge) {
        return received(fields(charge.amount, charge.currency, charge.tags), idempotency.key().orElseThrow());
    }

    @POST
    @Path("/unguarded-bean")
    public Response unguardedBean(@BeanParam Charge charge, @HeaderParam("X-Run") String run) {
        return received(fields(charge.amount, charge.currency, charge.tags), "unguarded:" + run);
    }

    /** A form as a bean: its fields are {@code @FormParam}s. */
    public static class Charge {
        @FormParam("amount")
        String amount;
        @FormParam("currency")
        String currency;
        @FormParam("tag")
        List<String> tags;
    }

    private static Map<String, List<String>> fields(String amount, String currency, List<String> tags) {
        Map<String, List<String>> fields = new TreeMap<>();
        if (amount != null) {
            fields.put("amount", List.of(amount));
        }
        if (currency != null) {
            fields.put("currency", List.of(currency));
        }
        if (tags != null && !tags.isEmpty()) {
            fields.put("tag", tags);
        }
        return fields;
    }

    private Response received(Map<String, List<String>> form, String key) {
        JsonObjectBuilder fields = Json.createObjectBuilder();
        new TreeMap<>(form).forEach((name, values) -> {
            JsonArrayBuilder array = Json.createArrayBuilder();
            values.forEach(array::add);
            fields.add(name, array);
        });
        String id = UUID.randomUUID().toString();
        return Response.status(201).header("Request-Id", "req_" + id).entity(Json.createObjectBuilder()
                .add("fields", fields).add("execution", executions.record(key)).add("id", id).build().toString()).build();
    }
}
