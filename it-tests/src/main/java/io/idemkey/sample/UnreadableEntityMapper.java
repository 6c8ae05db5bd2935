package io.idemkey.sample;

import jakarta.json.Json;
import jakarta.ws.rs.ProcessingException;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;
import jakarta.ws.rs.ext.Provider;

/**
 * Malformed JSON is the client's mistake: 400, not the servers' default 500 (the runtime reports an
 * entity its reader cannot read as a {@link ProcessingException}).
 */
@Provider
public class UnreadableEntityMapper implements ExceptionMapper<ProcessingException> {

    @Override
    public Response toResponse(ProcessingException exception) {
        return Response.status(400).type("application/problem+json")
                .entity(Json.createObjectBuilder()
                        .add("title", "Unreadable request body")
                        .add("status", 400)
                        .add("detail", "The request body is not valid JSON for this endpoint.")
                        .build().toString())
                .build();
    }
}
