package io.mesh.coordinator;

import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.PushRecord;
import io.mesh.wire.PushState;
import io.mesh.wire.RolloutRecord;
import io.mesh.wire.RolloutState;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A host a rollout passed over as drained (decision 37), or whose containers the drain holds so that its apply was
 * deferred, is counted {@code drained} in the push's status, settled.
 */
class PushStatusDrainedTest {
    private static final Instant T = Instant.parse("2026-12-07T03:30:00Z");
    private static final String PUSH = "push-0000000002";

    @Test
    void aDrainedHostIsCountedAsSuchAndSettlesThePush() {
        PushRecord push = new PushRecord(PUSH, "r2", List.of("m"), T);
        RolloutRecord rollout = new RolloutRecord("m", PUSH, "r2", RolloutState.DONE, List.of("a"), List.of("a"), List.of(), List.of(), List.of(),
                T, List.of("a", "b"), null, null, null, "by", null, null, null, T, null, null, null, null, null, List.of("b"));
        ApplyReport a = ApplyReport.applied("a", "m", "r2", PUSH, T, null, List.of());
        ApplyReport b = ApplyReport.deferred("b", "m", "r1", PUSH, T, null, List.of())
                .withRollout(ApplyOutcome.DEFERRED, "this host is drained: the rollout passes over it");
        PushStatus.View v = PushStatus.derive(push, Map.of("m", List.of("a", "b")), Set.of("a", "b"), Set.of("a", "b"),
                Map.of("a", Map.of("m", a), "b", Map.of("m", b)), Map.of("m", rollout));
        assertThat(v.counts()).containsEntry("drained", 1).containsEntry("applied", 1).containsEntry("waiting", 0);
        assertThat(v.targets()).filteredOn(t -> t.host().equals("b")).extracting(PushStatus.Target::state).containsExactly(PushState.DRAINED);
        assertThat(v.done()).as("settled: the rollout passed over it").isTrue();
        assertThat(v.state()).isEqualTo(PushState.DRAINED);
    }

    @Test
    void aPushDeferredOnADrainedHostByTheDrainsHoldsIsDrainedAndOneDeferredByAWindowIsNot() {
        PushRecord push = new PushRecord(PUSH, "r2", List.of("m"), T);
        ApplyReport a = ApplyReport.applied("a", "m", "r2", PUSH, T, null, List.of());
        ApplyReport b = ApplyReport.deferred("b", "m", "r2", PUSH, T, null,
                List.of(ApplyReport.ContainerResult.held("app", "m-app", "held by operator ops: drain: rack move", "id1")));
        Map<String, Map<String, ApplyReport>> reports = Map.of("a", Map.of("m", a), "b", Map.of("m", b));
        PushStatus.View v = PushStatus.derive(push, Map.of("m", List.of("a", "b")), Set.of("a", "b"), Set.of("a", "b"), reports, Map.of(),
                Map.of(), null, null, null, Map.of("b", Set.of("m-app")));
        assertThat(v.counts()).containsEntry("drained", 1).containsEntry("deferred", 0);
        assertThat(v.done()).as("settled: it lands at the undrain").isTrue();
        assertThat(v.state()).isEqualTo(PushState.DRAINED);
        assertThat(PushStatus.derive(push, Map.of("m", List.of("a", "b")), Set.of("a", "b"), Set.of("a", "b"), reports, Map.of(),
                Map.of(), null, null, null, Map.of()).state()).as("not drained: deferred").isEqualTo(PushState.DEFERRED);
        assertThat(PushStatus.derive(push, Map.of("m", List.of("a", "b")), Set.of("a", "b"), Set.of("a", "b"), reports, Map.of(),
                Map.of(), null, null, null, Map.of("b", Set.of("m-other"))).state())
                .as("drained, but m-app is held by another hold (an operator's own, which outlives the undrain)").isEqualTo(PushState.DEFERRED);

        ApplyReport byWindow = ApplyReport.deferred("b", "m", "r2", PUSH, T,
                new ApplyReport.WindowRef("gc", "w-1", T, List.of("m-app")), List.of());
        assertThat(PushStatus.derive(push, Map.of("m", List.of("a", "b")), Set.of("a", "b"), Set.of("a", "b"),
                Map.of("a", Map.of("m", a), "b", Map.of("m", byWindow)), Map.of(), Map.of(), null, null, null, Map.of("b", Set.of("m-app"))).state())
                .as("a window's deferral lands at the window's end, drained or not").isEqualTo(PushState.DEFERRED);
    }
}
