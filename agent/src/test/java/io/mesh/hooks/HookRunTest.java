package io.mesh.hooks;

import io.mesh.manifest.HooksSpec;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** What a hook's end says, in one line (decision 38): the window's result, a report's reasons and the log carry it. */
class HookRunTest {
    private static final Duration T = Duration.ofSeconds(30);

    @Test
    void eachEndOfAHookIsOneLineNamingThePhaseTheContainerAndWhatHappened() {
        assertThat(new HookRun("store-registry", HookPhase.PRE_STOP, 0, false, false, T, null, List.of("drained")).line())
                .as("a success does not repeat its output").isEqualTo("pre-stop of store-registry exited 0");
        assertThat(new HookRun("store-registry", HookPhase.POST_START, 3, false, false, T, null, List.of("a", " cache cold ")).line())
                .isEqualTo("post-start of store-registry exited 3: cache cold");
        assertThat(new HookRun("store-registry", HookPhase.PRE_STOP, null, true, true, Duration.ofSeconds(2), null, List.of()).line())
                .isEqualTo("pre-stop of store-registry timed out after 2s (hooks.timeout), killed");
        assertThat(new HookRun("store-registry", HookPhase.POST_START, null, true, false, Duration.ofMillis(1500), null, List.of()).line())
                .startsWith("post-start of store-registry timed out after 1500ms (hooks.timeout), not killed")
                .endsWith("it may still run in the container");
        assertThat(new HookRun("store-registry", HookPhase.PRE_STOP, null, false, false, T, "Container abc is not running", List.of()).line())
                .isEqualTo("pre-stop of store-registry not run: Container abc is not running");
    }

    @Test
    void onlyAPreStopExiting75SkipsAWindow() {
        assertThat(new HookRun("c", HookPhase.PRE_STOP, HooksSpec.SKIP_WINDOW, false, false, T, null, List.of()).skipsWindow()).isTrue();
        assertThat(new HookRun("c", HookPhase.POST_START, 75, false, false, T, null, List.of()).skipsWindow()).isFalse();
        assertThat(new HookRun("c", HookPhase.PRE_STOP, 1, false, false, T, null, List.of()).skipsWindow()).isFalse();
        assertThat(new HookRun("c", HookPhase.PRE_STOP, null, true, true, T, null, List.of()).skipsWindow()).as("a timeout").isFalse();
        assertThat(HookPhase.PRE_STOP.command(new HooksSpec(List.of("drain"), null, null))).containsExactly("drain");
        assertThat(HookPhase.POST_START.command(new HooksSpec(List.of("drain"), null, null))).isEmpty();
        assertThat(HookPhase.PRE_STOP.toString()).isEqualTo("pre-stop");
    }

    /** The hooks a container was created with, read back from its labels where the desired spec cannot be read. */
    @Test
    void aContainersHooksAsCreatedAreReadFromItsLabels() {
        HooksSpec h = new HooksSpec(List.of("sh", "-c", "pg_ctl stop"), List.of(), "20s");
        String hooks = io.mesh.wire.Json.text(h);
        java.util.Map<String, String> labels = java.util.Map.of(io.mesh.docker.Labels.HOOKS, hooks,
                io.mesh.docker.Labels.SPEC, "{\"image\":\"mesh-demo/busybox:1\"}");
        io.mesh.manifest.ContainerSpec spec = ContainerHooks.asCreated(labels);
        assertThat(spec.hooks().preStop()).containsExactly("sh", "-c", "pg_ctl stop");
        assertThat(spec.image()).as("the rest as created (its secrets name what the hook's output is redacted of)").isEqualTo("mesh-demo/busybox:1");
        assertThat(ContainerHooks.asCreated(java.util.Map.of(io.mesh.docker.Labels.SPEC, "{}"))).as("created without hooks").isNull();
        assertThat(ContainerHooks.asCreated(java.util.Map.of(io.mesh.docker.Labels.HOOKS, "not json"))).isNull();
    }
}
