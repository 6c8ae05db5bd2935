package io.idemkey.it.misplaced;

import io.idemkey.it.app.Contracts;
import jakarta.ws.rs.Path;

/**
 * An interface placement on a resource class CDI does not manage (no scope): CDI cannot intercept
 * it, so Idemkey cannot honour the annotation, and deploying this must fail, naming the method.
 */
@Path("/unmanaged")
public class UnmanagedContractResource implements Contracts.OnInterfaceMethod {

    @Override
    public String charge(boolean retryable, String body) {
        return "{}";
    }
}
