package io.idemkey.sample;

import jakarta.json.Json;
import jakarta.json.bind.JsonbException;
import jakarta.ws.rs.ProcessingException;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;
import jakarta.ws.rs.ext.Provider;

/**
 * Malformed JSON is the client's mistake: 400, not the servers' default 500. Jersey (Payara)
 * reports an entity its reader cannot read as a {@link ProcessingException}, RESTEasy (Open
 * Liberty) as the {@link JsonbException} itself.
 */
@Provider
public class UnreadableEntityMapper implements ExceptionMapper<ProcessingException> {

    @Override
    public Response toResponse(ProcessingException exception) {
        return badRequest();
    }

    static Response badRequest() {
        return Response.status(400).type("application/problem+json")
                .entity(Json.createObjectBuilder()
                        .add("title", "Unreadable request body")
                        .add("status", 400)
                        .add("detail", "The request body is not valid JSON for this endpoint.")
                        .build().toString())
                .build();
    }

    /** The same answer where the JSON-B error arrives unwrapped. */
    @Provider
    public static class Unwrapped implements ExceptionMapper<JsonbException> {
        @Override
        public Response toResponse(JsonbException exception) {
            return badRequest();
        }
    }
}
