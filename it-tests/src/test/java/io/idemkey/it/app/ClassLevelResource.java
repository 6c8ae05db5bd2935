package io.idemkey.it.app;

import io.idemkey.IdempotencyKey;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

/** Guarded at class level: every POST of the class is guarded, GET is not. */
@Path("/class-level")
@Produces(MediaType.APPLICATION_JSON)
@IdempotencyKey
public class ClassLevelResource {

    @Inject
    Executions executions;

    @POST
    public String create(@HeaderParam("Idempotency-Key") String key) {
        return "{\"execution\":" + executions.record("class:" + key) + "}";
    }

    @GET
    public String read() {
        return "{\"read\":true}";
    }
}
