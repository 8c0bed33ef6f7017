package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonEnumDefaultValue;
import io.mesh.manifest.WireName;

/** Where one host of an audit request is: {@link AuditAnswer}'s {@code state} (decision 28; the flow of decision 12). */
public enum AuditState implements WireName {
    /** Written by the coordinator; the host's agent has not answered yet. */
    PENDING,
    /** The agent wrote its ledger slice as {@code pages} page children of its node. */
    ANSWERED,
    /** The agent could not give its ledger (no ledger, an unreadable request): {@code error} says why. */
    FAILED,
    /** Read only: a name this version does not know. Never written. */
    @JsonEnumDefaultValue
    UNKNOWN;

    @Override
    public String toString() { return wire(); }
}
