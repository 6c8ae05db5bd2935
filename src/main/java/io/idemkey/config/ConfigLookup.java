package io.idemkey.config;

import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;

import java.util.Map;
import java.util.Optional;

/**
 * Reads one configuration property: MicroProfile Config on a server, a map in tests.
 */
@FunctionalInterface
public interface ConfigLookup {

    /** The value of {@code name}, if set and not blank. */
    Optional<String> get(String name);

    /** MicroProfile Config's values, blank ones as unset. */
    static ConfigLookup of(Config config) {
        return name -> config.getOptionalValue(name, String.class).filter(v -> !v.isBlank());
    }

    /** The caller's application's MicroProfile Config. */
    static ConfigLookup microProfile() {
        return of(ConfigProvider.getConfig());
    }

    static ConfigLookup of(Map<String, String> values) {
        return name -> Optional.ofNullable(values.get(name)).filter(v -> !v.isBlank());
    }
}
