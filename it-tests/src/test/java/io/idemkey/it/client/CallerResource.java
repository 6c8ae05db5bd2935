package io.idemkey.it.client;

import io.idemkey.client.IdempotentCallException;
import io.idemkey.client.IdempotentRequest;
import io.idemkey.client.IdempotentRequests;
import io.idemkey.client.RetryPolicy;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.json.Json;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonObjectBuilder;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.client.Entity;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.rest.client.inject.RestClient;

import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;

/**
 * A caller of the transfers API, in one of the two client forms ({@code rest-client}: the shared
 * interface; {@code jaxrs}: {@link IdempotentRequests} on a JAX-RS client): runs operations one after
 * the other and reports what it saw, {@code {"ok": n, "replayed": n, "statuses": {...}, "errors": [...]}}.
 */
@Path("callers")
@RequestScoped
public class CallerResource {

    /** The JAX-RS callers' policy, built in code: 12 attempts, waits from 20 ms up to 5 s. */
    private static final IdempotentRequests JAXRS = IdempotentRequests.create(
            RetryPolicy.defaults().withMaxAttempts(12).withBackoff(Duration.ofMillis(20), Duration.ofSeconds(5)));

    @Inject
    @RestClient
    TransfersApi transfers;

    @Inject
    Callers callers;

    @POST
    @Path("{form}")
    @Produces(MediaType.APPLICATION_JSON)
    public String run(@PathParam("form") String form, @QueryParam("prefix") String prefix,
                      @QueryParam("operations") @DefaultValue("1") int operations, @QueryParam("key") String key,
                      @QueryParam("amount") @DefaultValue("100") long amount, @QueryParam("policy") String policy) {
        IdempotentRequests requests = "global".equals(policy) ? IdempotentRequests.create() : JAXRS;
        int ok = 0;
        int replayed = 0;
        Map<Integer, Integer> statuses = new TreeMap<>();
        JsonArrayBuilder errors = Json.createArrayBuilder();
        for (int i = 0; i < operations; i++) {
            String id = operations == 1 ? prefix : prefix + "-" + i;
            try (Response response = switch (form) {
                case "rest-client" -> transfers.transfer(key, new Transfer(id, amount));
                case "jaxrs" -> jaxrs(requests, key, id, amount);
                default -> throw new IllegalArgumentException(form);
            }) {
                statuses.merge(response.getStatus(), 1, Integer::sum);
                if (response.getStatus() / 100 == 2) {
                    ok++;
                }
                if (IdempotentRequests.replayed(response)) {
                    replayed++;
                }
            } catch (IdempotentCallException e) {
                JsonObjectBuilder error = Json.createObjectBuilder().add("id", id).add("error", e.getClass().getName())
                        .add("message", String.valueOf(e.getMessage())).add("attempts", e.attempts()).add("key", e.key());
                e.status().ifPresent(s -> error.add("status", s));
                e.problem().ifPresent(p -> error.add("problemType", String.valueOf(p.type())));
                errors.add(error);
            } catch (WebApplicationException e) {
                errors.add(Json.createObjectBuilder().add("id", id).add("error", e.getClass().getName())
                        .add("status", e.getResponse().getStatus()).add("message", String.valueOf(e.getMessage())));
            } catch (RuntimeException e) {
                errors.add(Json.createObjectBuilder().add("id", id).add("error", e.getClass().getName())
                        .add("message", String.valueOf(e.getMessage())));
            }
        }
        JsonObjectBuilder seen = Json.createObjectBuilder();
        statuses.forEach((status, count) -> seen.add(String.valueOf(status), count));
        return Json.createObjectBuilder().add("ok", ok).add("replayed", replayed).add("statuses", seen).add("errors", errors)
                .build().toString();
    }

    private Response jaxrs(IdempotentRequests requests, String key, String id, long amount) {
        IdempotentRequest request = requests.to(callers.transfers()).accept(MediaType.APPLICATION_JSON);
        if (key != null) {
            request.key(key);
        }
        return request.post(Entity.json(Json.createObjectBuilder().add("id", id).add("amount", amount).build().toString()));
    }
}
