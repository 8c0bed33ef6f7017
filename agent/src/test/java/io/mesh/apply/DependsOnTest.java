package io.mesh.apply;

import com.github.dockerjava.api.model.Event;
import io.mesh.docker.DockerEngine;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.window.WindowJournal;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.ApplyReport.ContainerResult;
import io.mesh.wire.ContainerAction;
import io.mesh.wire.ProcessRef;
import io.mesh.zk.MeshStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code depends-on} inside a module, against the real engine: the order is read from Docker's events, not from the
 * report.
 */
@Tag("slow") // waits out readiness
class DependsOnTest {
    private static final String SERVE = "command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]";

    @RegisterExtension
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    private DockerEngine docker;
    private Applier applier;
    private String module;

    @BeforeEach
    void setUp() throws Exception {
        docker = TestDocker.engine();
        module = TestDocker.uniqueModule("dep");
        applier = new Applier(new MeshStore(zk.client(), zk.paths()), docker, "host-a", ProcessRef.current("test"), Duration.ofSeconds(2),
                new WindowJournal(Files.createTempDirectory("mesh-state")));
    }

    @AfterEach
    void tearDown() {
        TestDocker.clean(module);
    }

    /** Three containers (so they are changed at once on a pool): web and worker need db healthy, listed before it. */
    private String yaml(String dbTest) {
        String c = "    image: " + BUSYBOX + "\n    network: none\n    stop-timeout: 1s\n    " + SERVE + "\n";
        return "module: " + module + "\nhosts: [host-a]\ncontainers:\n"
                + "  web:\n" + c + "    depends-on: {db: {condition: healthy}}\n    ready: {min-healthy: 0s}\n"
                + "  worker:\n" + c + "    depends-on: [db]\n    ready: {min-healthy: 0s}\n"
                + "  db:\n" + c + "    healthcheck: {test: [CMD, \"" + dbTest + "\"], interval: 1s, timeout: 1s, retries: 1}\n"
                + "    ready: {min-healthy: 1s, deadline: 8s}\n";
    }

    @Test
    void dependentsAreCreatedOnlyAfterTheirDependencyIsReadyAndNotAtAllWhenItFails() throws Exception {
        Instant from = Instant.now();
        zk.setDesired(yaml("true"), "r1");
        ApplyReport r = applier.apply(module, () -> false);
        assertThat(r.outcome()).as("%s", r).isEqualTo(ApplyOutcome.APPLIED);
        List<Event> events = TestDocker.events(module, from, Instant.now());
        long dbHealthy = first(events, module + "-db", "health_status: healthy");
        long webCreated = first(events, module + "-web", "create");
        long workerCreated = first(events, module + "-worker", "create");
        assertThat(webCreated).as("web is created after db is healthy (and ready)").isGreaterThan(dbHealthy);
        assertThat(workerCreated).as("worker is created after db's apply is done").isGreaterThan(dbHealthy);

        // A new push whose db never gets healthy: db is reverted, and its dependents are not recreated (they run on).
        String webId = id(r, "web");
        Instant from2 = Instant.now();
        zk.setDesired(yaml("false").replace("    depends-on: [db]\n", "    depends-on: [db]\n    env: {V: \"2\"}\n")
                .replace("    depends-on: {db: {condition: healthy}}\n", "    depends-on: {db: {condition: healthy}}\n    env: {V: \"2\"}\n"), "r2");
        ApplyReport r2 = applier.apply(module, () -> false);
        assertThat(r2.outcome()).isEqualTo(ApplyOutcome.FAILED);
        assertThat(result(r2, "db").action()).isEqualTo(ContainerAction.REVERTED);
        assertThat(result(r2, "web").action()).isEqualTo(ContainerAction.FAILED);
        assertThat(String.join(" ", result(r2, "web").reasons())).contains("not recreated", "depends on db");
        List<Event> later = TestDocker.events(module, from2, Instant.now());
        assertThat(later.stream().filter(e -> (module + "-web").equals(TestDocker.name(e)) || (module + "-web.mesh-next").equals(TestDocker.name(e)))
                .map(TestDocker::action).filter(a -> List.of("create", "kill", "stop", "destroy").contains(a)).toList())
                .as("web is not touched while db's recreate fails").isEmpty();
        assertThat(docker.client().inspectContainerCmd(webId).exec().getState().getRunning()).isTrue();
    }

    private static long first(List<Event> events, String name, String action) {
        return events.stream().filter(e -> name.equals(TestDocker.name(e)) && action.equals(TestDocker.action(e)))
                .mapToLong(Event::getTimeNano).min().orElseThrow(() -> new AssertionError("no " + action + " of " + name + " in " + events));
    }

    private static ContainerResult result(ApplyReport r, String name) {
        return r.containers().stream().filter(c -> c.name().equals(name)).findFirst().orElseThrow();
    }

    private static String id(ApplyReport r, String name) { return result(r, name).id(); }
}
