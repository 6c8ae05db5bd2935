package io.idemkey.core;

import java.util.Objects;

/**
 * A resource method Idemkey guards, as clients see it: for API documentation and deployment logs.
 *
 * @param httpMethod   {@code POST}, {@code PATCH}, ...
 * @param pathTemplate the path template relative to the application, {@code /orders/{id}/pay}
 * @param policy       its resolved policy
 */
public record GuardedEndpoint(String httpMethod, String pathTemplate, IdempotencyPolicy policy) {

    public GuardedEndpoint {
        Objects.requireNonNull(httpMethod, "httpMethod");
        Objects.requireNonNull(pathTemplate, "pathTemplate");
        Objects.requireNonNull(policy, "policy");
    }

    /** {@code POST /orders/{id}/pay}. */
    public String label() {
        return httpMethod + " " + pathTemplate;
    }
}
