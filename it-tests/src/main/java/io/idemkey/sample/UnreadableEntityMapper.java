package io.idemkey.sample;

import jakarta.json.Json;
import jakarta.json.bind.JsonbException;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;
import jakarta.ws.rs.ext.Provider;

/** Malformed JSON is the client's mistake: 400, not the servers' default 500. */
@Provider
public class UnreadableEntityMapper implements ExceptionMapper<JsonbException> {

    @Override
    public Response toResponse(JsonbException exception) {
        return Response.status(400).type("application/problem+json")
                .entity(Json.createObjectBuilder()
                        .add("title", "Unreadable request body")
                        .add("status", 400)
                        .add("detail", "The request body is not valid JSON for this endpoint.")
                        .build().toString())
                .build();
    }
}
