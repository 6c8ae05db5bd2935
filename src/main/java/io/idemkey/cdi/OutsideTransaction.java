package io.idemkey.cdi;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.spi.CDI;
import jakarta.transaction.Transactional;

import java.util.Optional;
import java.util.function.BooleanSupplier;

/**
 * Runs a store call with the caller's transaction suspended ({@code NOT_SUPPORTED}): the portable way
 * to get a connection that is not enlisted in it from a container's DataSource.
 */
@ApplicationScoped
public class OutsideTransaction {

    @Transactional(Transactional.TxType.NOT_SUPPORTED)
    public boolean call(BooleanSupplier storeCall) {
        return storeCall.getAsBoolean();
    }

    static Optional<OutsideTransaction> bean() {
        var bean = CDI.current().select(OutsideTransaction.class);
        return bean.isResolvable() ? Optional.of(bean.get()) : Optional.empty();
    }
}
