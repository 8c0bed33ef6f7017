package io.mesh.wire;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The rollout's rules as pure functions (docs/decisions/0013-rollouts.md), and its manifest field. */
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

    @Test
    void everyHostDoneIsDone() {
        RolloutRecord r = start(new RolloutSpec(null, null, null));
        for (String h : HOSTS) r = r.applying(h, T).done(h, T);
        assertThat(r.state()).isEqualTo(RolloutState.DONE);
        assertThat(r.done()).containsExactly("h1", "h2", "h3");
        assertThat(r.applying()).isEmpty();
    }

    @Test
    void aFailurePausesThenResumeSettlesTheFailedHost() {
        RolloutRecord r = start(new RolloutSpec("1", 1, RolloutSpec.OnFailure.PAUSE)).applying("h1", T).failed("h1", "not ready", T);
        assertThat(r.state()).isEqualTo(RolloutState.PAUSED);
        assertThat(r.note()).contains("h1 failed: not ready");
        assertThatThrownBy(() -> start(new RolloutSpec(null, null, null)).resume("op", T)).isInstanceOf(IllegalStateException.class);
        r = r.resume("op", T);
        assertThat(r.state()).isEqualTo(RolloutState.ROLLING);
        assertThat(r.resumedAt()).isEqualTo(T);
        assertThat(r.by()).as("who pushed stays").isEqualTo("token");
        r = r.applying("h2", T).done("h2", T).applying("h3", T).done("h3", T);
        assertThat(r.state()).as("a host failed before the resume counts as settled").isEqualTo(RolloutState.DONE);
    }

    @Test
    void revertAndContinue() {
        assertThat(start(new RolloutSpec(null, null, RolloutSpec.OnFailure.REVERT)).applying("h1", T).failed("h1", "x", T).state())
                .isEqualTo(RolloutState.REVERTED);
        RolloutRecord c = start(new RolloutSpec(null, null, RolloutSpec.OnFailure.CONTINUE)).applying("h1", T).failed("h1", "x", T);
        assertThat(c.state()).isEqualTo(RolloutState.ROLLING);
        c = c.applying("h2", T).done("h2", T).applying("h3", T).done("h3", T);
        assertThat(c.state()).isEqualTo(RolloutState.DONE);
    }

    @Test
    void abortEndsItAndCannotAbortTwice() {
        RolloutRecord r = start(new RolloutSpec(null, null, null)).abort("op", T);
        assertThat(r.state()).isEqualTo(RolloutState.ABORTED);
        assertThatThrownBy(() -> r.abort("op", T)).isInstanceOf(IllegalStateException.class).hasMessageContaining("ended");
    }

    @Test
    void aHostNotTargetedAtPushTimeJoinsTheRecordAndMustFinish() {
        RolloutRecord r = start(new RolloutSpec(null, null, null)).waiting("h9", T);
        assertThat(r.waiting()).contains("h9");
        for (String h : HOSTS) r = r.applying(h, T).done(h, T);
        assertThat(r.state()).isEqualTo(RolloutState.ROLLING);
        assertThat(r.applying("h9", T).done("h9", T).state()).isEqualTo(RolloutState.DONE);
    }

    @Test
    void theRecordIsOneLineOfJsonWithSpecsFieldsFirst() {
        RolloutRecord r = start(new RolloutSpec("25%", 1, null));
        String json = new String(Json.bytes(r.withoutPrevious()));
        assertThat(json).doesNotContain("\n").startsWith("{\"module\":\"store\",\"push\":\"push-0000000002\",\"revision\":\"r2\",\"state\":\"rolling\",\"canary\":[\"h1\"],\"done\":[],\"applying\":[],\"waiting\":[\"h1\",\"h2\",\"h3\"],\"failed\":[],\"since\":");
        assertThat(Json.read(Json.bytes(r), RolloutRecord.class)).isEqualTo(r);
    }

    @Test
    void theManifestFieldIsParsedAndCheckedFieldByField() throws Exception {
        ManifestParser p = new ManifestParser();
        ModuleSpec m = p.parse(ManifestParserTest.GOOD + "rollout: {max-parallel: 2, canary: 1, on-failure: revert}\n").get(0);
        assertThat(m.rollout()).isEqualTo(new RolloutSpec("2", 1, RolloutSpec.OnFailure.REVERT));
        assertThat(p.parse(ManifestParserTest.GOOD + "rollout: {max-parallel: \"25%\"}\n").get(0).rollout().maxParallel()).isEqualTo("25%");
        assertThat(p.parse(ManifestParserTest.GOOD).get(0).rollout()).isNull();
        for (String[] bad : new String[][] {
                {"rollout: {max-parallel: 0}", "rollout.max-parallel"}, {"rollout: {max-parallel: \"150%\"}", "rollout.max-parallel"},
                {"rollout: {canary: -1}", "rollout.canary"}, {"rollout: {on-failure: stop}", "rollout.on-failure"},
                {"rollout: {waves: 2}", "rollout.waves"}, {"rollout: 3", "rollout"}}) {
            ManifestException e = org.assertj.core.api.Assertions.catchThrowableOfType(ManifestException.class,
                    () -> p.parse(ManifestParserTest.GOOD + bad[0] + "\n"));
            assertThat(e).as(bad[0]).isNotNull();
            assertThat(e.errors()).as(bad[0]).singleElement().satisfies(err -> {
                assertThat(err.field()).isEqualTo(bad[1]);
                assertThat(err.message()).isNotBlank();
            });
        }
    }
}
