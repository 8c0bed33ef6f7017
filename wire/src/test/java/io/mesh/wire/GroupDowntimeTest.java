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
        List<GroupDowntime.Cause> causes = GroupDowntime.causes("registries", specs, held, T);
        assertThat(causes).extracting(GroupDowntime.Cause::host, GroupDowntime.Cause::kind).containsExactly(
                org.assertj.core.api.Assertions.tuple("a", GroupDowntime.Kind.HOLD), org.assertj.core.api.Assertions.tuple("c", GroupDowntime.Kind.DRAIN));
        // b: a hold without --stop, and a --stop hold of a module not in the group; d: the module does not run there
        assertThat(GroupDowntime.causes("registries", specs, List.of(hold("a", "reg", "reg-app", true, T, null)), T))
                .as("a hold past its until holds nothing").isEmpty();
        assertThat(GroupDowntime.causes("other", specs, held, T)).isEmpty();
        assertThat(causes.get(0).describe()).isEqualTo("a: reg-app held --stop by ops (disk)");
    }
}
