package io.mesh.rollout;

import io.mesh.manifest.ContainerSpec;
import io.mesh.manifest.ModuleSpec;
import io.mesh.manifest.RolloutSpec;
import io.mesh.manifest.WireName;
import io.mesh.rollout.RolloutGate.Decision;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.RolloutHostRecord;
import io.mesh.wire.RolloutHostState;
import io.mesh.wire.RolloutRecord;
import io.mesh.wire.RolloutState;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Who may apply a rollout's push, and who keeps the previous revision ({@link RolloutGate#decide}), on the rollout as
 * derived from its hosts' nodes ({@link RolloutRecord#view}).
 */
class RolloutGateTest {
    static final Instant T = Instant.parse("2026-12-01T03:30:00Z");

    static RolloutRecord start(RolloutSpec r) {
        ContainerSpec c = ContainerSpec.builder("img:2").build();
        DesiredRecord d = new DesiredRecord("store", "r2", "push-0000000002", new ModuleSpec("store", List.of("*"), Map.of("app", c), Map.of(), r));
        return RolloutRecord.start(d, List.of("h1", "h2", "h3"), java.util.Set.of("h1", "h2", "h3"), null, "token", T);
    }

    /** @return {@code r} as its hosts' nodes say, each {@code host=state[:error]} of {@code moves} moved */
    static RolloutRecord view(RolloutRecord r, String... moves) {
        Map<String, RolloutHostRecord> children = new TreeMap<>();
        for (RolloutHostRecord c : r.startChildren()) children.put(c.host(), c);
        for (String m : moves) {
            String[] hs = m.split("[=:]", 3);
            children.put(hs[0], RolloutHostRecord.waiting(hs[0], r.push(), T)
                    .moved(r.push(), WireName.of(RolloutHostState.class, hs[1]), hs.length > 2 ? hs[2] : "x", T));
        }
        return r.view(children.values());
    }

    static Decision decide(RolloutRecord r, String host) { return RolloutGate.decide(r, host).decision(); }

    @Test
    void canariesGoFirstTheRestWaitUntilEveryCanaryIsDone() {
        RolloutRecord s = start(new RolloutSpec("1", 2, null));
        RolloutRecord r = view(s);
        assertThat(decide(r, "h1")).isEqualTo(Decision.APPLY_IN_WAVE);
        assertThat(decide(r, "h2")).isEqualTo(Decision.APPLY_IN_WAVE);
        assertThat(RolloutGate.decide(r, "h3").why()).contains("waiting for the canaries [h1, h2]");
        r = view(s, "h1=done");
        assertThat(decide(r, "h1")).as("done: keeps the push, no slot").isEqualTo(Decision.APPLY);
        assertThat(decide(r, "h3")).isEqualTo(Decision.WAIT);
        r = view(s, "h1=done", "h2=done");
        assertThat(decide(r, "h3")).isEqualTo(Decision.APPLY_IN_WAVE);
    }

    @Test
    void aPausedRolloutKeepsHostsThatHaveNotStartedWaitingAndTheFailedOneOnThePrevious() {
        RolloutRecord r = view(start(new RolloutSpec("1", 1, null)), "h1=failed:not ready");
        assertThat(decide(r, "h1")).isEqualTo(Decision.KEEP_PREVIOUS);
        assertThat(decide(r, "h2")).isEqualTo(Decision.WAIT);
        assertThat(RolloutGate.decide(r, "h2").why()).contains("paused", "h1 failed: not ready", "mesh rollout resume store");
    }

    @Test
    void revertedSendsEveryHostBackAbortedKeepsTheDoneOnes() {
        RolloutRecord r = view(start(new RolloutSpec(null, null, RolloutSpec.OnFailure.REVERT)), "h1=done", "h2=failed");
        for (String h : List.of("h1", "h2", "h3")) assertThat(decide(r, h)).as(h).isEqualTo(Decision.KEEP_PREVIOUS);
        RolloutRecord a = view(view(start(new RolloutSpec(null, null, null)), "h1=done").abort("op", T), "h1=done");
        assertThat(decide(a, "h1")).isEqualTo(Decision.APPLY);
        assertThat(decide(a, "h2")).isEqualTo(Decision.KEEP_PREVIOUS);
    }

    @Test
    void aFailedCanaryLetsTheOthersGoUnderContinueAndAfterAResume() {
        RolloutRecord c = view(start(new RolloutSpec("1", 1, RolloutSpec.OnFailure.CONTINUE)), "h1=failed");
        assertThat(decide(c, "h2")).isEqualTo(Decision.APPLY_IN_WAVE);
        RolloutRecord p = view(start(new RolloutSpec("1", 1, null)), "h1=failed");
        assertThat(decide(p, "h2")).isEqualTo(Decision.WAIT);
        RolloutRecord resumed = view(p.resume("op", T), "h1=failed");
        assertThat(decide(resumed, "h2")).isEqualTo(Decision.APPLY_IN_WAVE);
        assertThat(decide(resumed, "h1")).as("the failed canary is not retried").isEqualTo(Decision.KEEP_PREVIOUS);
    }

    @Test
    void aHostThatFailedKeepsThePreviousRevisionAlsoOnceTheRolloutIsDone() {
        RolloutRecord r = view(start(new RolloutSpec("1", null, RolloutSpec.OnFailure.CONTINUE)), "h1=failed", "h2=done", "h3=done");
        assertThat(r.state()).isEqualTo(RolloutState.DONE);
        assertThat(decide(r, "h1")).isEqualTo(Decision.KEEP_PREVIOUS);
        assertThat(decide(r, "h2")).isEqualTo(Decision.APPLY);
    }

    @Test
    void aHostCountedApplyingKeepsItsPlaceAlsoWhenItsLeaseWentWithItsSession() {
        RolloutRecord s = start(new RolloutSpec("1", null, null));
        RolloutRecord r = view(s, "h1=applying"); // h1's agent killed mid-recreate
        assertThat(decide(r, "h2")).isEqualTo(Decision.APPLY_IN_WAVE);
        assertThat(RolloutGate.full(r, "h2")).as("h1 still counts: h2 waits").isTrue();
        assertThat(RolloutGate.full(r, "h1")).as("h1 itself, back, takes its place again").isFalse();
        assertThat(RolloutGate.full(view(s, "h1=done"), "h2")).isFalse();
        assertThat(RolloutGate.full(view(start(new RolloutSpec(null, null, null)), "h1=applying"), "h2")).as("no max-parallel").isFalse();
    }

    @Test
    void aFreedPlaceIsTriedFirstByTheWaitingHostsThatFitItTheOthersLookLater() {
        RolloutRecord s = start(new RolloutSpec("1", 1, null));
        RolloutRecord r = view(s, "h1=done");
        assertThat(RolloutGate.turnDelayMs(r, "h2")).as("first waiting host, one place free").isZero();
        assertThat(RolloutGate.turnDelayMs(r, "h3")).as("second: it tries if the place is still free then").isEqualTo(RolloutGate.TURN_STEP_MS);
        RolloutRecord goesOn = start(new RolloutSpec("1", 1, RolloutSpec.OnFailure.CONTINUE));
        assertThat(RolloutGate.turnDelayMs(view(goesOn, "h1=done", "h2=failed"), "h3")).as("h2 failed, the rollout goes on: h3 is first").isZero();
        assertThat(RolloutGate.turnDelayMs(view(goesOn, "h1=done"), "h3")).isEqualTo(RolloutGate.TURN_STEP_MS);
        assertThat(RolloutGate.turnDelayMs(view(s), "h3")).as("waiting for the canary: no place to try").isZero();
        assertThat(RolloutGate.turnDelayMs(view(start(new RolloutSpec(null, 1, null)), "h1=done"), "h3")).as("no max-parallel").isZero();
    }

    @Test
    void aCanarysTurnCountsOnlyTheCanariesBeforeIt() {
        ContainerSpec app = ContainerSpec.builder("img:2").build();
        DesiredRecord d = new DesiredRecord("store", "r2", "push-0000000002", new ModuleSpec("store", List.of("*"), Map.of("app", app),
                Map.of(), new RolloutSpec("1", 2, null)));
        // h1 and h2 had no agent at the push: the canaries are h3 and h4; one place.
        RolloutRecord s = RolloutRecord.start(d, List.of("h1", "h2", "h3", "h4", "h5"), java.util.Set.of("h3", "h4", "h5"), null, "t", T);
        assertThat(s.canary()).containsExactly("h3", "h4");
        RolloutRecord r = view(s, "h3=done");
        assertThat(decide(r, "h1")).isEqualTo(Decision.WAIT);
        assertThat(RolloutGate.turnDelayMs(r, "h4")).as("the only host that may act, behind h1 and h2, which may not").isZero();
    }

    @Test
    void aHostThatJoinedAfterThePushWaitsUntilTheRolloutIsDone() {
        RolloutRecord s = start(new RolloutSpec(null, null, null));
        assertThat(decide(view(s, "h1=done"), "h9")).isEqualTo(Decision.WAIT);
        assertThat(RolloutGate.decide(view(s), "h9").why()).contains("not among the hosts", "once the rollout is done");
        assertThat(decide(view(s, "h1=done", "h2=done", "h3=done"), "h9")).isEqualTo(Decision.APPLY);
    }

    /** {@code promote: manual} (SPEC.md "The rest of the operator's stack"): the canaries go, the others wait for the operator. */
    @Test
    void aManualRolloutsOtherHostsWaitForThePromoteTheCanariesDoNot() {
        RolloutRecord s = start(new RolloutSpec(null, 1, null, RolloutSpec.Promote.MANUAL, null));
        assertThat(decide(view(s), "h1")).as("the canary").isEqualTo(Decision.APPLY_IN_WAVE);
        RolloutRecord ready = view(s, "h1=done");
        assertThat(decide(ready, "h2")).isEqualTo(Decision.WAIT);
        assertThat(RolloutGate.decide(ready, "h2").why()).contains("the canaries [h1] are ready", "mesh rollout promote store");
        assertThat(RolloutWakes.mayAct(ready, "h2")).as("nothing to wake for until the promote").isFalse();
        RolloutRecord promoted = view(ready.promote("op", T), "h1=done");
        assertThat(decide(promoted, "h2")).isEqualTo(Decision.APPLY_IN_WAVE);
        assertThat(RolloutWakes.mayAct(promoted, "h2")).isTrue();
        RolloutRecord none = start(new RolloutSpec(null, null, null, RolloutSpec.Promote.MANUAL, null));
        assertThat(RolloutGate.decide(view(none), "h1").why()).as("no canaries: every host waits").contains("waits for an operator");
    }

    /** {@code max-failed}: a failed canary within it lets the others go, as {@code continue} does. */
    @Test
    void aFailedCanaryWithinMaxFailedLetsTheOthersGo() {
        RolloutRecord s = start(new RolloutSpec(null, 1, RolloutSpec.OnFailure.PAUSE, null, "1"));
        RolloutRecord r = view(s, "h1=failed:not ready");
        assertThat(decide(r, "h1")).isEqualTo(Decision.KEEP_PREVIOUS);
        assertThat(decide(r, "h2")).isEqualTo(Decision.APPLY_IN_WAVE);
        assertThat(decide(view(s, "h1=failed:x", "h2=failed:y"), "h3")).as("the second failure pauses").isEqualTo(Decision.WAIT);
    }

    /** {@code soak}: the hosts that have not begun wait until the hosts last done have been ready that long. */
    @Test
    void theNextHostsBeginOnlyOnceTheHostsLastDoneHaveSoaked() {
        RolloutRecord s = start(new RolloutSpec(null, 1, null, null, null, "10m"));
        RolloutRecord r = view(s, "h1=done"); // done at T
        RolloutGate.Verdict soaking = RolloutGate.decide(r, "h2", T.plusSeconds(60));
        assertThat(soaking.decision()).isEqualTo(Decision.WAIT);
        assertThat(soaking.why()).contains("stay ready until " + T.plusSeconds(600), "soak 10m");
        assertThat(RolloutGate.decide(r, "h2", T.plusSeconds(600)).decision()).isEqualTo(Decision.APPLY_IN_WAVE);
        RolloutRecord applying = view(s, "h1=done", "h2=applying");
        assertThat(RolloutGate.decide(applying, "h2", T.plusSeconds(60)).decision()).as("a host already applying goes on")
                .isEqualTo(Decision.APPLY_IN_WAVE);
        assertThat(RolloutGate.decide(view(s), "h1", T).decision()).as("the canary does not wait").isEqualTo(Decision.APPLY_IN_WAVE);
    }
}
