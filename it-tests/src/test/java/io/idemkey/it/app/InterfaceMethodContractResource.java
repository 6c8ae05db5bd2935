package io.idemkey.it.app;

import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.Path;

/**
 * Implements {@link Contracts.OnInterfaceMethod}: no JAX-RS annotation on its method, so JAX-RS takes the
 * interface's. A CDI bean ({@code @RequestScoped}): for an interface placement Idemkey binds its
 * interceptor to the class, which it can only do for a class CDI manages.
 */
@Path("/contracts/interface-method")
@RequestScoped
public class InterfaceMethodContractResource implements Contracts.OnInterfaceMethod {

    @Inject
    ContractCharges charges;

    @Override
    public String charge(boolean retryable, String body) {
        return charges.charge("interface-method", retryable);
    }
}
