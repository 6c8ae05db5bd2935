package io.idemkey.it.app;

import jakarta.json.bind.JsonbException;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;
import jakarta.ws.rs.ext.Provider;

/** Malformed JSON → 400 (both servers answer 500 by default). */
@Provider
public class UnreadableJsonMapper implements ExceptionMapper<JsonbException> {
    @Override
    public Response toResponse(JsonbException exception) {
        return Response.status(400).type("application/problem+json").entity("{\"title\":\"unreadable\",\"status\":400}").build();
    }
}
