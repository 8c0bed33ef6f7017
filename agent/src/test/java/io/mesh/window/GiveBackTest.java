package io.mesh.window;

import com.github.dockerjava.api.model.Event;
import io.mesh.docker.DockerEngine;
import io.mesh.docker.Labels;
import io.mesh.testing.ApplierExtension;
import io.mesh.testing.DockerEvents;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
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

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;
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
        String web = module + "-web";
        String id = docker.client().createContainerCmd(BUSYBOX).withName(web).withCmd(TestDocker.SERVE)
                .withLabels(Map.of(Labels.MODULE, module, Labels.CONTAINER, "web")).exec().getId();
        docker.client().startContainerCmd(id).exec(); // started by dockerd as it came back, say
        WindowJournal journal = here.journal();
        Instant since = Instant.now();
        WindowJournal.Entry entry = new WindowJournal.Entry(HOST, module, "gc", "w-test", since, since.plusSeconds(60),
                ProcessRef.current("gone"), since, module + ".gc.w-test",
                List.of(new WindowJournal.HeldContainer(web, id, "always", false)),
                new ArrayList<>(List.of(WindowStage.STEP_CREATED, WindowStage.HELD)));
        journal.write(entry);
        try (DockerEvents events = DockerEvents.record(module)) {
            Instant from = Instant.now();
            WindowClosing closing = new WindowClosing(docker, journal, entry).closeAll();
            assertThat(closing.error()).isNull();
            events.settle();
            List<Event> touched = events.since(from).stream()
                    .filter(e -> List.of("kill", "stop", "die").contains(e.getAction())).toList();
            assertThat(touched).as("stops of a running held container:\n%s", DockerEvents.describe(touched)).isEmpty();
        }
        assertThat(docker.isRunning(id)).isTrue();
        assertThat(docker.restartPolicy(id)).isEqualTo("always");
        assertThat(journal.read(module)).isEmpty();
    }
}
