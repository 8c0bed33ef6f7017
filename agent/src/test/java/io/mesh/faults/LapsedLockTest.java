package io.mesh.faults;

import io.mesh.curator.MeshZk;
import io.mesh.docker.Labels;
import io.mesh.testing.ChildJvm;
import io.mesh.testing.DockerEvents;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.WindowResult;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import static io.mesh.faults.FaultFixture.result;
import static io.mesh.faults.FaultFixture.sleepStep;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A lapsed lock touches nothing. A {@code mesh-agent run} daemon is frozen (SIGSTOP) in the middle of
 * a recreate, while it stops the old registry (which ignores SIGTERM: the stop lasts its 25 s stop-timeout, and dockerd
 * goes on with it while the daemon is frozen). The daemon stays frozen past its ZooKeeper session (15 s), so its
 * module lock lapses, and a {@code mesh-agent window} process for the same module and host (same {@code --state-dir})
 * takes the lock; then the daemon is resumed (SIGCONT), its stop still under way. The window must wait for the host
 * fence, which the frozen daemon holds and cannot lose; the daemon, resumed, makes no further Docker call once its lock
 * lapsed, and gives the fence back.
 *
 * <p>Evidence from outside mesh: for every held interval (the held node's life, from ZooKeeper's transaction log) the
 * held container gets no create, destroy, rename, kill or second start from anyone, at most its window's stop before
 * the step and one start after the step's death (Docker's events; the history checker's rule, {@link HeldIntervals}).
 * Afterwards the daemon converges: r2 applied, one container per name, nothing left under {@code .mesh-next} or
 * {@code .mesh-prev}.
 *
 * <p>The registry ignores SIGTERM only at its first stop (it leaves a mark on its volume), so that the window's and
 * the final apply's stops are quick.
 *
 * <p>On the code before commit 00dc6f7 the window took the lapsed lock and held the registry at once; the daemon, once
 * its stop returned, went on with its recreate without a session check: it renamed the held container to
 * {@code .mesh-prev}, started its replacement under the held name and destroyed the held container, all during the
 * window (failure model row 18). This test catches those events inside the held interval.
 */
@Tag("slow")
class LapsedLockTest {
    private static final int STOP_SECONDS = 25;

    @RegisterExtension
    final FaultFixture fx = new FaultFixture();

    @Test
    void aDaemonFrozenMidRecreatePastItsSessionTouchesNothingItsSuccessorHolds() throws Exception {
        String firstStopIgnored = "if [ -f /data/stopped-once ]; then trap 'exit 0' TERM; else trap 'touch /data/stopped-once' TERM; fi;"
                + " while true; do sleep 1; done";
        fx.setDesired(fx.yaml("one", "unless-stopped", sleepStep(5), "1m", firstStopIgnored, STOP_SECONDS), "r1");
        ChildJvm daemon = fx.daemon("daemon", "1s");
        fx.awaitApplied("r1", Duration.ofSeconds(60));
        String oldId = fx.inspect(fx.registry).getId();
        long zxid = fx.zxidNow();
        Instant t0 = Instant.now();

        fx.setDesired(fx.yaml("two", "unless-stopped", sleepStep(5), "1m", firstStopIgnored, STOP_SECONDS), "r2");
        // the daemon's recreate is stopping the old registry: SIGTERM sent (and ignored)
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
                .until(() -> fx.eventsOf(oldId, t0).stream().anyMatch(e -> "kill".equals(io.mesh.testing.TestDocker.action(e))));
        daemon.pause();
        Instant frozen = Instant.now();
        ChildJvm w;
        try {
            w = fx.window("window");
            // the daemon's session expires (its lock child and agent node go) and the window takes the module lock
            await().atMost(MeshZk.SESSION_TIMEOUT.plusSeconds(30)).pollInterval(Duration.ofMillis(100)).ignoreExceptions()
                    .until(() -> fx.lockChildPids().equals(List.of(w.pid())));
            assertThat(fx.exists(fx.agentNode())).as("the frozen daemon's agent node").isFalse();
            System.out.printf("daemon frozen at %s; window %d holds the module lock at %s; the fence holder: %s%n", frozen, w.pid(),
                    Instant.now(), fenceHolder());
        } finally {
            daemon.resume();
        }
        Instant resumed = Instant.now();

        int windowExit = w.awaitExit(Duration.ofSeconds(120));

        // the evidence first: Docker's events inside the held interval from ZooKeeper's transaction log
        List<String> violations = new ArrayList<>();
        List<HeldIntervals.Held> held = fx.checkHeldIntervals(zxid, violations);
        String timeline = DockerEvents.describe(fx.events.since(t0));
        System.out.println("held intervals: " + held + "\nviolations: " + violations + "\nevents:\n" + timeline);
        assertThat(held).as("held intervals of the registry").hasSize(1);
        assertThat(violations).as("the held container touched by another hand; events:\n%s\ndaemon log:\n%s", timeline,
                tail(daemon.output(), 40)).isEmpty();

        assertThat(windowExit).as("window exit; log:\n%s", w.output()).isZero();
        WindowResult r = result(w);
        assertThat(r.held()).containsExactly(fx.registry);

        ApplyReport applied = fx.awaitApplied("r2", Duration.ofSeconds(90));
        fx.awaitConverged("two", Duration.ofSeconds(30));
        List<String> all = new ArrayList<>();
        for (String id : fx.docker.containersWithLabel(Labels.MODULE, fx.module)) all.add(fx.inspect(id).getName());
        assertThat(all).as("every container of the module").hasSize(2).noneMatch(n -> n.contains(".mesh-"));
        assertThat(daemon.isAlive()).isTrue();
        System.out.println("r2 applied at " + applied.finishedAt() + "; daemon resumed at " + resumed);
    }

    /** @return who holds the module's host fence, as written beside it, or {@code none} */
    private String fenceHolder() {
        try {
            return Files.readString(fx.stateDir.resolve("fences").resolve(fx.module + ".holder")).strip();
        } catch (Exception e) {
            return "none (" + e.getClass().getSimpleName() + ")";
        }
    }

    private static String tail(String s, int n) {
        List<String> lines = s.lines().filter(l -> !l.contains(" DEBUG ")).toList();
        return String.join("\n", lines.subList(Math.max(0, lines.size() - n), lines.size()));
    }
}
