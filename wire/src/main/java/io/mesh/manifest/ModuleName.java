package io.mesh.manifest;

import java.util.regex.Pattern;

/**
 * The one name rule of the manifest (SPEC.md, "Manifest"; docs/security.md, threat 2): module, container, schedule and
 * group names are lower-case letters, digits and {@code -}, starting with a letter or digit, at most 40 characters. The
 * parser, the coordinator's API and {@code mesh import-compose} all check it here.
 */
public final class ModuleName {
    /** The rule as a regular expression. */
    public static final String REGEX = "[a-z0-9][a-z0-9-]{0,39}";
    /** {@link #REGEX}, compiled. */
    public static final Pattern PATTERN = Pattern.compile(REGEX);
    /** The rule in words, for error messages. */
    public static final String RULE = "lower-case letters, digits and '-', starting with a letter or digit, at most 40 characters";

    private ModuleName() {}

    /** @return true when {@code name} is not null and follows the rule */
    public static boolean matches(String name) {
        return name != null && PATTERN.matcher(name).matches();
    }
}
