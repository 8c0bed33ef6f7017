package io.mesh.apply;

import io.mesh.testing.ApplierExtension;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.FreezeRecord;
import io.mesh.wire.Json;
import io.mesh.wire.Times;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Hooks around the starts and stops an apply makes outside a plan's recreate (decision 38: around every stop and start
 * mesh makes): a frozen module's repair (SPEC.md "Freezes": a freeze stops changes, not repairs) starts a stopped
 * container again and runs its {@code post-start}, from the desired spec; a container the push no longer names runs
 * its {@code pre-stop} as it was created (its hooks label) before its removal. Real engine and ZooKeeper; the hooks'
 * lines read from the module's volume through Docker.
 */
@Tag("slow") // applies and readiness waits on the real engine: the full run, not --fast (which must stay under 2 min)
class RepairHooksTest {
    private static final String HOST = ApplierExtension.HOST;
    @RegisterExtension
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    final ApplierExtension here = new ApplierExtension(zk, "rh-");

    @AfterEach
    void tearDown() {
        TestDocker.clean(here.module(), here.module() + "-data");
    }

    private int postStartLines(String id) {
        return (int) here.docker().exec(id, List.of("sh", "-c", "cat /data/post-start 2>/dev/null || true"), Duration.ofSeconds(10), 100)
                .output().stream().filter("started"::equals).count();
    }

    @Test
    void aFrozenModulesRepairRunsThePostStartOfTheContainerItStartsAgain() throws Exception {
        String module = here.module();
        zk.setDesired("module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n"
                + "  app:\n    image: " + BUSYBOX + "\n    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "    network: none\n    stop-timeout: 1s\n    volumes: [\"" + module + "-data:/data\"]\n"
                + "    hooks: {post-start: [sh, -c, \"echo started >> /data/post-start\"], timeout: 10s}\n", "r1");
        assertThat(here.applier().apply(module, () -> false).outcome()).isEqualTo(ApplyOutcome.APPLIED);
        String id = here.docker().idByName(module + "-app");
        int before = postStartLines(id);

        zk.client().create().creatingParentsIfNeeded().forPath(zk.paths().freeze(module),
                Json.bytes(new FreezeRecord("ops", "release", Times.now(), Times.now().plusSeconds(3600))));
        here.docker().client().stopContainerCmd(id).withTimeout(1).exec();
        ApplyReport r = here.applier().apply(module, () -> false);
        assertThat(r.outcome()).as(Json.text(r)).isEqualTo(ApplyOutcome.DEFERRED);
        assertThat(here.docker().idByName(module + "-app")).as("the same container").isEqualTo(id);
        assertThat(here.docker().isRunning(id)).isTrue();
        assertThat(postStartLines(id)).as("its post-start ran once more").isEqualTo(before + 1);
        assertThat(r.containers()).anySatisfy(c -> assertThat(String.join("; ", c.reasons())).contains("hook post-start of " + module + "-app"));
    }

    @Test
    void aContainerThePushNoLongerNamesRunsItsPreStopAsCreatedBeforeItIsRemoved() throws Exception {
        String module = here.module();
        String app = "  app:\n    image: " + BUSYBOX + "\n    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "    network: none\n    stop-timeout: 1s\n    volumes: [\"" + module + "-data:/data\"]\n";
        String extra = app.replace("  app:", "  extra:")
                + "    hooks: {pre-stop: [sh, -c, \"echo stopping >> /data/pre-stop\"], timeout: 10s}\n";
        String head = "module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n";
        zk.setDesired(head + app + extra, "r1");
        assertThat(here.applier().apply(module, () -> false).outcome()).isEqualTo(ApplyOutcome.APPLIED);
        String appId = here.docker().idByName(module + "-app");

        zk.setDesired(head + app, "r2");
        ApplyReport r = here.applier().apply(module, () -> false);
        assertThat(r.outcome()).as(Json.text(r)).isEqualTo(ApplyOutcome.APPLIED);
        assertThat(here.docker().idByName(module + "-extra")).as("removed").isNull();
        assertThat(here.docker().exec(appId, List.of("sh", "-c", "cat /data/pre-stop 2>/dev/null || true"), Duration.ofSeconds(10), 100).output())
                .as("extra's pre-stop ran before its removal").containsExactly("stopping");
        assertThat(r.containers()).anySatisfy(c -> assertThat(String.join("; ", c.reasons())).contains("hook pre-stop of " + module + "-extra"));
    }
}
