package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonEnumDefaultValue;
import io.mesh.manifest.WireName;

/** Where a window request is in its life: {@link WindowRequest}'s {@code state} (docs/design.md, "Window requests"). */
public enum WindowRequestState implements WireName {
    /** Written by the requester; nobody runs it yet. */
    REQUESTED,
    /** Claimed by the agent; its window is running or waiting for the module lock. */
    RUNNING,
    /** Finished: {@code result} or {@code error} says how. */
    DONE,
    /** Read only: a name this version does not know; the agent leaves such a request alone. Never written. */
    @JsonEnumDefaultValue
    UNKNOWN;

    @Override
    public String toString() { return wire(); }
}
