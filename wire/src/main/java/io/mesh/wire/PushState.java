package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonEnumDefaultValue;
import io.mesh.manifest.WireName;

/**
 * The state of a push on one host and module, and of the whole push, as the coordinator derives it from the agents'
 * reports ({@code GET /v1/pushes/{push}}, {@code GET /v1/fleet}: SPEC.md, "Coordinator HTTP API"). Here, not in the
 * coordinator, because the operator's client reads it too.
 */
public enum PushState implements WireName {
    /** No report yet, or only one of an older push. */
    PENDING,
    /**
     * Applied: this push's spec ran there (the report is of this push and applied, or its {@code lastApplied} or
     * {@code appliedPushes} name it), whether or not a newer push replaced it since.
     */
    APPLIED,
    /** Waiting on an open window, or on a freeze of the module (the report's {@code freeze} is set). */
    DEFERRED,
    /**
     * Its rollout's wave has not come to the host (or the rollout is paused): the previous revision runs there. The
     * report reads {@code deferred} with {@code rollout} set (SPEC.md keeps a report's outcome to three values).
     */
    WAITING,
    /** The apply failed; its report's error says why. */
    FAILED,
    /**
     * Its host is drained (decision 37): the push's rollout passed over it, and the previous revision runs there until
     * it is undrained. Settled, not applied; for the whole push, every target settled and some passed over so.
     */
    DRAINED,
    /**
     * A newer push replaced this push on the host before this push's spec ran there (or after its apply failed):
     * SPEC.md, "Health and readiness". Settled, like {@code applied} and {@code failed}, but not applied: the target names the
     * newer push.
     */
    SUPERSEDED,
    /**
     * The operator dropped the push ({@code mesh push cancel}, {@code POST /v1/pushes/{push}/cancel}) before it was
     * applied here: no longer waited for. Settled, not applied. The module's desired state is untouched, so an agent
     * that starts later still applies the module's newest desired state; a report that this push applied here after
     * all reads {@code applied} again (docs/decisions/0030-cancel-and-expire-pushes.md).
     */
    CANCELLED,
    /**
     * Pending on a host that has no agent node for longer than the coordinator's {@code --no-agent-expiry} (24 h by
     * default) since the push was taken: settled, not applied. It reads {@code pending} again once an agent of that
     * host registers (docs/decisions/0030-cancel-and-expire-pushes.md).
     */
    EXPIRED,
    /** The report's outcome is a name this version does not know ({@link ApplyOutcome#UNKNOWN}). */
    @JsonEnumDefaultValue
    UNKNOWN;

    @Override
    public String toString() { return wire(); }

    /**
     * @param report a current report, or {@code null}
     * @return the state it gives; {@link #PENDING} for {@code null} or a report without an outcome
     */
    public static PushState of(ApplyReport report) {
        if (report == null || report.outcome() == null) return PENDING;
        return switch (report.outcome()) {
            case APPLIED -> APPLIED;
            case DEFERRED -> report.rollout() != null ? WAITING : DEFERRED;
            case FAILED -> FAILED;
            case NO_DESIRED_STATE -> PENDING; // it names no push: the node it would apply is not there (yet)
            case UNKNOWN -> UNKNOWN;
        };
    }
}
