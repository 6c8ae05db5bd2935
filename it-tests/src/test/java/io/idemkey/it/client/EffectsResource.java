package io.idemkey.it.client;

import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.json.Json;
import jakarta.json.JsonObjectBuilder;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;

/** The bookings of the transfers whose ids start with a prefix: {@code {"id": count, ...}}. */
@Path("effects")
@RequestScoped
public class EffectsResource {

    @Inject
    Effects effects;

    @GET
    @Produces(MediaType.APPLICATION_JSON)
    public String bookings(@QueryParam("prefix") String prefix) {
        JsonObjectBuilder counts = Json.createObjectBuilder();
        effects.all().forEach((id, count) -> {
            if (id.startsWith(prefix)) {
                counts.add(id, count.get());
            }
        });
        return counts.build().toString();
    }
}
