package io.mesh.window;

import com.github.dockerjava.api.model.Event;
import io.mesh.docker.ContainerRuntime;
import io.mesh.docker.DockerEngine;
import io.mesh.docker.Labels;
import io.mesh.docker.StaleTaskException;
import io.mesh.testing.ApplierExtension;
import io.mesh.testing.DockerEvents;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.WindowResult;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Giving held containers back after the step started stops nothing (FleetHistoryIT, seed -4882575148499177038): a
 * window whose process was killed after it put a restart policy back but before it started the container found it
 * started by dockerd (which had restarted meanwhile), and the recovery stopped it again to "settle" a stop that had
 * long returned. Once the step has started every stop has returned: the journal says so, and closing it stops nothing.
 * Real engine, real ZooKeeper; evidence from Docker's events.
 */
@Tag("slow") // windows with a 4 s step on the real engine: the full run, not --fast
class GiveBackTest {
    private static final String HOST = ApplierExtension.HOST;
    @RegisterExtension
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    final ApplierExtension here = new ApplierExtension(zk, "gb");
    private DockerEngine docker;
    private String module;

    @BeforeEach
    void setUp() {
        docker = here.docker();
        module = here.module();
    }

    @Test
    void onceTheStepRunsTheJournalHasNoStopInFlight() throws Exception {
        zk.setDesired("module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n"
                + "  web:\n    image: " + BUSYBOX + "\n    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "    network: none\n    restart: always\n    stop-timeout: 2s\n"
                + "schedules:\n  gc:\n    cron: \"30 3 * * *\"\n    while-stopped: [web]\n"
                + "    step:\n      image: " + BUSYBOX + "\n      command: [sh, -c, \"sleep 4\"]\n    timeout: 1m\n", "r1");
        WindowJournal journal = here.journal();
        here.applier().apply(module, () -> false);
        CompletableFuture<WindowResult> window = CompletableFuture.supplyAsync(() -> {
            try {
                return here.windows().run(module, "gc", Duration.ofSeconds(5));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        WindowJournal.Entry during = await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50))
                .until(() -> journal.read(module).orElse(null),
                        e -> e != null && e.openedStages().contains(WindowStage.STEP_STARTED));
        assertThat(during.held()).isNotEmpty().allSatisfy(h -> assertThat(h.stopKnownSent()).as(h.container()).isFalse());
        assertThat(window.get(30, TimeUnit.SECONDS).outcome()).hasToString("succeeded");
    }

    @Test
    void closingAHeldStageWithNoStopInFlightStopsNothingThatRuns() throws Exception {
        String id = web();
        docker.client().startContainerCmd(id).exec(); // started by dockerd as it came back, say
        WindowJournal.Entry entry = journalled(id, false);
        closeStoppingNothing(entry, "stops of a running held container");
        assertGivenBack(id);
    }

    /**
     * FleetHistoryIT seed 4273672589570179350: a recovery settled a stop the window's process had sent before it was
     * killed, started the container again, and was itself killed before it closed the held stage; the next recovery
     * found the same journal, with the stop still "sent", and stopped the running container a second time. Once a
     * settling stop has returned, the journal says so before the container is started.
     */
    @Test
    void aGiveBackCutShortAfterItsStartIsFinishedWithoutStoppingAgain() throws Exception {
        String id = web();
        docker.updateRestartPolicy(id, "no");
        journalled(id, true); // the window's process asked Docker to stop it, and died before the stop returned
        WindowJournal journal = here.journal();
        // the first recovery dies once its start of the held container has returned
        AtomicBoolean startedIt = new AtomicBoolean();
        ContainerRuntime dying = TestDocker.intercepting(docker, (method, args, proceed) -> {
            if (startedIt.get()) throw new Killed();
            try {
                return proceed.call();
            } finally {
                if (method.getName().equals("start")) startedIt.set(true);
            }
        });
        assertThatThrownBy(() -> new WindowClosing(dying, journal, journal.read(module).orElseThrow(), c -> null).closeAll())
                .isInstanceOf(Killed.class);
        assertThat(docker.isRunning(id)).as("started by the first recovery").isTrue();
        WindowJournal.Entry left = journal.read(module).orElseThrow();
        assertThat(left.openedStages()).contains(WindowStage.HELD);
        closeStoppingNothing(left, "stops by the second recovery of a container the first gave back");
        assertGivenBack(id);
    }

    /**
     * FleetHistoryIT seed -1035554877928643886: a dockerd restart cut the window's start of its held container, and
     * Docker refused every start of it after that ({@code task ID: already exists}, three minutes, across another
     * restart); the window and then its recovery retried for 90 s each. Now the refusal, seen twice, releases it at
     * once, and the apply that follows makes a new container under its name. Docker's state cannot be made on demand
     * (a task containerd keeps without its container), so its answer is given to the closing's start alone; the rest
     * is the real engine.
     */
    @Test
    void aContainerDockerWillNotStartAgainIsReleasedAtOnceAndTheNextApplyMakesItAnew() throws Exception {
        zk.setDesired("module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n"
                + "  web:\n    image: " + BUSYBOX + "\n    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "    network: none\n    restart: always\n", "r1");
        here.applier().apply(module, () -> false);
        String id = docker.idByName(module + "-web");
        docker.updateRestartPolicy(id, "no"); // what the window did, then stopped it
        docker.stop(id, 2);
        WindowJournal.Entry entry = journalled(id, false);
        ContainerRuntime refusing = TestDocker.intercepting(docker, (method, args, proceed) -> {
            if (method.getName().equals("start") && id.equals(args[0])) {
                throw new StaleTaskException("container " + id + " cannot be started again: Status 500: "
                        + "{\"message\":\"task " + id + ": already exists\"}", null);
            }
            return proceed.call();
        });
        long t0 = System.nanoTime();
        WindowClosing closing = new WindowClosing(refusing, here.journal(), entry, c -> null).closeAll();
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        assertThat(closing.error()).contains(module + "-web did not start again", "already exists", "the next apply recreates it");
        assertThat(took).as("released without retrying for %s", WindowClosing.START_RETRY).isLessThan(Duration.ofSeconds(20));
        assertThat(here.journal().read(module)).isEmpty();
        assertThat(docker.restartPolicy(id)).as("its policy put back all the same").isEqualTo("always");

        ApplyReport r = here.applier().apply(module, () -> false);
        assertThat(r.outcome()).hasToString("applied");
        String now = docker.idByName(module + "-web");
        assertThat(now).as("a new container under its name").isNotNull().isNotEqualTo(id);
        assertThat(docker.isRunning(now)).isTrue();
        assertThat(docker.client().listContainersCmd().withShowAll(true).withIdFilter(List.of(id)).exec())
                .as("the old one removed").isEmpty();
    }

    /** @return the id of the module's container {@code web}, created, not started, restart policy {@code no} */
    private String web() {
        return docker.client().createContainerCmd(BUSYBOX).withName(module + "-web").withCmd(TestDocker.SERVE)
                .withLabels(Map.of(Labels.MODULE, module, Labels.CONTAINER, "web")).exec().getId();
    }

    /** @return the journal entry, written, of a window holding {@code web} (policy {@code always} to put back) */
    private WindowJournal.Entry journalled(String id, boolean stopSent) {
        Instant since = Instant.now();
        WindowJournal.Entry entry = new WindowJournal.Entry(HOST, module, "gc", "w-test", since, since.plusSeconds(60),
                ProcessRef.current("gone"), since, module + ".gc.w-test",
                List.of(new WindowJournal.HeldContainer(module + "-web", id, "always", stopSent)),
                new ArrayList<>(List.of(WindowStage.STEP_CREATED, WindowStage.HELD)));
        here.journal().write(entry);
        return entry;
    }

    /** Closes the entry's stages on the real engine; Docker's events of the closing show no kill, stop or die. */
    private void closeStoppingNothing(WindowJournal.Entry entry, String what) throws Exception {
        try (DockerEvents events = DockerEvents.record(module)) {
            Instant from = Instant.now();
            WindowClosing closing = new WindowClosing(docker, here.journal(), entry, c -> null).closeAll();
            assertThat(closing.error()).isNull();
            events.settle();
            List<Event> touched = events.since(from).stream()
                    .filter(e -> List.of("kill", "stop", "die").contains(e.getAction())).toList();
            assertThat(touched).as("%s:\n%s", what, DockerEvents.describe(touched)).isEmpty();
        }
    }

    private void assertGivenBack(String id) {
        assertThat(docker.isRunning(id)).isTrue();
        assertThat(docker.restartPolicy(id)).isEqualTo("always");
        assertThat(here.journal().read(module)).isEmpty();
    }

    /** The process running a closing dies: nothing after it runs, not even a finally's journal write. */
    private static final class Killed extends Error {
        Killed() { super("killed", null, false, false); }
    }
}
