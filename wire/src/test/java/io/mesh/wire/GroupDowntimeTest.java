package io.mesh.wire;

import io.mesh.manifest.ModuleSpec;
import io.mesh.manifest.ScheduleSpec;
import io.mesh.manifest.StepSpec;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The one disruption budget's rule (decision 37 item 3): which hosts of a group are down for a cause other than a window. */
class GroupDowntimeTest {
    private static final Instant T = Instant.parse("2026-12-07T03:30:00Z");
    private static final StepSpec STEP = new StepSpec("mesh-demo/busybox:1", List.of("true"), null, null, null, null);

    private static ModuleSpec module(String name, String group, String... hosts) {
        return new ModuleSpec(name, List.of(hosts), Map.of(), Map.of("gc", new ScheduleSpec("30 3 * * *", null, List.of(), STEP, "30m", null, group,
                null, null)), null);
    }

    private static HeldRecord hold(String host, String module, String container, boolean stop, Instant until, Boolean drain) {
        return HeldRecord.operator(host, module, container, null, new ProcessRef(1, "c"),
                new HeldRecord.OperatorHold("ops", "disk", T, until, stop ? Boolean.TRUE : null, null, null, drain));
    }

    @Test
    void aStopHoldOrDrainOfAGroupsModuleMakesItsHostDown() {
        List<ModuleSpec> specs = List.of(module("reg", "registries", "a", "b", "c"), module("web", null, "*"));
        List<HeldRecord> held = List.of(hold("a", "reg", "reg-app", true, null, null),
                hold("b", "reg", "reg-app", false, null, null), hold("b", "web", "web-app", true, null, null),
                hold("c", "reg", "reg-app", true, null, Boolean.TRUE), hold("d", "reg", "reg-app", true, null, null));
        List<GroupDowntime.Cause> causes = GroupDowntime.causes("registries", specs, held, List.of(), T);
        assertThat(causes).extracting(GroupDowntime.Cause::host, GroupDowntime.Cause::kind).containsExactly(
                org.assertj.core.api.Assertions.tuple("a", GroupDowntime.Kind.HOLD), org.assertj.core.api.Assertions.tuple("c", GroupDowntime.Kind.DRAIN));
        // b: a hold without --stop, and a --stop hold of a module not in the group; d: the module does not run there
        assertThat(GroupDowntime.causes("registries", specs, List.of(hold("a", "reg", "reg-app", true, T, null)), List.of(), T))
                .as("a hold past its until holds nothing").isEmpty();
        assertThat(GroupDowntime.causes("other", specs, held, List.of(), T)).isEmpty();
        assertThat(causes.get(0).describe()).isEqualTo("a: reg-app held --stop by ops (disk)");
    }

    private static ApplyReport failed(String host, String module, List<String> down) {
        return ApplyReport.failed(host, module, "r2", "push-0000000007", T, null, List.of(), module + "-extra: not created: no such image")
                .withDown(down);
    }

    @Test
    void aFailedApplyThatLeftAContainerDownMakesItsHostDownAndOneThatLeftAllRunningDoesNot() {
        List<ModuleSpec> specs = List.of(module("reg", "registries", "a", "b", "c", "d"), module("web", null, "*"));
        List<ApplyReport> reports = List.of(failed("a", "reg", List.of("reg-extra", "reg-app")),
                failed("b", "reg", List.of()), // failed, but the previous container runs on (a recreate put it back)
                failed("c", "web", List.of("web-app")), // not a module of the group
                ApplyReport.applied("d", "reg", "r2", "push-0000000007", T, null, List.of()).withDown(List.of("reg-app")), // only a failed one counts
                failed("e", "reg", List.of("reg-app"))); // the module does not run there (any more)
        List<GroupDowntime.Cause> causes = GroupDowntime.causes("registries", specs, List.of(), reports, T);
        assertThat(causes).extracting(GroupDowntime.Cause::host, GroupDowntime.Cause::kind, GroupDowntime.Cause::container)
                .containsExactly(org.assertj.core.api.Assertions.tuple("a", GroupDowntime.Kind.FAILED_APPLY, "reg-app"));
        assertThat(causes.get(0).describe()).isEqualTo("a: reg-app left down by the failed apply of push-0000000007 (reg-extra: not created: no such image)");
        // a host down for an operator's stop and a failed apply is one place, named by the stop
        assertThat(GroupDowntime.causes("registries", specs, List.of(hold("a", "reg", "reg-app", true, null, null)), reports, T))
                .extracting(GroupDowntime.Cause::kind).containsExactly(GroupDowntime.Kind.HOLD);
        assertThat(GroupDowntime.Kind.FAILED_APPLY.wire()).isEqualTo("failed-apply");
    }
}
