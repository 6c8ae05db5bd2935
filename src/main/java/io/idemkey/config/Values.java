package io.idemkey.config;

import java.util.Locale;

/** Parsing of configuration values, with errors that name the property. */
public final class Values {

    private Values() {
    }

    public static int integer(String property, String value, int min, int max) {
        int parsed;
        try {
            parsed = Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new ConfigurationException(property, "must be a whole number between " + min + " and " + max
                    + ", not '" + value + "'");
        }
        return inRange(property, parsed, min, max);
    }

    static int inRange(String property, int value, int min, int max) {
        if (value < min || value > max) {
            throw new ConfigurationException(property, "must be between " + min + " and " + max + ", not " + value);
        }
        return value;
    }

    static boolean bool(String property, String value) {
        String v = value.trim().toLowerCase(Locale.ROOT);
        if (v.equals("true") || v.equals("false")) {
            return Boolean.parseBoolean(v);
        }
        throw new ConfigurationException(property, "must be true or false, not '" + value + "'");
    }

    static <E extends Enum<E>> E choice(String property, String value, Class<E> type) {
        for (E constant : type.getEnumConstants()) {
            if (constant.name().equalsIgnoreCase(value.trim())) {
                return constant;
            }
        }
        StringBuilder accepted = new StringBuilder();
        for (E constant : type.getEnumConstants()) {
            accepted.append(accepted.length() == 0 ? "" : ", ").append(constant.name().toLowerCase(Locale.ROOT));
        }
        throw new ConfigurationException(property, "must be one of " + accepted + ", not '" + value + "'");
    }
}
