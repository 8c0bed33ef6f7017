package io.mesh.apply;

import io.mesh.rollout.RolloutGate;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.FreezeRecord;

/**
 * What an apply holding the module lock may do: the one question it asks its gates, in order. A freeze first (repairs
 * only; a frozen module takes no rollout slot and is not counted in a wave: SPEC.md "Freezes", decision 14), then the
 * push's rollout (the push, the previous revision it keeps here, or repairs only while it keeps this host waiting:
 * decision 13). Closing it gives back a rollout slot it holds.
 */
final class ApplyAdmission implements AutoCloseable {
    /** What the apply does. */
    enum Verdict {
        /** No desired state: nothing runs (a deleted module's leftovers are handled by its plan elsewhere). */
        NONE,
        /** The desired node read is behind the rollout node: nothing now; the newer node's event asks again. */
        STALE,
        /** Frozen: repairs only, reported {@code deferred} with the freeze. */
        FROZEN,
        /** The rollout keeps this host as it is, with nothing to apply: repairs only. */
        WAITING,
        /** A desired state runs: the push, or the previous revision its rollout keeps here. */
        APPLY
    }

    private final Verdict verdict;
    private final FreezeRecord freeze;
    private final RolloutGate.Admission rollout;

    private ApplyAdmission(Verdict verdict, FreezeRecord freeze, RolloutGate.Admission rollout) {
        this.verdict = verdict;
        this.freeze = freeze;
        this.rollout = rollout;
    }

    /**
     * Asks the gates, holding the module lock and before the fence.
     *
     * @param newest   the newest desired state, read under the lock, or {@code null}
     * @param read     what was read under the lock (the freezes among it)
     * @param rollouts the rollout gate, which may take a slot
     * @return the verdict; the caller closes it
     * @throws Exception from ZooKeeper
     */
    static ApplyAdmission admit(DesiredRecord newest, LockedRead read, RolloutGate rollouts) throws Exception {
        if (newest == null) return new ApplyAdmission(Verdict.NONE, null, null);
        FreezeRecord f = read.frozen().orElse(null);
        if (f != null) return new ApplyAdmission(Verdict.FROZEN, f, null);
        RolloutGate.Admission a = rollouts.admit(newest, read.drain() != null);
        if (a.stale()) return new ApplyAdmission(Verdict.STALE, null, a);
        return new ApplyAdmission(a.toApply() == null ? Verdict.WAITING : Verdict.APPLY, null, a);
    }

    /** @return what the apply does */
    Verdict verdict() { return verdict; }

    /** @return for {@link Verdict#APPLY}: the desired state to run; else {@code null} */
    DesiredRecord toApply() { return verdict == Verdict.APPLY ? rollout.toApply() : null; }

    /** @return for {@link Verdict#FROZEN}: the freeze in force; else {@code null} */
    FreezeRecord freeze() { return freeze; }

    /** @return for {@link Verdict#FROZEN} and {@link Verdict#WAITING}: why only repairs, for the reasons; else {@code null} */
    String repairsOnly() {
        return switch (verdict) {
            case FROZEN -> "module frozen";
            case WAITING -> "its rollout keeps this host waiting";
            default -> null;
        };
    }

    /** @return true when the rollout keeps this host on its previous revision, or as it is ({@link #keptAs}) */
    boolean keepsPrevious() { return rollout != null && rollout.keepsPrevious(); }

    /**
     * @param report the apply's report, which ran what {@link #toApply} gave
     * @return the report as the rollout reads it: a host kept on its previous revision reads the rollout's outcome
     *         and why, and what runs here now is the kept revision, so the push it left does not read applied
     */
    ApplyReport keptAs(ApplyReport report) {
        if (!keepsPrevious() || report.outcome() == ApplyOutcome.DEFERRED) return report;
        boolean ran = report.outcome() == ApplyOutcome.APPLIED;
        ApplyReport r = report.withRollout(report.outcome() == ApplyOutcome.FAILED ? ApplyOutcome.FAILED : rollout.outcome(), rollout.why());
        DesiredRecord kept = rollout.toApply();
        return ran && kept != null && kept.push() != null ? r.withKept(kept) : r;
    }

    /**
     * The apply ended (after its readiness wait): gives a slot back and moves this host's rollout node. A failure of
     * the engine alone (Docker never answered, or answered shutting down: dockerd restarted under a call) is not this host's failure of the
     * rollout, which would pause or revert it for every host: the host waits in its wave again, and the failed
     * apply's retry tries once more (failure model row 110).
     *
     * @param report            the report written
     * @param engineFailedAlone true when the report's failures were all the engine's
     * @throws Exception from ZooKeeper
     */
    void finished(ApplyReport report, boolean engineFailedAlone) throws Exception {
        if (rollout == null) return;
        if (report.outcome() == ApplyOutcome.FAILED && engineFailedAlone) rollout.abandon();
        else rollout.finished(report.outcome(), report.error());
    }

    /**
     * The apply stops short of Docker to wait for something else (another process's window): gives a slot back and
     * counts this host waiting again.
     *
     * @throws Exception from ZooKeeper
     */
    void abandon() throws Exception {
        if (rollout != null) rollout.abandon();
    }

    /** Gives a slot back, if held. Never throws. */
    @Override
    public void close() {
        if (rollout != null) rollout.close();
    }
}
