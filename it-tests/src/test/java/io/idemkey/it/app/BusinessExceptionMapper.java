package io.idemkey.it.app;

import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;
import jakarta.ws.rs.ext.Provider;

@Provider
public class BusinessExceptionMapper implements ExceptionMapper<BusinessException> {
    @Override
    public Response toResponse(BusinessException exception) {
        return Response.status(402).type("application/problem+json")
                .entity("{\"title\":\"" + exception.getMessage() + "\",\"status\":402}").build();
    }
}
