package io.mesh.wire;

import io.mesh.manifest.ContainerSpec;
import io.mesh.manifest.ModuleSpec;
import io.mesh.manifest.RolloutSpec;
import io.mesh.manifest.WireName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The rollout's rules as pure functions (docs/decisions/0013-rollouts.md); its manifest field is {@code RolloutSpecParseTest}. */
class RolloutRecordTest {
    static final Instant T = Instant.parse("2026-12-01T03:30:00Z");
    static final List<String> HOSTS = List.of("h3", "h1", "h2");

    static DesiredRecord desired(RolloutSpec r) {
        ContainerSpec c = ContainerSpec.builder("img:2").build();
        return new DesiredRecord("store", "r2", "push-0000000002", new ModuleSpec("store", List.of("*"), Map.of("app", c), Map.of(), r));
    }

    static RolloutRecord start(RolloutSpec r) {
        DesiredRecord prev = new DesiredRecord("store", "r1", "push-0000000001", desired(r).spec());
        return RolloutRecord.start(desired(r), HOSTS, java.util.Set.copyOf(HOSTS), prev, "token", T);
    }

    @ParameterizedTest(name = "max-parallel {0} of {1} hosts is {2}")
    @CsvSource({"1,3,1", "2,3,2", "25%,3,1", "50%,3,2", "100%,3,3", "34%,100,34", "1%,1000,10"})
    void maxParallelResolvesNumbersAndPercentagesRoundedUp(String given, int hosts, int expected) {
        assertThat(new RolloutSpec(given, null, null).resolveMaxParallel(hosts)).isEqualTo(expected);
    }

    @Test
    void aPushStartsRollingWithTheFirstHostsByNameAsCanaries() {
        RolloutRecord r = start(new RolloutSpec("1", 1, null));
        assertThat(r.state()).isEqualTo(RolloutState.ROLLING);
        assertThat(r.canary()).containsExactly("h1");
        assertThat(r.waiting()).containsExactly("h1", "h2", "h3");
        assertThat(r.maxParallel()).isEqualTo(1);
        assertThat(r.onFailure()).isEqualTo(RolloutSpec.OnFailure.PAUSE);
        assertThat(r.previous().revision()).isEqualTo("r1");
        assertThat(r.of(desired(null))).isTrue();
    }

    @Test
    void canariesAreChosenAmongHostsWithAnAgentFirst() {
        DesiredRecord d = desired(new RolloutSpec(null, 2, null));
        RolloutRecord r = RolloutRecord.start(d, HOSTS, java.util.Set.of("h2", "h3"), null, "token", T);
        assertThat(r.canary()).containsExactly("h2", "h3");
        assertThat(RolloutRecord.start(d, HOSTS, java.util.Set.of("h3"), null, "token", T).canary()).containsExactlyInAnyOrder("h3", "h1");
    }

    /** @return {@code r}'s view with each {@code host=state[:error]} of {@code moves} as its child says */
    static RolloutRecord view(RolloutRecord r, String... moves) {
        Map<String, RolloutHostRecord> children = new java.util.TreeMap<>();
        for (RolloutHostRecord c : r.startChildren()) children.put(c.host(), c);
        for (String m : moves) {
            String[] hs = m.split("[=:]", 3);
            children.put(hs[0], RolloutHostRecord.waiting(hs[0], r.push(), T)
                    .moved(r.push(), WireName.of(RolloutHostState.class, hs[1]), hs.length > 2 ? hs[2] : null, T.plusSeconds(1)));
        }
        return r.view(children.values());
    }

    /** A drained host (decision 37) is passed over: settled, neither done nor failed; a drained canary holds the others. */
    @Test
    void aDrainedHostIsPassedOverAndCountsSettled() {
        RolloutRecord r = start(new RolloutSpec("1", 1, null));
        RolloutRecord v = view(r, "h1=drained");
        assertThat(v.drainedHosts()).containsExactly("h1");
        assertThat(v.waiting()).containsExactly("h2", "h3");
        assertThat(v.canariesDone()).as("the canary h1 is drained: it has not run the push, the others wait").isFalse();
        assertThat(v.state()).isEqualTo(RolloutState.ROLLING);
        RolloutRecord all = view(r, "h1=drained", "h2=done", "h3=done");
        assertThat(all.state()).isEqualTo(RolloutState.DONE);
        assertThat(all.sameProgress(view(r, "h1=done", "h2=done", "h3=done"))).as("drained is progress of its own").isFalse();
        assertThat(Json.read(Json.bytes(all), RolloutRecord.class).drainedHosts()).containsExactly("h1");
        assertThat(new String(Json.bytes(view(r, "h2=done")))).as("absent when none, as old nodes").doesNotContain("drained");
    }

    @Test
    void thePushWritesOneWaitingChildPerHostAndTheViewShowsThemWaiting() {
        RolloutRecord r = start(new RolloutSpec("1", 1, null));
        assertThat(r.startChildren()).extracting(RolloutHostRecord::host).containsExactly("h1", "h2", "h3");
        assertThat(r.startChildren()).allSatisfy(c -> {
            assertThat(c.state()).isEqualTo(RolloutHostState.WAITING);
            assertThat(c.push()).isEqualTo(r.push());
        });
        RolloutRecord v = view(r);
        assertThat(v.state()).isEqualTo(RolloutState.ROLLING);
        assertThat(v.waiting()).containsExactly("h1", "h2", "h3");
        assertThat(v.sameProgress(r)).as("the start is its own fold").isTrue();
        assertThat(r.view(List.of(r.startChildren().get(0))).waiting()).as("a listed host without a child counts as waiting")
                .containsExactly("h1", "h2", "h3");
        RolloutRecord legacy = view(r, "h1=done", "h2=applying"); // as a rollout started before hosts had nodes shows
        assertThat(legacy.view(List.of())).as("a rollout without any host node is left as it is: a fold does not wipe it")
                .isEqualTo(legacy);
    }

    @Test
    void everyHostDoneIsDoneAndTheListsComeFromTheChildrenNotTheParent() {
        RolloutRecord r = start(new RolloutSpec(null, null, null));
        RolloutRecord mid = view(r, "h1=done", "h2=applying");
        assertThat(mid.state()).isEqualTo(RolloutState.ROLLING);
        assertThat(mid.done()).containsExactly("h1");
        assertThat(mid.applying()).containsExactly("h2");
        assertThat(mid.waiting()).containsExactly("h3");
        assertThat(mid.changedAt()).as("the newest child's since").isEqualTo(T.plusSeconds(1));
        RolloutRecord all = view(mid, "h1=done", "h2=done", "h3=done");
        assertThat(all.state()).as("a folded parent's lists are not read: the children are").isEqualTo(RolloutState.DONE);
        assertThat(all.done()).containsExactly("h1", "h2", "h3");
        assertThat(all.applying()).isEmpty();
        assertThat(view(r, "h1=done", "h2=done").state()).isEqualTo(RolloutState.ROLLING);
    }

    @Test
    void aChildOfAnotherPushCountsAsWaiting() {
        RolloutRecord r = start(new RolloutSpec(null, null, null));
        RolloutHostRecord stale = new RolloutHostRecord("h1", "push-0000000001", RolloutHostState.FAILED, T, "old");
        RolloutRecord v = r.view(List.of(stale));
        assertThat(v.failed()).isEmpty();
        assertThat(v.waiting()).contains("h1");
        assertThat(v.state()).isEqualTo(RolloutState.ROLLING);
    }

    @Test
    void aFailurePausesThenResumeRecordsWhatItResumedPast() {
        RolloutRecord r = start(new RolloutSpec("1", 1, RolloutSpec.OnFailure.PAUSE));
        RolloutRecord paused = view(r, "h1=failed:not ready");
        assertThat(paused.state()).isEqualTo(RolloutState.PAUSED);
        assertThat(paused.note()).isEqualTo("h1 failed: not ready");
        assertThat(paused.canariesDone()).isFalse();
        assertThatThrownBy(() -> view(r).resume("op", T)).isInstanceOf(IllegalStateException.class).hasMessageContaining("not paused");

        RolloutRecord resumed = paused.resume("op", T); // what the coordinator writes in the parent
        assertThat(resumed.resumedPast()).containsExactly("h1");
        assertThat(resumed.resumedAt()).isEqualTo(T);
        assertThat(resumed.by()).as("who pushed stays").isEqualTo("token");
        RolloutRecord going = view(resumed, "h1=failed:not ready");
        assertThat(going.state()).as("h1's failure no longer pauses").isEqualTo(RolloutState.ROLLING);
        assertThat(going.note()).startsWith("resumed by op");
        assertThat(going.canariesDone()).as("the failed canary is settled").isTrue();
        assertThat(view(resumed, "h1=failed:x", "h2=failed:disk full").state()).as("a new failure pauses again")
                .isEqualTo(RolloutState.PAUSED);
        assertThat(view(resumed, "h1=failed:x", "h2=failed:disk full").note()).isEqualTo("h2 failed: disk full");
        assertThat(view(resumed, "h1=failed:x", "h2=done", "h3=done").state()).as("a host failed before the resume counts as settled")
                .isEqualTo(RolloutState.DONE);
    }

    @Test
    void revertAndContinue() {
        RolloutRecord rev = start(new RolloutSpec(null, null, RolloutSpec.OnFailure.REVERT));
        assertThat(view(rev, "h1=done", "h2=failed:x").state()).isEqualTo(RolloutState.REVERTED);
        assertThat(view(rev, "h1=done", "h2=failed:x").note()).isEqualTo("h2 failed: x");
        RolloutRecord c = start(new RolloutSpec(null, null, RolloutSpec.OnFailure.CONTINUE));
        assertThat(view(c, "h1=failed:x").state()).isEqualTo(RolloutState.ROLLING);
        assertThat(view(c, "h1=failed:x", "h2=done", "h3=done").state()).isEqualTo(RolloutState.DONE);
    }

    /** {@code max-failed} (SPEC.md "The rest of the operator's stack"): failures beyond it, not the first, apply on-failure. */
    @Test
    void failuresWithinMaxFailedAreSettledAndTheOneBeyondAppliesOnFailure() {
        RolloutRecord pause = start(new RolloutSpec(null, 1, RolloutSpec.OnFailure.PAUSE, null, "1"));
        assertThat(pause.maxFailed()).isEqualTo(1);
        RolloutRecord one = view(pause, "h1=failed:x");
        assertThat(one.state()).as("one failure of max-failed 1").isEqualTo(RolloutState.ROLLING);
        assertThat(one.canariesDone()).as("the failed canary counts as settled within the budget").isTrue();
        assertThat(view(pause, "h1=failed:x", "h2=failed:y").state()).isEqualTo(RolloutState.PAUSED);
        assertThat(view(pause, "h1=failed:x", "h2=failed:y").note()).isEqualTo("h1 failed: x");
        assertThat(view(pause, "h1=failed:x", "h2=done", "h3=done").state()).isEqualTo(RolloutState.DONE);
        RolloutRecord revert = start(new RolloutSpec(null, null, RolloutSpec.OnFailure.REVERT, null, "34%"));
        assertThat(revert.maxFailed()).as("34% of 3 hosts, rounded down").isEqualTo(1);
        assertThat(view(revert, "h2=failed:x").state()).isEqualTo(RolloutState.ROLLING);
        assertThat(view(revert, "h2=failed:x", "h3=failed:y").state()).isEqualTo(RolloutState.REVERTED);
        assertThat(start(new RolloutSpec(null, null, null, null, "0")).maxFailed()).as("0 is the default, written as none").isNull();
    }

    /** {@code promote: manual}: the others wait for the operator once the canaries are ready; one promote, while rolling. */
    @Test
    void aManualRolloutWaitsForItsPromoteOnceTheCanariesAreReady() {
        RolloutRecord r = start(new RolloutSpec(null, 1, null, RolloutSpec.Promote.MANUAL, null));
        assertThat(r.awaitsPromotion()).isTrue();
        assertThat(view(r).note()).as("canaries not ready yet").isNull();
        RolloutRecord ready = view(r, "h1=done");
        assertThat(ready.state()).isEqualTo(RolloutState.ROLLING);
        assertThat(ready.note()).isEqualTo(RolloutRecord.PROMOTE_NOTE);
        RolloutRecord promoted = ready.promote("op", T);
        assertThat(promoted.awaitsPromotion()).isFalse();
        assertThat(promoted.promotedAt()).isEqualTo(T);
        assertThat(promoted.note()).isEqualTo("promoted by op");
        assertThat(promoted.sameProgress(ready)).as("a promote wakes the waiting hosts").isFalse();
        assertThat(view(promoted, "h1=done").note()).isEqualTo("promoted by op");
        assertThatThrownBy(() -> promoted.promote("op", T)).isInstanceOf(IllegalStateException.class).hasMessageContaining("promoted already");
        assertThatThrownBy(() -> start(new RolloutSpec(null, 1, null)).promote("op", T)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("not promote: manual");
        assertThatThrownBy(() -> view(r, "h1=failed:x").promote("op", T)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("paused");
        assertThat(start(new RolloutSpec(null, 1, null, RolloutSpec.Promote.AUTO, null)).promote()).as("auto is written as none").isNull();
        RolloutRecord none = start(new RolloutSpec(null, null, null, RolloutSpec.Promote.MANUAL, null));
        assertThat(view(none).note()).as("no canary: nothing is ready, the rollout waits to begin").isEqualTo(RolloutRecord.PROMOTE_NOTE_NO_CANARY);
    }

    /** {@code soak}: the view derives when the host last done became done; the soak ends that long after. */
    @Test
    void theSoakEndsTheSoakAfterTheHostLastDone() {
        RolloutRecord r = start(new RolloutSpec(null, 1, null, null, null, "5m"));
        assertThat(r.soak()).isEqualTo("5m");
        assertThat(view(r).soakUntil()).as("none done yet").isNull();
        RolloutRecord one = view(r, "h1=done");
        assertThat(one.doneAt()).isEqualTo(T.plusSeconds(1));
        assertThat(one.soakUntil()).isEqualTo(T.plusSeconds(1).plus(java.time.Duration.ofMinutes(5)));
        assertThat(start(new RolloutSpec(null, 1, null)).soakUntil()).isNull();
    }

    @Test
    void abortEndsItWhateverTheChildrenSayAndCannotAbortTwice() {
        RolloutRecord r = view(start(new RolloutSpec(null, null, null)), "h1=done").abort("op", T);
        assertThat(r.state()).isEqualTo(RolloutState.ABORTED);
        assertThat(r.note()).isEqualTo("aborted by op");
        RolloutRecord after = view(r, "h1=done", "h2=done", "h3=done");
        assertThat(after.state()).as("an abort is the parent's, not derived").isEqualTo(RolloutState.ABORTED);
        assertThat(after.done()).containsExactly("h1", "h2", "h3");
        assertThatThrownBy(() -> after.abort("op", T)).isInstanceOf(IllegalStateException.class).hasMessageContaining("ended");
    }

    @Test
    void theViewIsAFunctionOfItsInputsSoCoordinatorsFoldingAtOnceAgree() {
        RolloutRecord r = start(new RolloutSpec("1", 1, null));
        RolloutRecord a = view(r, "h2=applying", "h1=done");
        RolloutRecord b = view(r, "h1=done", "h2=applying");
        assertThat(a).isEqualTo(b);
        assertThat(view(a, "h1=done", "h2=applying")).as("folding a fold changes nothing").isEqualTo(a);
    }

    @Test
    void theRecordIsOneLineOfJsonWithSpecsFieldsFirst() {
        RolloutRecord r = start(new RolloutSpec("25%", 1, null));
        String json = new String(Json.bytes(r.withoutPrevious()));
        assertThat(json).doesNotContain("\n").startsWith("{\"module\":\"store\",\"push\":\"push-0000000002\",\"revision\":\"r2\",\"state\":\"rolling\",\"canary\":[\"h1\"],\"done\":[],\"applying\":[],\"waiting\":[\"h1\",\"h2\",\"h3\"],\"failed\":[],\"since\":");
        assertThat(Json.read(Json.bytes(r), RolloutRecord.class)).isEqualTo(r);
    }
}
