package io.idemkey.config;

import java.util.Map;
import java.util.Optional;

/**
 * Reads one configuration property: MicroProfile Config on a server, a map in tests.
 */
@FunctionalInterface
public interface ConfigLookup {

    /** The value of {@code name}, if set and not blank. */
    Optional<String> get(String name);

    static ConfigLookup of(Map<String, String> values) {
        return name -> Optional.ofNullable(values.get(name)).filter(v -> !v.isBlank());
    }
}
