package io.mesh.window;

import io.mesh.docker.DockerEngine;
import io.mesh.testing.ApplierExtension;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.WindowResult;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A window deletes its held nodes as it ends, whatever happened to its containers (SPEC.md "Window"): a held container
 * removed under the window ({@code docker rm -f}: another process's apply, a recovery, a hand) does not keep its held
 * node alive with the window's session (FleetHistoryIT seed 7255546007191183735: "held node never deleted"). Real
 * engine, real ZooKeeper; the node is read from ZooKeeper directly. A window whose held container vanished under it
 * reads {@code failed}, naming it: it could not give that container back (SPEC.md "Window").
 */
@Tag("slow") // windows with a step of seconds and a readiness wait on the real engine
class WindowClosingHeldGoneTest {
    private static final String HOST = ApplierExtension.HOST;
    @RegisterExtension
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    final ApplierExtension here = new ApplierExtension(zk, "hg");
    private DockerEngine docker;
    private String module;

    @BeforeEach
    void setUp() {
        docker = here.docker();
        module = here.module();
    }

    /** Pushes and applies a module whose {@code web} a window {@code gc} holds while a step of {@code stepSeconds} runs. */
    private String push(int stepSeconds, String ready) throws Exception {
        zk.setDesired("module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n"
                + "  web:\n    image: " + BUSYBOX + "\n    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "    network: none\n    restart: always\n    stop-timeout: 1s\n    ready: " + ready + "\n"
                + "schedules:\n  gc:\n    cron: \"30 3 * * *\"\n    while-stopped: [web]\n"
                + "    step:\n      image: " + BUSYBOX + "\n      command: [sh, -c, \"sleep " + stepSeconds + "\"]\n    timeout: 1m\n", "r1");
        assertThat(here.applier().apply(module, () -> false).outcome()).isEqualTo(ApplyOutcome.APPLIED);
        return docker.idByName(module + "-web");
    }

    private CompletableFuture<WindowResult> window() {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return here.windows().run(module, "gc", Duration.ofSeconds(5));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    /** {@code docker rm -f}: what another process, a recovery or the fault injector did to the held container. */
    private void removeByHand(String id) {
        docker.client().removeContainerCmd(id).withForce(true).exec();
    }

    private String heldPath() {
        return zk.paths().held(HOST, module + "-web");
    }

    /**
     * Removed while stopped: there is nothing to start or put a restart policy back on, and retrying will not help (its
     * policy {@code always} is put back first, and Docker's 404 for that call is the same answer as a start's).
     */
    @Test
    void aHeldContainerRemovedWhileTheStepRunsLosesItsHeldNodeAsTheWindowEnds() throws Exception {
        String id = push(4, "{min-healthy: 1s}");
        CompletableFuture<WindowResult> window = window();
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50))
                .until(() -> here.journal().read(module).map(e -> e.openedStages().contains(WindowStage.STEP_STARTED)).orElse(false));
        assertThat(zk.client().checkExists().forPath(heldPath())).as("held while the step runs").isNotNull();
        removeByHand(id);

        // Well within WindowClosing.START_RETRY (90 s): a missing container is not retried.
        WindowResult w = window.get(30, TimeUnit.SECONDS);
        assertThat(zk.client().checkExists().forPath(heldPath())).as("held node of %s, after %s", module + "-web", w).isNull();
        assertThat(zk.client().checkExists().forPath(zk.paths().window(HOST, module))).as("window node").isNull();
        assertThat(w.outcome()).as("result %s", w).hasToString("failed");
        assertThat(w.error()).contains(module + "-web").contains("no longer exists");
        assertThat(here.journal().read(module)).isEmpty();
    }

    /** The fleet's case: the window started the container again, and it was removed while its readiness was awaited. */
    @Test
    void aHeldContainerRemovedWhileItsReadinessIsAwaitedLosesItsHeldNodeAsTheWindowEnds() throws Exception {
        String id = push(1, "{min-healthy: 5s}");
        CompletableFuture<WindowResult> window = window();
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50))
                .until(() -> here.journal().read(module).map(e -> e.openedStages().contains(WindowStage.STEP_STARTED)).orElse(false));
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50)).until(() -> docker.isRunning(id));
        assertThat(window).as("the window awaits its readiness").isNotDone();
        assertThat(zk.client().checkExists().forPath(heldPath())).as("held while its readiness is awaited").isNotNull();
        removeByHand(id);

        WindowResult w = window.get(30, TimeUnit.SECONDS);
        assertThat(zk.client().checkExists().forPath(heldPath())).as("held node of %s, after %s", module + "-web", w).isNull();
        assertThat(zk.client().checkExists().forPath(zk.paths().window(HOST, module))).as("window node").isNull();
        assertThat(w.outcome()).as("result %s", w).hasToString("failed");
        // rm -f kills, then removes: the readiness wait may see the kill's exit first, and then no container to read
        // the log of (CI, 2026-12-07), or see it gone at once
        assertThat(w.error()).contains(module + "-web").containsAnyOf("no longer exists", "No such container");
        assertThat(here.journal().read(module)).isEmpty();
    }
}
