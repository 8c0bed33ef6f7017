package io.mesh.manifest;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** A module's {@code rollout} field, parsed and checked field by field (docs/decisions/0013-rollouts.md). */
class RolloutSpecParseTest {
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
                {"rollout: {waves: 2}", "rollout.waves"}, {"rollout: 3", "rollout"},
                {"rollout: {promote: later}", "rollout.promote"}, {"rollout: {max-failed: -1}", "rollout.max-failed"},
                {"rollout: {max-failed: \"101%\"}", "rollout.max-failed"}, {"rollout: {max-failed: two}", "rollout.max-failed"},
                {"rollout: {soak: 5}", "rollout.soak"}, {"rollout: {soak: \"2d\"}", "rollout.soak"},
                {"rollout: {gate: {prometheus: {url: \"http://127.0.0.1:9090\", query: up}, on-blocked: skip}}", "rollout.gate.on-blocked"},
                {"rollout: {gate: {prometheus: {url: \"nope\", query: up}}}", "rollout.gate.prometheus.url"},
                {"rollout: {silence: {alertmanager: \"nope\", matchers: {job: web}}}", "rollout.silence.alertmanager"}}) {
            ManifestException e = org.assertj.core.api.Assertions.catchThrowableOfType(ManifestException.class,
                    () -> p.parse(ManifestParserTest.GOOD + bad[0] + "\n"));
            assertThat(e).as(bad[0]).isNotNull();
            assertThat(e.errors()).as(bad[0]).singleElement().satisfies(err -> {
                assertThat(err.field()).isEqualTo(bad[1]);
                assertThat(err.message()).isNotBlank();
            });
        }
    }

    /** SPEC.md "The rest of the operator's stack": {@code promote: auto | manual} and {@code max-failed: N | N%}. */
    @Test
    void promoteAndMaxFailedAreParsedAndResolved() throws Exception {
        ManifestParser p = new ManifestParser();
        RolloutSpec r = p.parse(ManifestParserTest.GOOD + "rollout: {canary: 1, promote: manual, max-failed: 2}\n").get(0).rollout();
        assertThat(r.promoteOrDefault()).isEqualTo(RolloutSpec.Promote.MANUAL);
        assertThat(r.resolveMaxFailed(10)).isEqualTo(2);
        RolloutSpec pct = p.parse(ManifestParserTest.GOOD + "rollout: {max-failed: \"25%\"}\n").get(0).rollout();
        assertThat(pct.maxFailed()).isEqualTo("25%");
        assertThat(pct.resolveMaxFailed(10)).as("rounded down: never more failures than the share").isEqualTo(2);
        assertThat(pct.promoteOrDefault()).isEqualTo(RolloutSpec.Promote.AUTO);
        assertThat(new RolloutSpec(null, null, null).resolveMaxFailed(10)).isZero();
        assertThat(p.parse(ManifestParserTest.GOOD + "rollout: {soak: 10m}\n").get(0).rollout().soak()).isEqualTo("10m");
        assertThat(p.parse(ManifestParserTest.GOOD + "rollout: {silence: {alertmanager: \"http://127.0.0.1:9093\", matchers: {job: web}}}\n")
                .get(0).rollout().silence().matchers()).containsEntry("job", "web");
        assertThat(p.parse(ManifestParserTest.GOOD + "rollout: {gate: {prometheus: {url: \"http://127.0.0.1:9090\", query: up}}}\n").get(0)
                .rollout().gate().prometheus().query()).isEqualTo("up");
    }
}
