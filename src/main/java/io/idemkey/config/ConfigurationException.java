package io.idemkey.config;

/**
 * A configuration value is invalid. The message names the property (or the annotation member) and
 * says what is accepted; it never contains a secret. Thrown while the application is deployed.
 */
public class ConfigurationException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String property;

    public ConfigurationException(String property, String problem) {
        super("Invalid Idemkey configuration: " + property + " " + problem);
        this.property = property;
    }

    /** The property (or {@code Class/method @IdempotencyKey(member)}) whose value is invalid. */
    public String property() {
        return property;
    }
}
