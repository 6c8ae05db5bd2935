package io.idemkey.config;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The admin API's settings as SPEC.md (Operators) gives them: off by default, role idempotency-admin unless set. */
class AdminSettingsTest {

    @Test
    void offByDefaultAndEnabledForTheRoleIdempotencyAdminUnlessAnotherIsSet() {
        assertFalse(AdminSettings.from(ConfigLookup.of(Map.of())).enabled());
        AdminSettings enabled = AdminSettings.from(ConfigLookup.of(Map.of(AdminSettings.ENABLED, "true")));
        assertTrue(enabled.enabled());
        assertEquals("idempotency-admin", enabled.role());
        assertEquals("idempotency-admin", AdminSettings.from(ConfigLookup.of(Map.of(AdminSettings.ENABLED, "true",
                AdminSettings.ROLE, "  "))).role(), "blank: unset");
        assertEquals("ops", AdminSettings.from(ConfigLookup.of(Map.of(AdminSettings.ENABLED, "true",
                AdminSettings.ROLE, " ops "))).role());
    }

    @Test
    void badValuesFailNamingTheProperty() {
        ConfigurationException notABoolean = assertThrows(ConfigurationException.class,
                () -> AdminSettings.from(ConfigLookup.of(Map.of(AdminSettings.ENABLED, "yes"))));
        assertTrue(notABoolean.getMessage().contains(AdminSettings.ENABLED), notABoolean.getMessage());
        ConfigurationException path = assertThrows(ConfigurationException.class,
                () -> AdminSettings.from(ConfigLookup.of(Map.of(AdminSettings.PATH, "a/b"))));
        assertTrue(path.getMessage().contains(AdminSettings.PATH), path.getMessage());
    }
}
