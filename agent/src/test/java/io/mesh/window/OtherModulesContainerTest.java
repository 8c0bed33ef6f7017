package io.mesh.window;

import com.github.dockerjava.api.model.Event;
import com.github.dockerjava.api.model.HostConfig;
import io.mesh.docker.DockerEngine;
import io.mesh.docker.Labels;
import io.mesh.testing.ApplierExtension;
import io.mesh.testing.DockerEvents;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.WindowResult;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Another module's container, on the agent's side: no apply or window acts on a container whose {@code mesh.module} label names
 * another module, even when it carries the Docker name this module's container would have (a push that makes two
 * names equal is refused at the coordinator; this covers what was there before, or made by hand). Evidence: Docker's
 * events for the other module's container, recorded live. Real engine, real ZooKeeper.
 */
class OtherModulesContainerTest {
    private static final String HOST = ApplierExtension.HOST;
    @RegisterExtension
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    final ApplierExtension here = new ApplierExtension(zk, "om");
    private DockerEngine docker;
    private String module;
    private String other;

    @BeforeEach
    void setUp() {
        docker = here.docker();
        module = here.module();
        other = module + "-x";
    }

    @AfterEach
    void tearDown() {
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
        try (DockerEvents events = DockerEvents.record(other::equals)) {
            Instant from = Instant.now(); // the recorder also replays the container's own create and start
            WindowResult w = here.windows().run(module, "gc", Duration.ofSeconds(5));
            assertThat(w.held()).as("held by the window %s", w).isEmpty();

            ApplyReport r = here.applier().apply(module, () -> false);
            assertThat(r.outcome()).as("report %s", r).isEqualTo(ApplyOutcome.FAILED);

            events.settle();
            List<Event> touched = events.since(from);
            assertThat(touched).as("Docker events of the other module's container:\n%s", DockerEvents.describe(touched)).isEmpty();
        }
        assertThat(docker.isRunning(foreign)).isTrue();
        assertThat(docker.labels(foreign)).containsEntry(Labels.MODULE, other);
    }
}
