package io.idemkey.config;

import io.idemkey.FailureMode;
import io.idemkey.Idempotent;
import io.idemkey.core.CallPolicy;
import io.idemkey.core.IdempotencyPolicy;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The policy of an {@code @Idempotent} method: its annotation, then the overrides under the name {@code Idempotent}. */
class IdempotentPolicyTest {

    static class Payments {
        @Idempotent
        public String apply(@Idempotent.Key String id) {
            return id;
        }

        @Idempotent(scope = "payments", ttlHours = 2, lockTtlSeconds = 60, excludeFields = "Nonce",
                recordedExceptions = IllegalStateException.class, failureMode = FailureMode.OPEN, inFlightWaitSeconds = 3)
        public String charge(@Idempotent.Key String id) {
            return id;
        }
    }

    private final Map<String, String> config = new HashMap<>();

    private CallPolicy resolve(String method) throws NoSuchMethodException {
        ConfigLookup lookup = ConfigLookup.of(config);
        Method m = Payments.class.getMethod(method, String.class);
        return new PolicyResolver(lookup, IdempotencySettings.from(lookup)).resolveCall(Payments.class, m, m.getAnnotation(Idempotent.class));
    }

    @Test
    void defaultsGiveTheMethodItsOwnScopeAndTheDocumentedPolicy() throws Exception {
        CallPolicy policy = resolve("apply");
        assertEquals(Payments.class.getName() + ".apply", policy.scope());
        assertEquals(new IdempotencyPolicy(Duration.ofHours(24), Duration.ofSeconds(30), true, Set.of(), false, Duration.ZERO),
                policy.policy());
        assertEquals(List.of(), policy.recordedExceptions());
    }

    @Test
    void everyMemberIsTakenFromTheAnnotation() throws Exception {
        CallPolicy policy = resolve("charge");
        assertEquals("payments", policy.scope());
        assertEquals(new IdempotencyPolicy(Duration.ofHours(2), Duration.ofSeconds(60), true, Set.of("nonce"), true,
                Duration.ofSeconds(3)), policy.policy());
        assertTrue(policy.records(new IllegalStateException()));
    }

    @Test
    void overridesUnderTheNameIdempotentMostSpecificFirst() throws Exception {
        config.put("Idempotent/lockTtlSeconds", "10");
        config.put(Payments.class.getName() + "/Idempotent/lockTtlSeconds", "20");
        config.put(Payments.class.getName() + "/charge/Idempotent/lockTtlSeconds", "40");
        config.put("IdempotencyKey/lockTtlSeconds", "99"); // the HTTP annotation's: not these methods'
        assertEquals(Duration.ofSeconds(40), resolve("charge").policy().lockTtl());
        assertEquals(Duration.ofSeconds(20), resolve("apply").policy().lockTtl());
        config.remove(Payments.class.getName() + "/Idempotent/lockTtlSeconds");
        assertEquals(Duration.ofSeconds(10), resolve("apply").policy().lockTtl());
    }

    @Test
    void anInvalidOverrideIsRefusedNamingTheProperty() {
        String property = Payments.class.getName() + "/apply/Idempotent/lockTtlSeconds";
        config.put(property, "0");
        ConfigurationException refused = assertThrows(ConfigurationException.class, () -> resolve("apply"));
        assertEquals(property, refused.property());
    }
}
