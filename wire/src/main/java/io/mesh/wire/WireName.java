package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonValue;

import java.util.Locale;

/**
 * An enum whose constants travel as SPEC's names, in JSON, logs and metrics labels: the constant's name in lower case
 * with {@code _} as {@code -} ({@code STEP_FAILED} is {@code step-failed}). Jackson writes and reads them by
 * {@link #wire()}; a name this version does not know reads as the enum's {@code @JsonEnumDefaultValue} constant
 * ({@link Json#MAPPER}), so that a reader of what a newer version wrote goes on.
 */
public interface WireName {
    /** @return the constant's Java name (every enum has it) */
    String name();

    /** @return SPEC's name */
    @JsonValue
    default String wire() { return name().toLowerCase(Locale.ROOT).replace('_', '-'); }

    /**
     * @param type    the enum
     * @param text    SPEC's name
     * @param unknown what another name reads as
     * @param <E>     the enum
     * @return the constant named {@code text}; {@code unknown} for another name; {@code null} for {@code null}
     */
    static <E extends Enum<E> & WireName> E parse(Class<E> type, String text, E unknown) {
        if (text == null) return null;
        for (E e : type.getEnumConstants()) if (e.wire().equals(text)) return e;
        return unknown;
    }
}
