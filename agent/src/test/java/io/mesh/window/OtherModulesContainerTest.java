package io.mesh.window;

import com.github.dockerjava.api.model.Event;
import com.github.dockerjava.api.model.HostConfig;
import io.mesh.apply.Applier;
import io.mesh.docker.DockerEngine;
import io.mesh.docker.Labels;
import io.mesh.testing.DockerEvents;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.WindowResult;
import io.mesh.zk.MeshStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 11 rule 7, the agent's side: no apply or window acts on a container whose {@code mesh.module} label names
 * another module, even when it carries the Docker name this module's container would have (a push that makes two
 * names equal is refused at the coordinator; this covers what was there before, or made by hand). Evidence: Docker's
 * events for the other module's container, recorded live. Real engine, real ZooKeeper.
 */
class OtherModulesContainerTest {
    private static final String HOST = "host-a";
    @RegisterExtension
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    private DockerEngine docker;
    private String module;
    private String other;
    private Path stateDir;

    @BeforeEach
    void setUp() throws Exception {
        docker = TestDocker.engine();
        module = TestDocker.uniqueModule("om");
        other = module + "-x";
        stateDir = Files.createTempDirectory("mesh-agent");
    }

    @AfterEach
    void tearDown() {
        TestDocker.clean(module);
        TestDocker.clean(other);
    }

    /** A running container named {@code <module>-web} that belongs to {@link #other}. */
    private String foreignWeb() {
        String id = docker.client().createContainerCmd(BUSYBOX).withName(module + "-web")
                .withCmd(TestDocker.SERVE).withLabels(Map.of(Labels.MODULE, other, Labels.CONTAINER, "web"))
                .withHostConfig(HostConfig.newHostConfig().withNetworkMode("none")).exec().getId();
        docker.client().startContainerCmd(id).exec();
        return id;
    }

    private String yaml() {
        return "module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n"
                + "  web:\n    image: " + BUSYBOX + "\n    command: [sh, -c, \"sleep 3600\"]\n    network: none\n"
                + "schedules:\n  gc:\n    cron: \"30 3 * * *\"\n    while-stopped: [web]\n"
                + "    step:\n      image: " + BUSYBOX + "\n      command: [\"true\"]\n    timeout: 1m\n";
    }

    @Test
    void neitherAWindowNorAnApplyTouchesAnotherModulesContainerUnderThisModulesName() throws Exception {
        String foreign = foreignWeb();
        zk.setDesired(yaml(), "r1");
        MeshStore store = new MeshStore(zk.client(), zk.paths());
        WindowJournal journal = new WindowJournal(stateDir);
        ProcessRef me = ProcessRef.current("mesh-agent (test)");
        try (DockerEvents events = DockerEvents.record(other::equals)) {
            Instant from = Instant.now(); // the recorder also replays the container's own create and start
            WindowResult w = new WindowRunner(store, docker, HOST, me, journal).run(module, "gc", Duration.ofSeconds(5));
            assertThat(w.held()).as("held by the window %s", w).isEmpty();

            ApplyReport r = new Applier(store, docker, HOST, me, Duration.ofSeconds(2), journal).apply(module, () -> false);
            assertThat(r.outcome()).as("report %s", r).isEqualTo(ApplyOutcome.FAILED);

            events.settle();
            List<Event> touched = events.since(from);
            assertThat(touched).as("Docker events of the other module's container:\n%s", DockerEvents.describe(touched)).isEmpty();
        }
        assertThat(docker.isRunning(foreign)).isTrue();
        assertThat(docker.labels(foreign)).containsEntry(Labels.MODULE, other);
    }
}
