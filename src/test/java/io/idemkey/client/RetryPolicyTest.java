package io.idemkey.client;

import io.idemkey.config.ConfigLookup;
import io.idemkey.config.ConfigurationException;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RetryPolicyTest {

    interface PaymentsApi {
        String charge(String payment);

        String refund(String refund);
    }

    @Test
    void withNothingConfiguredTheDefaultsApply() {
        assertEquals(new RetryPolicy(5, Duration.ofMillis(100), Duration.ofSeconds(5), Duration.ofSeconds(30)),
                RetryPolicy.from(ConfigLookup.of(Map.of()), PaymentsApi.class, method("charge")));
    }

    @Test
    void theMostSpecificSettingWinsMethodThenInterfaceThenGlobal() {
        ConfigLookup config = ConfigLookup.of(Map.of(
                "idempotency.client.max-attempts", "3",
                "idempotency.client.max-total-ms", "9000",
                "io.idemkey.client.RetryPolicyTest$PaymentsApi/idempotency.client.max-attempts", "7",
                "io.idemkey.client.RetryPolicyTest$PaymentsApi/charge/idempotency.client.max-attempts", "10",
                "io.idemkey.client.RetryPolicyTest$PaymentsApi/charge/idempotency.client.initial-backoff-ms", "20"));

        RetryPolicy charge = RetryPolicy.from(config, PaymentsApi.class, method("charge"));
        RetryPolicy refund = RetryPolicy.from(config, PaymentsApi.class, method("refund"));

        assertEquals(new RetryPolicy(10, Duration.ofMillis(20), Duration.ofSeconds(5), Duration.ofSeconds(9)), charge);
        assertEquals(new RetryPolicy(7, Duration.ofMillis(100), Duration.ofSeconds(5), Duration.ofSeconds(9)), refund);
        assertEquals(3, RetryPolicy.from(config).maxAttempts());
    }

    @Test
    void anInvalidValueIsRefusedNamingThePropertyItWasSetWith() {
        ConfigurationException tooMany = assertThrows(ConfigurationException.class, () -> RetryPolicy.from(ConfigLookup.of(Map.of(
                "io.idemkey.client.RetryPolicyTest$PaymentsApi/charge/idempotency.client.max-attempts", "1000")),
                PaymentsApi.class, method("charge")));
        assertEquals("io.idemkey.client.RetryPolicyTest$PaymentsApi/charge/idempotency.client.max-attempts", tooMany.property());

        ConfigurationException notANumber = assertThrows(ConfigurationException.class, () -> RetryPolicy.from(
                ConfigLookup.of(Map.of("idempotency.client.max-total-ms", "30s")), PaymentsApi.class, method("charge")));
        assertEquals("idempotency.client.max-total-ms", notANumber.property());
        assertTrue(notANumber.getMessage().contains("'30s'"), notANumber.getMessage());

        ConfigurationException backwards = assertThrows(ConfigurationException.class, () -> RetryPolicy.from(ConfigLookup.of(Map.of(
                "idempotency.client.initial-backoff-ms", "500", "idempotency.client.max-backoff-ms", "200"))));
        assertEquals("idempotency.client.max-backoff-ms", backwards.property());
    }

    private static Method method(String name) {
        try {
            return PaymentsApi.class.getMethod(name, String.class);
        } catch (NoSuchMethodException e) {
            throw new AssertionError(e);
        }
    }
}
