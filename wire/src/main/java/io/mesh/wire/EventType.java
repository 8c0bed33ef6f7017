package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonEnumDefaultValue;
import io.mesh.manifest.WireName;

import java.util.Locale;

/**
 * The type of an event sent to webhooks (SPEC.md, "The rest of the operator's stack"): its wire name is the
 * constant's name in lower case with the one {@code _} as {@code .} ({@code WINDOW_STARTED} is {@code window.started}),
 * as a notify config's {@code events} lists them.
 */
public enum EventType implements WireName {
    /** A window opened: its held and window nodes are published, nothing stopped yet (written by the window's process). */
    WINDOW_STARTED,
    /** A window's step exited 0 and its containers were given back. */
    WINDOW_ENDED,
    /** A window's step failed, timed out or could not run, or giving its containers back failed. */
    WINDOW_FAILED,
    /** A window did not open and stopped nothing (start-by passed, held by operator, gate). */
    WINDOW_SKIPPED,
    /** A host's apply of a push failed. */
    PUSH_FAILED,
    /** A container of a push was reverted (not ready by its deadline). */
    PUSH_REVERTED,
    /** A rollout paused. */
    ROLLOUT_PAUSED,
    /** A rollout reached every host. */
    ROLLOUT_DONE,
    /** An operator placed a hold ({@code mesh hold}). */
    HOLD_PLACED,
    /** An operator's hold ended (released or expired). */
    HOLD_ENDED,
    /** A freeze began ({@code mesh freeze}). */
    FREEZE_STARTED,
    /** A freeze ended ({@code mesh thaw}). */
    FREEZE_ENDED,
    /** A host's audit found a violation. */
    AUDIT_VIOLATION,
    /** Read only: a type this version does not know (a newer writer). Never written by this version. */
    @JsonEnumDefaultValue
    UNKNOWN;

    @Override
    public String wire() { return name().toLowerCase(Locale.ROOT).replace('_', '.'); }

    @Override
    public String toString() { return wire(); }
}
