package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonEnumDefaultValue;
import io.mesh.manifest.WireName;

/** What one line of a host's ledger records (SPEC.md, "Audit"; the format: decision 28). */
public enum LedgerKind implements WireName {
    /** A Docker event of a container labelled {@code mesh.module}, as the engine's stream gave it. */
    EVENT,
    /** A Docker call a mesh process made on a container, with its cause; {@code end} is absent when the process died in it. */
    CALL,
    /**
     * An apply of {@code module} for the push in {@code cause} began, under its lock and after its freeze was read: the
     * process's calls for that push and module from here to its next such line are this apply's.
     */
    APPLY,
    /** A container became held: by a window (from before its first stop) or by an operator's hold (once confirmed). */
    HELD_OPEN,
    /** A held container's hold ended: the window's held node deleted, or the operator's hold released or expired. */
    HELD_CLOSE,
    /** The agent began obeying a freeze of {@code module} ({@code _all}: every module). */
    FREEZE_OPEN,
    /** The agent saw that freeze end (thaw or {@code until}). */
    FREEZE_CLOSE,
    /** A span from {@code at} to {@code end} the ledger does not cover; {@code reason} says why. */
    GAP,
    /** The agent began following its engine's events ({@code reason}: how far back the engine's buffer reached). */
    FOLLOW,
    /** Read only: a kind this version does not know (a newer agent wrote it). */
    @JsonEnumDefaultValue
    UNKNOWN;

    @Override
    public String toString() { return wire(); }
}
