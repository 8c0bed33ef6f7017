package io.mesh.apply;

import io.mesh.docker.ObservedContainer;
import io.mesh.manifest.ContainerSpec;
import io.mesh.manifest.ManifestParser;
import io.mesh.manifest.SecretRef;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The spec hash and the {@code mesh.spec} label with env digests and secrets (decision 18): upgrading mesh recreates
 * nothing, the label shows no value, and a secret's digest decides whether its container is recreated.
 */
class SpecDiffSecretsTest {
    private static final String ENV_VALUE = "s3cr3t-env-value";

    private static ContainerSpec spec(Map<String, String> env, Map<String, SecretRef> secrets) {
        return ContainerSpec.builder("img:1").command(List.of("serve")).env(env).secrets(secrets).build();
    }

    /** A container as the apply labels it: hash with the digests, label with digests only. */
    private static ObservedContainer labelled(ContainerSpec s, Map<String, String> digests) {
        return new ObservedContainer("id-1", "store-web", "web", SpecDiff.hash(s, digests), SpecDiff.label(s, digests), "r1", true, "running");
    }

    /** A container labelled by a mesh from before secrets: the hash of the canonical form, the label with env values. */
    private static ObservedContainer labelledBefore(ContainerSpec s) throws Exception {
        String canonical = SpecDiff.canonical(s);
        String hash = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(canonical.getBytes(StandardCharsets.UTF_8)), 0, 8);
        return new ObservedContainer("id-1", "store-web", "web", hash, canonical, "r1", true, "running");
    }

    private static List<PlannedAction> plan(ContainerSpec want, ObservedContainer now, Map<String, String> digests) {
        return ApplyPlanner.plan("store", Map.of("web", want), List.of(now), Map.of(), Map.of("web", digests), Map.of());
    }

    @Test
    void aContainerLabelledBeforeSecretsExistedIsUnchangedAndItsEnvChangeIsNamedWithoutValues() throws Exception {
        ContainerSpec s = spec(Map.of("A", ENV_VALUE), null);
        assertThat(plan(s, labelledBefore(s), Map.of())).singleElement().satisfies(a -> assertThat(a.action()).isEqualTo(PlannedAction.Kind.UNCHANGED));
        assertThat(SpecDiff.hash(s, Map.of())).isEqualTo(labelledBefore(s).specHash()).isEqualTo(SpecDiff.hash(s));

        ContainerSpec changed = spec(Map.of("A", "other-" + ENV_VALUE), null);
        PlannedAction a = plan(changed, labelledBefore(s), Map.of()).get(0);
        assertThat(a.action()).isEqualTo(PlannedAction.Kind.RECREATE);
        assertThat(a.reasons()).containsExactly("env: changed A");
    }

    @Test
    void theLabelShowsEnvValuesAsDigestsAndStillTellsWhichChanged() {
        ContainerSpec s = spec(Map.of("A", ENV_VALUE, "B", "b"), null);
        String label = SpecDiff.label(s, Map.of());
        assertThat(label).doesNotContain(ENV_VALUE).contains("\"A\":\"" + SpecDiff.envDigest(ENV_VALUE) + "\"");
        assertThat(SpecDiff.envDigest("x")).isEqualTo("sha256:2d711642b726b044"); // printf %s x | sha256sum | cut -c1-16
        assertThat(plan(s, labelled(s, Map.of()), Map.of()).get(0).action()).isEqualTo(PlannedAction.Kind.UNCHANGED);

        PlannedAction a = plan(spec(Map.of("A", ENV_VALUE, "B", "c", "C", "new"), null), labelled(s, Map.of()), Map.of()).get(0);
        assertThat(a.reasons()).containsExactly("env: added C", "env: changed B");
        assertThat(String.join(" ", a.reasons())).doesNotContain(ENV_VALUE);
        // Read back, the label is a spec whose env values are digests: the other fields are as written.
        assertThat(SpecDiff.parse(label).image()).isEqualTo("img:1");
        assertThat(SpecDiff.parse(label).env()).containsEntry("A", SpecDiff.envDigest(ENV_VALUE));
    }

    @Test
    void aSecretsDigestTakesPartInTheHashAndItsChangeIsTheReason() {
        ContainerSpec s = spec(null, Map.of("DB", SecretRef.env("db/password"), "tls", SecretRef.mounted("tls.key", "/run/tls.key")));
        Map<String, String> before = Map.of("DB", "hmac-sha256:1111111111111111", "tls", "hmac-sha256:2222222222222222");
        Map<String, String> rotated = Map.of("DB", "hmac-sha256:3333333333333333", "tls", "hmac-sha256:2222222222222222");
        assertThat(SpecDiff.label(s, before)).contains("\"DB\":{\"digest\":\"hmac-sha256:1111111111111111\",\"file\":\"db/password\"}");
        assertThat(SpecDiff.hash(s, before)).isNotEqualTo(SpecDiff.hash(s, rotated));

        assertThat(plan(s, labelled(s, before), before).get(0).action()).isEqualTo(PlannedAction.Kind.UNCHANGED);
        PlannedAction a = plan(s, labelled(s, before), rotated).get(0);
        assertThat(a.action()).isEqualTo(PlannedAction.Kind.RECREATE);
        assertThat(a.reasons()).containsExactly("secret changed: DB");

        ContainerSpec moved = spec(null, Map.of("DB", SecretRef.env("db/password2"), "key", SecretRef.mounted("k", "/k")));
        assertThat(plan(moved, labelled(s, before), Map.of("DB", "hmac-sha256:1111111111111111", "key", "hmac-sha256:4444444444444444"))
                .get(0).reasons()).containsExactly("secrets: added key", "secrets: removed tls", "secret changed: DB (file db/password -> db/password2)");
    }

    /** A spec with secrets and without is told apart by the parser's output, and the plain one keeps its canonical form. */
    @Test
    void aSpecWithoutSecretsKeepsItsCanonicalForm() throws Exception {
        ContainerSpec plain = new ManifestParser().parse("module: store\nhosts: [host-a]\ncontainers:\n  registry:\n"
                + "    image: mesh-demo/registry:2.8.2\n").get(0).containers().get("registry");
        assertThat(SpecDiff.canonical(plain)).doesNotContain("secrets");
        assertThat(SpecDiff.label(plain, Map.of())).isEqualTo(SpecDiff.canonical(plain));
    }
}
