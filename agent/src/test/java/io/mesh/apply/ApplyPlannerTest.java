package io.mesh.apply;

import io.mesh.docker.ObservedContainer;
import io.mesh.manifest.ContainerSpec;
import io.mesh.manifest.ManifestParser;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.ProcessRef;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Planning is pure: desired spec + observed containers + held names → actions and reasons. */
class ApplyPlannerTest {
    private static ContainerSpec spec(String image, Map<String, String> env) {
        return ContainerSpec.builder(image).command(List.of("serve")).env(env).build();
    }

    private static ObservedContainer observed(String id, String name, ContainerSpec s, boolean running, String state) {
        return new ObservedContainer(id, "store-" + name, name, SpecDiff.hash(s), SpecDiff.canonical(s), "r1", running, state);
    }

    private static HeldRecord held(String container) {
        return new HeldRecord("host-a", "store", container, "id-1", "garbage-collect", "w-1", Instant.parse("2026-11-30T03:30:00Z"),
                new ProcessRef(42, "mesh-agent run"));
    }

    @Test
    void missingIsCreatedSameAndRunningIsUnchanged() {
        ContainerSpec a = spec("img:1", Map.of());
        Map<String, ContainerSpec> want = new LinkedHashMap<>();
        want.put("registry", a);
        want.put("web", a);
        List<PlannedAction> plan = ApplyPlanner.plan("store", want, List.of(observed("id-1", "registry", a, true, "running")), Map.of());
        assertThat(plan).extracting(PlannedAction::name, PlannedAction::action)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("registry", PlannedAction.Kind.UNCHANGED),
                        org.assertj.core.groups.Tuple.tuple("web", PlannedAction.Kind.CREATE));
        assertThat(plan.get(1).dockerName()).isEqualTo("store-web");
    }

    @Test
    void changedSpecAndNotRunningAreRecreatedWithEveryReason() {
        ContainerSpec before = spec("img:1", Map.of("A", "1", "B", "2"));
        ContainerSpec after = spec("img:2", Map.of("A", "9", "C", "3"));
        List<PlannedAction> plan = ApplyPlanner.plan("store", Map.of("registry", after),
                List.of(observed("id-1", "registry", before, false, "exited (137)")), Map.of());
        assertThat(plan).singleElement().satisfies(p -> {
            assertThat(p.action()).isEqualTo(PlannedAction.Kind.RECREATE);
            assertThat(p.reasons()).containsExactly("image: img:1 -> img:2", "env: added C", "env: removed B", "env: changed A",
                    "not running: exited (137)");
            assertThat(p.existingId()).isEqualTo("id-1");
        });
    }

    /**
     * A container an ended operator's hold stopped is started as it was when its spec is unchanged; with a changed spec,
     * or one stopped by anything else, it is recreated (decision 33; SPEC.md "Apply").
     */
    @Test
    void aContainerAnEndedHoldStoppedIsStartedAsItWasUnlessItsSpecChanged() {
        ContainerSpec a = spec("img:1", Map.of());
        Map<String, String> stoppedByHold = Map.of("id-1", "started again as it was: stopped by alice's hold (--stop), which ended");
        List<ObservedContainer> stopped = List.of(observed("id-1", "registry", a, false, "exited (143)"));
        assertThat(ApplyPlanner.plan("store", Map.of("registry", a), stopped, Map.of(), Map.of(), Map.of(), stoppedByHold))
                .singleElement().satisfies(p -> {
                    assertThat(p.action()).isEqualTo(PlannedAction.Kind.START);
                    assertThat(p.action().reported()).isEqualTo(io.mesh.wire.ContainerAction.UNCHANGED);
                    assertThat(p.reasons()).containsExactly("not running: exited (143)",
                            "started again as it was: stopped by alice's hold (--stop), which ended");
                    assertThat(p.existingId()).isEqualTo("id-1");
                });
        assertThat(ApplyPlanner.plan("store", Map.of("registry", spec("img:2", Map.of())), stopped, Map.of(), Map.of(), Map.of(), stoppedByHold))
                .singleElement().extracting(PlannedAction::action).isEqualTo(PlannedAction.Kind.RECREATE);
        assertThat(ApplyPlanner.plan("store", Map.of("registry", a), stopped, Map.of(), Map.of(), Map.of(), Map.of("id-9", "other")))
                .singleElement().extracting(PlannedAction::action).isEqualTo(PlannedAction.Kind.RECREATE);
        assertThat(ApplyPlanner.plan("store", Map.of("registry", a), stopped, Map.of("store-registry", held("store-registry")), Map.of(),
                Map.of(), stoppedByHold)).singleElement().extracting(PlannedAction::action).isEqualTo(PlannedAction.Kind.HELD);
    }

    /**
     * What ran before a cut recreate of a held container, aside under {@code <name>.mesh-prev}, is held with it: no
     * network recreate disconnects it (the fleet history, seed 9145617122349769463: an operator's hold met its container
     * aside, and a network recreate took it off its network).
     */
    @Test
    void thePreviousContainerOfAHeldOneIsHeld() {
        Map<String, HeldRecord> held = Map.of("store-registry", held("store-registry"));
        assertThat(ApplyPlanner.isHeld("store-registry", held)).isTrue();
        assertThat(ApplyPlanner.isHeld("store-registry" + ApplyPlanner.PREV_SUFFIX, held)).isTrue();
        assertThat(ApplyPlanner.isHeld("store-registry" + ApplyPlanner.NEXT_SUFFIX, held)).isFalse();
        assertThat(ApplyPlanner.isHeld("store-web" + ApplyPlanner.PREV_SUFFIX, held)).isFalse();
    }

    @Test
    void aHeldContainerIsHeldWhateverElseIsTrue() {
        ContainerSpec before = spec("img:1", Map.of());
        ContainerSpec after = spec("img:2", Map.of());
        // stopped, spec changed, and even absent from the spec: held wins every time
        List<PlannedAction> plan = ApplyPlanner.plan("store", Map.of("registry", after),
                List.of(observed("id-1", "registry", before, false, "exited (0)"), observed("id-2", "old", before, false, "exited (0)")),
                Map.of("store-registry", held("store-registry"), "store-old", held("store-old")));
        assertThat(plan).extracting(PlannedAction::action).containsOnly(PlannedAction.Kind.HELD);
        assertThat(plan.get(0).reasons()).containsExactly("held by window garbage-collect since 2026-11-30T03:30:00Z");
    }

    @Test
    void orphansAndDuplicatesAreRemoved() {
        ContainerSpec a = spec("img:1", Map.of());
        ObservedContainer primary = observed("id-1", "registry", a, true, "running");
        ObservedContainer leftover = new ObservedContainer("id-2", "store-registry.mesh-prev", "registry", SpecDiff.hash(a),
                SpecDiff.canonical(a), "r1", false, "exited (0)");
        ObservedContainer orphan = observed("id-3", "web", a, true, "running");
        List<PlannedAction> plan = ApplyPlanner.plan("store", Map.of("registry", a), List.of(primary, leftover, orphan), Map.of());
        assertThat(plan).extracting(PlannedAction::existingId, PlannedAction::action).containsExactly(
                org.assertj.core.groups.Tuple.tuple("id-1", PlannedAction.Kind.UNCHANGED),
                org.assertj.core.groups.Tuple.tuple("id-2", PlannedAction.Kind.REMOVE),
                org.assertj.core.groups.Tuple.tuple("id-3", PlannedAction.Kind.REMOVE));
        assertThat(plan.get(1).reasons().get(0)).startsWith("duplicate of store-registry");
        assertThat(plan.get(2).reasons()).containsExactly("no longer in the spec");
    }

    /**
     * Docker's debris (failure model row 129): a dead container moved out of its name's way is removed by its Docker
     * name (its result must not stand for its container's, whose failed tries are kept by name), and kept while the
     * name it stood in is held.
     */
    @Test
    void aDeadContainerMovedAsideIsRemovedByItsOwnNameAndKeptWhileItsNameIsHeld() {
        ContainerSpec a = spec("img:1", Map.of());
        ObservedContainer primary = observed("id-1", "registry", a, true, "running");
        String aside = ApplyPlanner.deadName("store-registry", "0123456789abcdef");
        assertThat(aside).isEqualTo("store-registry.mesh-dead-0123456789ab");
        assertThat(ApplyPlanner.baseName(aside)).isEqualTo("store-registry");
        assertThat(ApplyPlanner.keptAside(aside)).isTrue();
        ObservedContainer dead = new ObservedContainer("0123456789abcdef", aside, "registry", SpecDiff.hash(a), SpecDiff.canonical(a),
                "r1", false, "dead");
        List<PlannedAction> plan = ApplyPlanner.plan("store", Map.of("registry", a), List.of(primary, dead), Map.of());
        assertThat(plan).extracting(PlannedAction::name, PlannedAction::action).containsExactly(
                org.assertj.core.groups.Tuple.tuple("registry", PlannedAction.Kind.UNCHANGED),
                org.assertj.core.groups.Tuple.tuple(aside, PlannedAction.Kind.REMOVE));
        assertThat(plan.get(1).reasons()).containsExactly("Docker marked it for removal; moved out of store-registry's way");
        assertThat(ApplyPlanner.plan("store", Map.of("registry", a), List.of(primary, dead), Map.of("store-registry", held("store-registry"))))
                .extracting(PlannedAction::action).containsOnly(PlannedAction.Kind.HELD);
    }

    /** A try that was not ready, kept for its logs (failure model row 80): left to its container's next try, removed with it. */
    @Test
    void aFailedTryKeptForItsLogsIsLeftWhileItsContainerIsInTheSpec() {
        ContainerSpec a = spec("img:1", Map.of());
        ObservedContainer kept = new ObservedContainer("id-2", "store-registry.mesh-failed", "registry", SpecDiff.hash(a),
                SpecDiff.canonical(a), "r1", false, "exited (3)");
        assertThat(ApplyPlanner.plan("store", Map.of("registry", a), List.of(kept), Map.of()))
                .extracting(PlannedAction::action).containsExactly(PlannedAction.Kind.CREATE);
        assertThat(ApplyPlanner.plan("store", Map.of(), List.of(kept), Map.of()))
                .extracting(PlannedAction::existingId, PlannedAction::action)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("id-2", PlannedAction.Kind.REMOVE));
    }

    @Test
    void anUnknownPreviousSpecStillGivesAReason() {
        ContainerSpec a = spec("img:1", Map.of());
        ObservedContainer legacy = new ObservedContainer("id-1", "store-registry", "registry", "0000", null, null, true, "running");
        assertThat(ApplyPlanner.plan("store", Map.of("registry", a), List.of(legacy), Map.of()))
                .singleElement().satisfies(p -> assertThat(p.reasons()).containsExactly("spec changed (the container's previous spec is not recorded)"));
    }

    @Test
    void theHashIgnoresMapOrderAndFillsDefaults() {
        ContainerSpec x = ContainerSpec.builder("img:1").env(Map.of("A", "1", "B", "2")).build();
        ContainerSpec y = ContainerSpec.builder("img:1").command(List.of()).env(new java.util.TreeMap<>(Map.of("B", "2", "A", "1"))).network("host")
                .ports(List.of()).volumes(List.of()).restart("unless-stopped").stopTimeout("10s").build();
        assertThat(SpecDiff.hash(x)).isEqualTo(SpecDiff.hash(y)).hasSize(16);
        assertThat(SpecDiff.hash(x)).isNotEqualTo(SpecDiff.hash(spec("img:1", Map.of("A", "1"))));
    }

    /**
     * {@code ready} says how the apply judges a container, not how Docker runs it: it leaves the hash alone (no
     * recreate for a changed deadline); a {@code healthcheck} is Docker's, so it changes the hash and is a reason; and
     * a spec without either keeps the canonical form it had before they existed.
     */
    @Test
    void readyLeavesTheHashAloneAHealthcheckChangesIt() throws Exception {
        String head = "module: store\nhosts: [host-a]\ncontainers:\n  registry:\n    image: mesh-demo/registry:2.8.2\n";
        ManifestParser p = new ManifestParser();
        ContainerSpec plain = p.parse(head).get(0).containers().get("registry");
        ContainerSpec ready = p.parse(head + "    ready: {min-healthy: 10s, deadline: 1m}\n").get(0).containers().get("registry");
        ContainerSpec checked = p.parse(head + "    healthcheck: {test: [CMD, \"true\"]}\n").get(0).containers().get("registry");
        assertThat(SpecDiff.canonical(plain))
                .isEqualTo("{\"image\":\"mesh-demo/registry:2.8.2\",\"network\":\"host\",\"restart\":\"unless-stopped\",\"stop-timeout\":\"10s\"}");
        assertThat(SpecDiff.hash(ready)).isEqualTo(SpecDiff.hash(plain));
        assertThat(SpecDiff.hash(checked)).isNotEqualTo(SpecDiff.hash(plain));
        assertThat(SpecDiff.reasons(plain, checked)).containsExactly("healthcheck: changed");
        assertThat(SpecDiff.parse(SpecDiff.canonical(checked)).healthcheck()).isEqualTo(checked.healthcheck());
    }

    /** A container Docker keeps restarting with the desired spec is left alone and reported failed, not recreated. */
    @Test
    void aContainerCrashLoopingWithTheDesiredSpecIsNotRecreated() {
        ContainerSpec a = spec("img:1", Map.of());
        ObservedContainer looping = new ObservedContainer("id-1", "store-registry", "registry", SpecDiff.hash(a), SpecDiff.canonical(a),
                "r1", false, "restarting (1)");
        assertThat(ApplyPlanner.plan("store", Map.of("registry", a), List.of(looping), Map.of())).singleElement().satisfies(p -> {
            assertThat(p.action()).isEqualTo(PlannedAction.Kind.CRASH_LOOP);
            assertThat(p.action().reported()).isEqualTo(io.mesh.wire.ContainerAction.FAILED);
            assertThat(p.reasons()).singleElement().asString().startsWith("crash-looping").contains("restarting (1)");
        });
        ObservedContainer exited = new ObservedContainer("id-1", "store-registry", "registry", SpecDiff.hash(a), SpecDiff.canonical(a),
                "r1", false, "exited (1)");
        assertThat(ApplyPlanner.plan("store", Map.of("registry", a), List.of(exited), Map.of())).singleElement()
                .satisfies(p -> assertThat(p.action()).isEqualTo(PlannedAction.Kind.RECREATE));
    }

    /** Specs without the security fields keep the canonical form (and so the spec hash) they had before the fields existed. */
    @Test
    void securityFieldsLeaveTheCanonicalFormOfOtherSpecsAlone() throws Exception {
        ContainerSpec plain = new ManifestParser().parse("module: store\nhosts: [host-a]\ncontainers:\n  registry:\n"
                + "    image: mesh-demo/registry:2.8.2\n    privileged: false\n").get(0).containers().get("registry");
        assertThat(SpecDiff.canonical(plain))
                .isEqualTo("{\"image\":\"mesh-demo/registry:2.8.2\",\"network\":\"host\",\"restart\":\"unless-stopped\",\"stop-timeout\":\"10s\"}");
    }
}
