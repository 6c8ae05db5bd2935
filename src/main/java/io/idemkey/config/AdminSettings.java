package io.idemkey.config;

import java.util.regex.Pattern;

/**
 * The operators' admin API ({@code io.idemkey.admin}): off unless {@value #ENABLED} is {@code true};
 * then only callers in the role {@value #ROLE} reach it, under {@value #PATH} (relative to the
 * application's JAX-RS application path). Read and validated once, at deployment.
 *
 * @param enabled    whether the admin API answers at all
 * @param role       the role a caller must be in ({@value #DEFAULT_ROLE} unless configured)
 * @param path       the path segment it answers under
 * @param showBodies whether a look-up may show a completed record's body when asked ({@code body=true})
 */
public record AdminSettings(boolean enabled, String role, String path, boolean showBodies) {

    public static final String ENABLED = "idempotency.admin.enabled";
    public static final String ROLE = "idempotency.admin.role";
    public static final String PATH = "idempotency.admin.path";
    public static final String SHOW_BODIES = "idempotency.admin.show-bodies";
    /** The role when {@value #ROLE} is not set (SPEC: Operators). */
    public static final String DEFAULT_ROLE = "idempotency-admin";

    /** Off: the default. */
    public static final AdminSettings DISABLED = new AdminSettings(false, "", "idempotency-admin", false);

    private static final Pattern SEGMENT = Pattern.compile("[A-Za-z0-9._~-]{1,64}");

    /**
     * The settings as configured.
     *
     * @throws ConfigurationException naming the property whose value is wrong
     */
    public static AdminSettings from(ConfigLookup config) {
        boolean enabled = config.get(ENABLED).map(v -> Values.bool(ENABLED, v)).orElse(false);
        String path = config.get(PATH).map(String::trim).orElse(DISABLED.path());
        if (!SEGMENT.matcher(path).matches()) {
            throw new ConfigurationException(PATH, "must be one path segment of letters, digits, '.', '_', '~' or '-': '"
                    + path + "'");
        }
        boolean showBodies = config.get(SHOW_BODIES).map(v -> Values.bool(SHOW_BODIES, v)).orElse(false);
        if (!enabled) {
            return new AdminSettings(false, "", path, showBodies);
        }
        String role = config.get(ROLE).map(String::trim).orElse(DEFAULT_ROLE); // blank values count as unset
        return new AdminSettings(true, role, path, showBodies);
    }
}
