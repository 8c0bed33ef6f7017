package io.mesh.manifest;

import com.fasterxml.jackson.annotation.JsonEnumDefaultValue;
import com.fasterxml.jackson.annotation.JsonValue;

import java.util.Locale;

/**
 * An enum whose constants travel as SPEC's names, in JSON, logs and metrics labels: the constant's name in lower case
 * with {@code _} as {@code -} ({@code STEP_FAILED} is {@code step-failed}). Jackson writes and reads them by
 * {@link #wire()}; a name this version does not know reads as the enum's {@code @JsonEnumDefaultValue} constant
 * ({@code io.mesh.wire.Json.MAPPER}), so that a reader of what a newer version wrote goes on; {@link #of} reads a name the same way.
 * Each enum overrides {@code toString()} with {@link #wire()} itself (an interface cannot), so that logs print SPEC's
 * names.
 */
public interface WireName {
    /** @return the constant's Java name (every enum has it) */
    String name();

    /** @return SPEC's name */
    @JsonValue
    default String wire() { return name().toLowerCase(Locale.ROOT).replace('_', '-'); }

    /**
     * Reads SPEC's name as Jackson does: a name this version does not know is the enum's {@code @JsonEnumDefaultValue}
     * constant.
     *
     * @param type the enum
     * @param text SPEC's name, such as {@code step-failed}
     * @param <E>  the enum
     * @return the constant named {@code text}; the {@code @JsonEnumDefaultValue} constant for another name; {@code null}
     *         for {@code null}
     * @throws IllegalArgumentException when {@code text} names no constant and the enum has no default one
     */
    static <E extends Enum<E> & WireName> E of(Class<E> type, String text) {
        if (text == null) return null;
        for (E e : type.getEnumConstants()) if (e.wire().equals(text)) return e;
        for (E e : type.getEnumConstants()) {
            try {
                if (type.getField(e.name()).isAnnotationPresent(JsonEnumDefaultValue.class)) return e;
            } catch (NoSuchFieldException impossible) {
                throw new IllegalStateException(impossible); // every constant is a public field of its enum
            }
        }
        throw new IllegalArgumentException("'" + text + "' is none of " + type.getSimpleName() + "'s names");
    }
}
