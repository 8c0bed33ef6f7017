package io.mesh.coordinator;

import io.mesh.curator.EventOutbox;
import io.mesh.wire.EventType;
import io.mesh.wire.FreezeRecord;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.MeshEvent;
import io.mesh.wire.Times;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The events of an operator's requests that a coordinator takes, written by that coordinator into the coordinators'
 * outbox {@code /mesh/events/_coordinators} (docs/decisions/0034-webhooks-from-an-outbox.md): {@code hold.placed} and
 * {@code hold.ended} ({@code mesh hold}, {@code mesh release}, and a host's as {@code mesh drain}, {@code mesh undrain}),
 * {@code freeze.started} and {@code freeze.ended}
 * ({@code mesh freeze}, {@code mesh thaw}). Written after the request's own write succeeded, before its answer; an event
 * that cannot be written is logged and does not fail the request (the hold or freeze is in force whatever the webhooks
 * hear).
 */
final class CoordinatorEvents {
    private static final Logger LOG = LoggerFactory.getLogger(CoordinatorEvents.class);
    private final EventOutbox outbox;

    /** @param outbox the coordinators' outbox ({@code io.mesh.wire.ZkPaths#COORDINATOR_EVENTS}) */
    CoordinatorEvents(EventOutbox outbox) { this.outbox = outbox; }

    /** {@code hold.placed}: an operator's hold as written. */
    void holdPlaced(HeldRecord h) {
        HeldRecord.OperatorHold o = h.hold();
        write(MeshEvent.of(EventType.HOLD_PLACED, o.since() == null ? Times.now() : o.since(), h.host(), h.module())
                .withContainer(h.container()).withBy(o.by(), o.reason()).withUntil(o.until()));
    }

    /**
     * {@code hold.ended}: an operator's hold released.
     *
     * @param h  the hold as it was
     * @param by who released it
     */
    void holdReleased(HeldRecord h, String by) {
        HeldRecord.OperatorHold o = h.hold();
        write(MeshEvent.of(EventType.HOLD_ENDED, Times.now(), h.host(), h.module()).withContainer(h.container())
                .withBy(by, "released (held by " + o.by() + ": " + o.reason() + ")"));
    }

    /**
     * {@code hold.placed} of a drain (decision 37): every container of the host, so no container and no module; its
     * reason reads {@code drain: REASON}, as each of its holds' does.
     */
    void drained(DrainStore.Drain d) {
        io.mesh.wire.DrainRecord r = d.drain();
        write(MeshEvent.of(EventType.HOLD_PLACED, r.since() == null ? Times.now() : r.since(), d.host(), null)
                .withBy(r.by(), io.mesh.wire.DrainRecord.REASON_PREFIX + r.reason() + (r.stops() ? " (--stop)" : "")).withUntil(r.until()));
    }

    /** {@code hold.ended} of a drain: {@code mesh undrain}. */
    void undrained(DrainStore.Undrained u, String by) {
        io.mesh.wire.DrainRecord r = u.drain();
        write(MeshEvent.of(EventType.HOLD_ENDED, Times.now(), u.host(), null).withBy(by, "undrained"
                + (r == null ? "" : " (drained by " + r.by() + ": " + r.reason() + ")")));
    }

    /** {@code freeze.started}: a freeze as written ({@code module} {@code _all} for every module). */
    void freezeStarted(FreezeStore.Freeze f) {
        // A recurring freeze says its rule: its spans' own events follow (FreezeBoundaries)
        String reason = f.cron() == null ? f.reason() : f.reason() + " (recurring: every '" + f.cron() + "'"
                + (f.timezone() == null ? "" : " " + f.timezone()) + " for " + f.lasts() + (f.until() == null ? ", until thawed)" : ", until " + f.until() + ")");
        write(MeshEvent.of(EventType.FREEZE_STARTED, f.since() == null ? Times.now() : f.since(), null,
                f.all() ? FreezeRecord.ALL : f.module()).withBy(f.by(), reason).withUntil(f.until()));
    }

    /**
     * {@code freeze.ended}: a thaw.
     *
     * @param target a module, or {@link FreezeRecord#ALL}
     * @param by     who thawed it
     */
    void thawed(String target, String by) {
        write(MeshEvent.of(EventType.FREEZE_ENDED, Times.now(), null, target).withBy(by, "thawed"));
    }

    private void write(MeshEvent e) {
        try {
            outbox.write(e);
        } catch (Exception ex) {
            LOG.warn("event not written, lost (webhooks will not send it): {}: {}", io.mesh.wire.Json.text(e), ex.toString());
        }
    }
}
