package io.mesh.apply;

import io.mesh.docker.ObservedContainer;
import io.mesh.manifest.ContainerSpec;
import io.mesh.manifest.ManifestParser;
import io.mesh.manifest.PullPolicy;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code pull} and planning, pure (decision 20): the policy is not part of the spec hash, and only a
 * {@code pull: always} container whose pull gave its reference another image is recreated for it.
 */
class PullPlanningTest {
    private static final String OLD = "sha256:0a0a0a0a0a0a" + "1".repeat(52);
    private static final String NEW = "sha256:0b0b0b0b0b0b" + "2".repeat(52);
    private static final String REGISTRY = """
            module: store
            hosts: [host-a]
            containers:
              registry:
                image: mesh-demo/registry:2.8.2
                command: ["/bin/registry", "serve", "/etc/docker/registry/config.yml"]
                env: {REGISTRY_HTTP_ADDR: "127.0.0.1:5000"}
                volumes: ["store-data:/var/lib/registry"]
                restart: unless-stopped
            """;

    private static ContainerSpec registry(String extra) throws Exception {
        return new ManifestParser().parse(REGISTRY + extra).get(0).containers().get("registry");
    }

    private static ObservedContainer running(ContainerSpec s, String imageId) {
        return new ObservedContainer("id-1", "store-registry", "registry", SpecDiff.hash(s), SpecDiff.canonical(s), "r1", true,
                "running", "none", imageId);
    }

    /**
     * The hash of a spec without {@code pull} is the one this version's predecessor gave it (computed before
     * {@code pull} existed), so no container is recreated by the upgrade; and each policy leaves it alone.
     */
    @Test
    void pullIsNotPartOfTheSpecHashAndASpecWithoutItKeepsItsHash() throws Exception {
        ContainerSpec plain = registry("");
        assertThat(SpecDiff.hash(plain)).isEqualTo("2e043f3f87a637c4");
        for (PullPolicy p : PullPolicy.values()) {
            ContainerSpec withPull = registry("    pull: " + p.wire() + "\n");
            assertThat(withPull.pullPolicy()).isEqualTo(p);
            assertThat(SpecDiff.hash(withPull)).as("pull: %s", p).isEqualTo(SpecDiff.hash(plain));
            assertThat(SpecDiff.canonical(withPull)).doesNotContain("pull");
            assertThat(SpecDiff.reasons(plain, withPull)).isEmpty();
        }
    }

    @Test
    void aChangedPolicyAloneRecreatesNothing() throws Exception {
        ContainerSpec before = registry("");
        ContainerSpec after = registry("    pull: never\n");
        assertThat(ApplyPlanner.plan("store", Map.of("registry", after), List.of(running(before, OLD)), Map.of()))
                .singleElement().satisfies(a -> assertThat(a.action()).isEqualTo(PlannedAction.Kind.UNCHANGED));
    }

    @Test
    void anAlwaysContainerWhosePullChangedItsImageIsRecreatedNamingBothImages() throws Exception {
        ContainerSpec s = registry("    pull: always\n");
        assertThat(ApplyPlanner.plan("store", Map.of("registry", s), List.of(running(s, OLD)), Map.of(), Map.of(), Map.of(s.image(), NEW)))
                .singleElement().satisfies(a -> {
                    assertThat(a.action()).isEqualTo(PlannedAction.Kind.RECREATE);
                    assertThat(a.reasons()).containsExactly("image changed: sha256:0a0a0a0a0a0a -> sha256:0b0b0b0b0b0b (pulled)");
                    assertThat(a.existingId()).isEqualTo("id-1");
                });
        // the pull gave the image it runs: nothing to do
        assertThat(ApplyPlanner.plan("store", Map.of("registry", s), List.of(running(s, OLD)), Map.of(), Map.of(), Map.of(s.image(), OLD)))
                .singleElement().satisfies(a -> assertThat(a.action()).isEqualTo(PlannedAction.Kind.UNCHANGED));
    }

    /** Under {@code missing} or {@code never} the local tag is what counts: a moved tag recreates nothing. */
    @Test
    void onlyAnAlwaysContainerIsComparedWithThePull() throws Exception {
        for (String policy : List.of("", "    pull: missing\n", "    pull: never\n")) {
            ContainerSpec s = registry(policy);
            assertThat(ApplyPlanner.plan("store", Map.of("registry", s), List.of(running(s, OLD)), Map.of(), Map.of(), Map.of(s.image(), NEW)))
                    .as(policy).singleElement().satisfies(a -> assertThat(a.action()).isEqualTo(PlannedAction.Kind.UNCHANGED));
        }
    }

    /** A new build under the same tag may be the fix of a crash loop: it is recreated rather than left looping. */
    @Test
    void aCrashLoopingAlwaysContainerWhoseImageChangedIsRecreated() throws Exception {
        ContainerSpec s = registry("    pull: always\n");
        ObservedContainer looping = new ObservedContainer("id-1", "store-registry", "registry", SpecDiff.hash(s), SpecDiff.canonical(s),
                "r1", false, "restarting (1)", "none", OLD);
        assertThat(ApplyPlanner.plan("store", Map.of("registry", s), List.of(looping), Map.of(), Map.of(), Map.of(s.image(), NEW)))
                .singleElement().satisfies(a -> {
                    assertThat(a.action()).isEqualTo(PlannedAction.Kind.RECREATE);
                    assertThat(a.reasons()).contains("image changed: sha256:0a0a0a0a0a0a -> sha256:0b0b0b0b0b0b (pulled)");
                });
    }

    /** A changed reference says so already: no second reason about the pulled image. */
    @Test
    void aChangedReferenceIsOneReason() throws Exception {
        ContainerSpec before = registry("    pull: always\n");
        ContainerSpec after = new ManifestParser().parse((REGISTRY + "    pull: always\n").replace("registry:2.8.2", "registry:2.8.3"))
                .get(0).containers().get("registry");
        assertThat(ApplyPlanner.plan("store", Map.of("registry", after), List.of(running(before, OLD)), Map.of(), Map.of(), Map.of(after.image(), NEW)))
                .singleElement().satisfies(a -> assertThat(a.reasons())
                        .containsExactly("image: mesh-demo/registry:2.8.2 -> mesh-demo/registry:2.8.3"));
    }
}
