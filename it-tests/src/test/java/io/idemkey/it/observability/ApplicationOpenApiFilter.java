package io.idemkey.it.observability;

import io.idemkey.openapi.IdempotencyOASFilter;
import org.eclipse.microprofile.openapi.models.Operation;

/**
 * An application's own {@code mp.openapi.filter}: extending Idemkey's filter is the one line that
 * keeps Idemkey's documentation in the document.
 */
public class ApplicationOpenApiFilter extends IdempotencyOASFilter {

    @Override
    public Operation filterOperation(Operation operation) {
        return operation.addExtension("x-application-filter", "ran");
    }
}
