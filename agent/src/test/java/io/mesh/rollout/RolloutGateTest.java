package io.mesh.rollout;

import io.mesh.rollout.RolloutGate.Decision;
import io.mesh.wire.ContainerSpec;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.ModuleSpec;
import io.mesh.wire.RolloutRecord;
import io.mesh.wire.RolloutSpec;
import io.mesh.wire.RolloutState;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Who may apply a rollout's push, and who keeps the previous revision ({@link RolloutGate#decide}). */
class RolloutGateTest {
    static final Instant T = Instant.parse("2026-12-01T03:30:00Z");

    static RolloutRecord start(RolloutSpec r) {
        ContainerSpec c = ContainerSpec.builder("img:2").build();
        DesiredRecord d = new DesiredRecord("store", "r2", "push-0000000002", new ModuleSpec("store", List.of("*"), Map.of("app", c), Map.of(), r));
        return RolloutRecord.start(d, List.of("h1", "h2", "h3"), java.util.Set.of("h1", "h2", "h3"), null, "token", T);
    }

    static Decision decide(RolloutRecord r, String host) { return RolloutGate.decide(r, host).decision(); }

    @Test
    void canariesGoFirstTheRestWaitUntilEveryCanaryIsDone() {
        RolloutRecord r = start(new RolloutSpec("1", 2, null));
        assertThat(decide(r, "h1")).isEqualTo(Decision.APPLY_IN_WAVE);
        assertThat(decide(r, "h2")).isEqualTo(Decision.APPLY_IN_WAVE);
        assertThat(RolloutGate.decide(r, "h3").why()).contains("waiting for the canaries [h1, h2]");
        r = r.applying("h1", T).done("h1", T);
        assertThat(decide(r, "h1")).as("done: keeps the push, no slot").isEqualTo(Decision.APPLY);
        assertThat(decide(r, "h3")).isEqualTo(Decision.WAIT);
        r = r.applying("h2", T).done("h2", T);
        assertThat(decide(r, "h3")).isEqualTo(Decision.APPLY_IN_WAVE);
    }

    @Test
    void aPausedRolloutKeepsHostsThatHaveNotStartedWaitingAndTheFailedOneOnThePrevious() {
        RolloutRecord r = start(new RolloutSpec("1", 1, null)).applying("h1", T).failed("h1", "not ready", T);
        assertThat(decide(r, "h1")).isEqualTo(Decision.KEEP_PREVIOUS);
        assertThat(decide(r, "h2")).isEqualTo(Decision.WAIT);
        assertThat(RolloutGate.decide(r, "h2").why()).contains("paused", "mesh rollout resume store");
    }

    @Test
    void revertedSendsEveryHostBackAbortedKeepsTheDoneOnes() {
        RolloutRecord r = start(new RolloutSpec(null, null, RolloutSpec.OnFailure.REVERT)).applying("h1", T).done("h1", T)
                .applying("h2", T).failed("h2", "x", T);
        for (String h : List.of("h1", "h2", "h3")) assertThat(decide(r, h)).as(h).isEqualTo(Decision.KEEP_PREVIOUS);
        RolloutRecord a = start(new RolloutSpec(null, null, null)).applying("h1", T).done("h1", T).abort("op", T);
        assertThat(decide(a, "h1")).isEqualTo(Decision.APPLY);
        assertThat(decide(a, "h2")).isEqualTo(Decision.KEEP_PREVIOUS);
    }

    @Test
    void aFailedCanaryLetsTheOthersGoUnderContinueAndAfterAResume() {
        RolloutRecord c = start(new RolloutSpec("1", 1, RolloutSpec.OnFailure.CONTINUE)).applying("h1", T).failed("h1", "x", T);
        assertThat(decide(c, "h2")).isEqualTo(Decision.APPLY_IN_WAVE);
        RolloutRecord p = start(new RolloutSpec("1", 1, null)).applying("h1", T).failed("h1", "x", T);
        assertThat(decide(p, "h2")).isEqualTo(Decision.WAIT);
        assertThat(decide(p.resume("op", T), "h2")).isEqualTo(Decision.APPLY_IN_WAVE);
        assertThat(decide(p.resume("op", T), "h1")).as("the failed canary is not retried").isEqualTo(Decision.KEEP_PREVIOUS);
    }

    @Test
    void aHostThatFailedKeepsThePreviousRevisionAlsoOnceTheRolloutIsDone() {
        RolloutRecord r = start(new RolloutSpec("1", null, RolloutSpec.OnFailure.CONTINUE)).applying("h1", T).failed("h1", "x", T);
        r = r.applying("h2", T).done("h2", T).applying("h3", T).done("h3", T);
        assertThat(r.state()).isEqualTo(RolloutState.DONE);
        assertThat(decide(r, "h1")).isEqualTo(Decision.KEEP_PREVIOUS);
        assertThat(decide(r, "h2")).isEqualTo(Decision.APPLY);
    }

    @Test
    void aHostCountedApplyingKeepsItsPlaceAlsoWhenItsLeaseWentWithItsSession() {
        RolloutRecord r = start(new RolloutSpec("1", null, null)).applying("h1", T); // h1's agent killed mid-recreate
        assertThat(decide(r, "h2")).isEqualTo(Decision.APPLY_IN_WAVE);
        assertThat(RolloutGate.full(r, "h2")).as("h1 still counts: h2 waits").isTrue();
        assertThat(RolloutGate.full(r, "h1")).as("h1 itself, back, takes its place again").isFalse();
        assertThat(RolloutGate.full(r.done("h1", T), "h2")).isFalse();
        assertThat(RolloutGate.full(start(new RolloutSpec(null, null, null)).applying("h1", T), "h2")).as("no max-parallel").isFalse();
    }

    @Test
    void aDoneRolloutAdmitsEveryHostAlsoOneThatJoinedLater() {
        RolloutRecord r = start(new RolloutSpec(null, null, null));
        for (String h : List.of("h1", "h2", "h3")) r = r.applying(h, T).done(h, T);
        assertThat(decide(r, "h9")).isEqualTo(Decision.APPLY);
    }
}
