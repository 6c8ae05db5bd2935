package io.idemkey.cdi;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.spi.CDI;
import jakarta.transaction.Transactional;

import java.util.Optional;
import java.util.function.Supplier;

/**
 * Runs a store call with the caller's transaction suspended ({@code NOT_SUPPORTED}): the portable way
 * to get a connection that is not enlisted in it from a container's DataSource.
 */
@ApplicationScoped
public class OutsideTransaction {

    @Transactional(Transactional.TxType.NOT_SUPPORTED)
    public <T> T call(Supplier<T> storeCall) {
        return storeCall.get();
    }

    static Optional<OutsideTransaction> bean() {
        var bean = CDI.current().select(OutsideTransaction.class);
        return bean.isResolvable() ? Optional.of(bean.get()) : Optional.empty();
    }
}
