package io.idemkey.client;

import io.idemkey.config.ConfigLookup;
import io.idemkey.config.ConfigurationException;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

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
        assertEquals(new RetryPolicy(5, Duration.ofMillis(100), Duration.ofSeconds(5), Duration.ofSeconds(30),
                        Set.of(409, 429, 502, 503, 504)),
                RetryPolicy.from(ConfigLookup.of(Map.of()), PaymentsApi.class, method("charge")));
    }

    @Test
    void theRetriedStatusesAreTheMostSpecificListSetNotAMergeOfThem() {
        ConfigLookup config = ConfigLookup.of(Map.of(
                "idempotency.client.retry-statuses", "409, 429, 503",
                "io.idemkey.client.RetryPolicyTest$PaymentsApi/idempotency.client.retry-statuses", "502,504",
                "io.idemkey.client.RetryPolicyTest$PaymentsApi/charge/idempotency.client.retry-statuses", "500"));

        assertEquals(List.of(500), List.copyOf(RetryPolicy.from(config, PaymentsApi.class, method("charge")).retryStatuses()));
        assertEquals(List.of(502, 504), List.copyOf(RetryPolicy.from(config, PaymentsApi.class, method("refund")).retryStatuses()));
        assertEquals(List.of(409, 429, 503), List.copyOf(RetryPolicy.from(config).retryStatuses()));
    }

    @Test
    void anInvalidListOfRetriedStatusesIsRefusedNamingThePropertyItWasSetWith() {
        String methodLevel = "io.idemkey.client.RetryPolicyTest$PaymentsApi/charge/idempotency.client.retry-statuses";
        ConfigurationException notStatuses = assertThrows(ConfigurationException.class, () -> RetryPolicy.from(
                ConfigLookup.of(Map.of(methodLevel, "502,5xx")), PaymentsApi.class, method("charge")));
        assertEquals(methodLevel, notStatuses.property());
        assertEquals("Invalid Idemkey configuration: " + methodLevel + " must list HTTP statuses from 400 to 599 separated by"
                + " commas, not '502,5xx'", notStatuses.getMessage());

        ConfigurationException success = assertThrows(ConfigurationException.class, () -> RetryPolicy.from(
                ConfigLookup.of(Map.of("idempotency.client.retry-statuses", "409,200"))));
        assertEquals("idempotency.client.retry-statuses", success.property());
        assertTrue(success.getMessage().endsWith("must list HTTP statuses from 400 to 599, not 200"), success.getMessage());

        ConfigurationException commas = assertThrows(ConfigurationException.class, () -> RetryPolicy.from(
                ConfigLookup.of(Map.of("idempotency.client.retry-statuses", ","))));
        assertTrue(commas.getMessage().endsWith("separated by commas, not ','"), commas.getMessage());

        ConfigurationException redirect = assertThrows(ConfigurationException.class,
                () -> RetryPolicy.defaults().withRetryStatuses(Set.of(302)));
        assertEquals("idempotency.client.retry-statuses", redirect.property());
        ConfigurationException none = assertThrows(ConfigurationException.class,
                () -> RetryPolicy.defaults().withRetryStatuses(Set.of()));
        assertTrue(none.getMessage().endsWith("must list at least one HTTP status"), none.getMessage());
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
