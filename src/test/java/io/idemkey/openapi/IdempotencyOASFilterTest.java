package io.idemkey.openapi;

import io.idemkey.core.GuardedEndpoint;
import io.idemkey.core.IdempotencyPolicy;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;

class IdempotencyOASFilterTest {

    private static final IdempotencyPolicy POLICY = new IdempotencyPolicy(Duration.ofHours(24), Duration.ofSeconds(30),
            true, Set.of(), false, Duration.ZERO);
    private static final GuardedEndpoint ORDERS = new GuardedEndpoint("POST", "/orders", POLICY);
    private static final GuardedEndpoint PAY = new GuardedEndpoint("POST", "/orders/{id}/pay", POLICY);

    @Test
    void documentPathsAreTheApplicationPathFollowedByTheEndpointsTemplates() {
        Set<String> paths = Set.of("/api/orders", "/api/orders/{id: [0-9]+}/pay", "/api/admin/orders");
        String applicationPath = IdempotencyOASFilter.applicationPath(paths, List.of(ORDERS, PAY));
        assertEquals("/api", applicationPath);
        assertEquals(Optional.of(ORDERS), IdempotencyOASFilter.match(List.of(ORDERS, PAY), "POST", "/api/orders", applicationPath));
        assertEquals(Optional.of(PAY), IdempotencyOASFilter.match(List.of(ORDERS, PAY), "post", "/api/orders/{id}/pay/",
                applicationPath));
        assertEquals(Optional.empty(), IdempotencyOASFilter.match(List.of(ORDERS, PAY), "POST", "/api/admin/orders",
                applicationPath), "another resource whose path ends the same is not guarded");
        assertEquals(Optional.empty(), IdempotencyOASFilter.match(List.of(ORDERS, PAY), "GET", "/api/orders", applicationPath));
    }

    @Test
    void withoutAnApplicationPathTheTemplatesAreTheDocumentPaths() {
        Set<String> paths = Set.of("/orders", "/admin/orders");
        String applicationPath = IdempotencyOASFilter.applicationPath(paths, List.of(ORDERS));
        assertEquals("", applicationPath, "the shortest prefix wins a tie");
        assertEquals(Optional.empty(), IdempotencyOASFilter.match(List.of(ORDERS), "POST", "/admin/orders", applicationPath));
    }
}
