package io.idemkey.it.app;

import io.idemkey.IdempotencyKey;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.Path;

/**
 * Implements {@link Contracts.Unannotated}: no JAX-RS annotation on its method, so JAX-RS takes the
 * interface's. A CDI bean ({@code @RequestScoped}): for an interface placement Idemkey binds its
 * interceptor to the class, which it can only do for a class CDI manages.
 */
@Path("/contracts/implementation")
@RequestScoped
public class ImplementationContractResource implements Contracts.Unannotated {

    @Inject
    ContractCharges charges;

    @Override
    @IdempotencyKey
    public String charge(boolean retryable, String body) {
        return charges.charge("implementation", retryable);
    }
}
