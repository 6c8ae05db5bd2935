package io.idemkey.it.app;

import jakarta.ws.rs.ProcessingException;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;
import jakarta.ws.rs.ext.Provider;

/** Jersey wraps the JSON-B error of an unreadable entity in a ProcessingException: 400 too. */
@Provider
public class UnreadableEntityMapper implements ExceptionMapper<ProcessingException> {
    @Override
    public Response toResponse(ProcessingException exception) {
        return Response.status(400).type("application/problem+json").entity("{\"title\":\"unreadable\",\"status\":400}").build();
    }
}
