package io.mesh.apply;

import io.mesh.testing.ApplierExtension;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.Json;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;
import java.util.UUID;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A failed apply's report names the containers it left down, as Docker says after it (ApplyReport {@code down}: a
 * cause of the one disruption budget, decision 37 item 3): a container the push adds and that cannot be made is down;
 * a recreate that fails puts the previous container back, and it is not. Real engine, real ZooKeeper; Docker's own
 * inspect.
 */
@Tag("slow") // applies and readiness waits on the real engine: the full run, not --fast (which must stay under 2 min)
class FailedApplyDownTest {
    private static final String HOST = ApplierExtension.HOST;
    @RegisterExtension
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    final ApplierExtension here = new ApplierExtension(zk, "fd-");

    @AfterEach
    void tearDown() {
        TestDocker.clean(here.module());
    }

    private static String container(String name, String image, String pull) {
        return "  " + name + ":\n    image: " + image + "\n" + pull + "    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "    network: none\n    stop-timeout: 1s\n";
    }

    @Test
    void aContainerThePushAddsAndCannotMakeIsDownAndOneARecreatePutBackIsNot() throws Exception {
        String module = here.module();
        String missing = "fd-nowhere-" + UUID.randomUUID().toString().substring(0, 8) + ":1";
        String head = "module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n";
        zk.setDesired(head + container("app", BUSYBOX, ""), "r1");
        assertThat(here.applier().apply(module, () -> false).outcome()).isEqualTo(ApplyOutcome.APPLIED);
        String app = here.docker().idByName(module + "-app");

        // app's new image cannot be had (its recreate fails, the previous container runs on); extra cannot be made
        zk.setDesired(head + container("app", missing, "    pull: never\n") + container("extra", missing, "    pull: never\n"), "r2");
        ApplyReport r = here.applier().apply(module, () -> false);
        assertThat(r.outcome()).as(Json.text(r)).isEqualTo(ApplyOutcome.FAILED);
        assertThat(r.down()).as(Json.text(r)).containsExactly(module + "-extra");
        assertThat(here.docker().client().inspectContainerCmd(app).exec().getState().getRunning()).as("app runs on").isTrue();
        assertThat(here.docker().idByName(module + "-extra")).isNull();
        assertThat(new String(zk.client().getData().forPath(zk.paths().report(HOST, module)), java.nio.charset.StandardCharsets.UTF_8)).as("the report node").contains("\"down\":[\"" + module + "-extra\"]");

        // a push that lands says nothing is down
        zk.setDesired(head + container("app", BUSYBOX, ""), "r3");
        ApplyReport fixed = here.applier().apply(module, () -> false);
        assertThat(fixed.outcome()).as(Json.text(fixed)).isEqualTo(ApplyOutcome.APPLIED);
        assertThat(fixed.down()).isEmpty();
        assertThat(new String(zk.client().getData().forPath(zk.paths().report(HOST, module)), java.nio.charset.StandardCharsets.UTF_8)).doesNotContain("\"down\"");
    }

    /**
     * A push whose rollout was aborted keeps this host on its previous revision: its apply of that revision is clean,
     * and its report reads failed for the rollout's reason only. Nothing is down: the push's added container was never
     * this apply's to make (a reviewer's find: every host of a reverted rollout read down).
     */
    @Test
    void aHostKeptOnItsPreviousRevisionByAnAbortedRolloutLeftNothingDown() throws Exception {
        String module = here.module();
        String missing = "fd-nowhere-" + UUID.randomUUID().toString().substring(0, 8) + ":1";
        String head = "module: " + module + "\nhosts: [" + HOST + ", fd-aaa]\ncontainers:\n";
        io.mesh.wire.DesiredRecord v1 = zk.setDesired(head + container("app", BUSYBOX, ""), "r1");
        assertThat(here.applier().apply(module, () -> false).outcome()).isEqualTo(ApplyOutcome.APPLIED);

        io.mesh.manifest.ModuleSpec spec = new io.mesh.manifest.ManifestParser().parse(head + container("app", BUSYBOX, "")
                + container("extra", missing, "    pull: never\n") + "rollout:\n  canary: 1\n").get(0);
        io.mesh.wire.DesiredRecord v2 = new io.mesh.wire.DesiredRecord(module, "r2", io.mesh.wire.ZkPaths.pushName(2), spec);
        java.time.Instant now = java.time.Instant.now();
        io.mesh.wire.RolloutRecord r = io.mesh.wire.RolloutRecord.start(v2, List.of(HOST, "fd-aaa"), java.util.Set.of("fd-aaa"), v1, "test", now)
                .abort("ops", now);
        zk.client().delete().forPath(zk.paths().desired(module));
        zk.writeRolloutPush(v2, r, h -> h);

        ApplyReport kept = here.applier().apply(module, () -> false);
        assertThat(kept.outcome()).as(Json.text(kept)).isEqualTo(ApplyOutcome.FAILED);
        assertThat(kept.rollout()).as(Json.text(kept)).isNotNull();
        assertThat(kept.down()).as(Json.text(kept)).isEmpty();
        assertThat(here.docker().idByName(module + "-extra")).isNull();
    }
}
