package io.mesh.hold;

import com.github.dockerjava.api.model.Event;
import io.mesh.curator.HeldRegistry;
import io.mesh.docker.DockerEngine;
import io.mesh.testing.AgentDaemonExtension;
import io.mesh.testing.DockerEvents;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.ApplyReport.ContainerResult;
import io.mesh.wire.ContainerAction;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.Times;
import io.mesh.wire.WindowOutcome;
import io.mesh.wire.WindowResult;
import io.mesh.zk.MeshStore;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Operator holds ({@code mesh hold}; SPEC.md "Operator holds", decision 0015) on a real Docker engine and a real
 * ZooKeeper: the persistent held node the coordinator writes ({@link HeldRegistry#hold}, written here directly) is
 * obeyed by every apply exactly as a window's hold, survives an agent restart, stops the container with {@code stop},
 * ends at its {@code until} by itself, and makes a window of the container {@code skipped}. What Docker did is read
 * from Docker's events, not from mesh's report.
 */
@Tag("slow")
class OperatorHoldTest {
    private static final String HOST = "host-a";
    private static final Set<String> TOUCHES = Set.of("create", "destroy", "stop", "kill", "die", "start", "rename");
    @RegisterExtension
    @Order(1)
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    /** Reconciles every 10 minutes: nothing here may depend on a reconcile. */
    @RegisterExtension
    @Order(2)
    final AgentDaemonExtension agent = new AgentDaemonExtension(zk, HOST);
    private final DockerEngine docker = TestDocker.engine();
    private final String module = TestDocker.uniqueModule("oh");
    private final String app = module + "-app";
    private final String web = module + "-web";

    @AfterEach
    void tearDown() {
        agent.close(); // before its containers go, so that it does not make them again
        TestDocker.clean(module);
    }

    private String manifest(String mode) {
        String serve = "    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "    env: {MODE: \"" + mode + "\"}\n    network: host\n    stop-timeout: 2s\n";
        return "module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n"
                + "  app:\n    image: " + BUSYBOX + "\n" + serve
                + "  web:\n    image: " + BUSYBOX + "\n" + serve
                + "schedules:\n  sweep:\n    cron: \"30 3 * * *\"\n    timezone: UTC\n    while-stopped: [app]\n"
                + "    step:\n      image: " + BUSYBOX + "\n      command: [sh, -c, \"echo swept\"]\n    timeout: 1m\n";
    }

    private ApplyReport report() throws Exception {
        return new MeshStore(zk.client(), zk.paths()).report(HOST, module);
    }

    private ApplyReport awaitReport(ApplyOutcome outcome, String revision, Duration within) {
        await().atMost(within).pollInterval(Duration.ofMillis(100)).until(() -> {
            ApplyReport r = report();
            return r != null && r.outcome() == outcome && revision.equals(r.revision());
        });
        try {
            return report();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** @return the first report, applied, of an apply that began after {@code t} */
    private ApplyReport awaitReportAfter(Instant t) {
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).until(() -> {
            ApplyReport r = report();
            return r != null && r.outcome() == ApplyOutcome.APPLIED && r.startedAt().isAfter(t);
        });
        try {
            return report();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private HeldRecord hold(Instant until, boolean stop) throws Exception {
        Instant now = Times.now();
        HeldRecord h = HeldRecord.operator(HOST, module, app, null, ProcessRef.current("mesh-coordinator (test)"),
                new HeldRecord.OperatorHold("alice", "disk swap OPS-12", now, until, stop ? Boolean.TRUE : null, null));
        HeldRegistry.hold(zk.client(), zk.paths(), h);
        return h;
    }

    private boolean running(String name) {
        return Boolean.TRUE.equals(docker.inspect(name).getState().getRunning());
    }

    /**
     * @return the events that change a container of {@code name} (create, stop, start, destroy ...), under its name
     *         or the {@code .mesh-next}/{@code .mesh-prev} names a recreate gives it
     */
    private static List<String> touches(DockerEvents events, String name) {
        return events.all().stream().filter(e -> TestDocker.name(e) != null
                        && (TestDocker.name(e).equals(name) || TestDocker.name(e).startsWith(name + ".")))
                .map(TestDocker::action).filter(a -> a != null && TOUCHES.contains(a.split(":")[0])).toList();
    }

    private static ContainerResult result(ApplyReport r, String container) {
        return r.containers().stream().filter(c -> container.equals(c.container())).findFirst().orElseThrow();
    }

    /**
     * A hold blocks a push's apply on its container (same id, no Docker event of it) while the module's other
     * container is applied; the node is persistent and still obeyed by a new agent; released, the next apply lands.
     */
    @Test
    void aHoldBlocksAPushOnItsContainerSurvivesAnAgentRestartAndReleaseLandsThePush() throws Exception {
        zk.setDesired(manifest("one"), "r1");
        awaitReport(ApplyOutcome.APPLIED, "r1", Duration.ofSeconds(60));
        String appId = docker.inspect(app).getId(), webId = docker.inspect(web).getId();
        hold(null, false);
        Stat st = zk.client().checkExists().forPath(zk.paths().held(HOST, app));
        assertThat(st.getEphemeralOwner()).as("an operator hold is persistent, tied to no session").isZero();

        try (DockerEvents events = DockerEvents.record(module)) {
            zk.setDesired(manifest("two"), "r2");
            ApplyReport r2 = awaitReport(ApplyOutcome.DEFERRED, "r2", Duration.ofSeconds(60));
            assertThat(r2.window()).as("an operator hold is no window").isNull();
            assertThat(result(r2, app).action()).isEqualTo(ContainerAction.HELD);
            assertThat(result(r2, app).reasons()).singleElement().asString()
                    .startsWith("held by operator alice: disk swap OPS-12").contains("until released");
            assertThat(result(r2, web).action()).isEqualTo(ContainerAction.RECREATED);
            assertThat(docker.inspect(web).getId()).as("the other container was applied").isNotEqualTo(webId);
            assertThat(docker.inspect(app).getId()).isEqualTo(appId);
            assertThat(running(app)).as("without stop, the held container keeps running").isTrue();
            // Deferred by an operator hold alone is not retried on a back-off (2 s, 4 s ...): the hold's end applies it.
            int version = zk.client().checkExists().forPath(zk.paths().report(HOST, module)).getVersion();
            Thread.sleep(7_000);
            assertThat(zk.client().checkExists().forPath(zk.paths().report(HOST, module)).getVersion()).as("no report rewritten")
                    .isEqualTo(version);

            // A new agent (its own state dir) meets the same persistent hold and obeys it.
            agent.close();
            assertThat(zk.client().checkExists().forPath(zk.paths().held(HOST, app))).as("still held with no agent").isNotNull();
            agent.start();
            zk.setDesired(manifest("three"), "r3");
            ApplyReport r3 = awaitReport(ApplyOutcome.DEFERRED, "r3", Duration.ofSeconds(60));
            assertThat(result(r3, app).action()).isEqualTo(ContainerAction.HELD);
            assertThat(docker.inspect(app).getId()).isEqualTo(appId);
            events.settle();
            assertThat(touches(events, app)).as("Docker saw nothing done to the held container: %s", DockerEvents.describe(events.all())).isEmpty();
            assertThat(touches(events, web)).contains("create", "destroy");
        }

        HeldRecord released = HeldRegistry.release(zk.client(), zk.paths(), HOST, app);
        assertThat(released.hold().by()).isEqualTo("alice");
        // No push, no reconcile (10 min): the release's watch applies the module.
        ApplyReport r3 = awaitReport(ApplyOutcome.APPLIED, "r3", Duration.ofSeconds(30));
        assertThat(result(r3, app).action()).isEqualTo(ContainerAction.RECREATED);
        assertThat(docker.inspect(app).getId()).isNotEqualTo(appId);
        assertThat(docker.inspect(app).getConfig().getEnv()).contains("MODE=three");
    }

    /** {@code stop}: the agent stops it once, an apply does not start it; released, the next apply runs it again. */
    @Test
    void aStopHoldStopsTheContainerAndNoApplyStartsItUntilReleased() throws Exception {
        zk.setDesired(manifest("one"), "r1");
        awaitReport(ApplyOutcome.APPLIED, "r1", Duration.ofSeconds(60));
        String appId = docker.inspect(app).getId();
        try (DockerEvents events = DockerEvents.record(module)) {
            hold(null, true);
            await().atMost(Duration.ofSeconds(30)).until(() -> !running(app));
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                HeldRecord h = Json.read(zk.client().getData().forPath(zk.paths().held(HOST, app)), HeldRecord.class);
                return h.hold().stoppedAt() != null;
            });
            assertThat(docker.inspect(app).getId()).as("stopped, not removed").isEqualTo(appId);
            assertThat(docker.inspect(app).getHostConfig().getRestartPolicy().getName()).as("not started by Docker while held")
                    .isIn("no", "", null);

            zk.setDesired(manifest("two"), "r2");
            ApplyReport r2 = awaitReport(ApplyOutcome.DEFERRED, "r2", Duration.ofSeconds(60));
            assertThat(result(r2, app).action()).isEqualTo(ContainerAction.HELD);
            // A new agent, and another apply of the module: the container is neither stopped again nor started.
            agent.close();
            agent.start();
            agent.daemon().requestApply(module);
            Thread.sleep(3_000);
            events.settle();
            List<String> seen = touches(events, app).stream().filter(a -> !a.equals("kill")).toList();
            assertThat(seen).as("one stop, once: %s", DockerEvents.describe(events.all())).containsExactly("die", "stop");
            assertThat(running(app)).isFalse();
            assertThat(docker.inspect(app).getId()).isEqualTo(appId);
        }

        HeldRegistry.release(zk.client(), zk.paths(), HOST, app);
        ApplyReport r2 = awaitReport(ApplyOutcome.APPLIED, "r2", Duration.ofSeconds(30));
        assertThat(result(r2, app).action()).isEqualTo(ContainerAction.RECREATED);
        assertThat(running(app)).isTrue();
    }

    /**
     * Released with no push in between, a {@code --stop} hold's container is started again as it was: the same id,
     * Docker's events show a start and no create or destroy, the report says {@code unchanged} and why, and its spec's
     * restart policy is back (decision 33). Anyone's start since the hold's stop makes it a stop like any other: the
     * apply recreates it.
     */
    @Test
    void aReleasedStopHoldStartsTheSameContainerUnlessItWasStartedSince() throws Exception {
        zk.setDesired(manifest("one").replace("    stop-timeout: 2s\n", "    stop-timeout: 2s\n    restart: unless-stopped\n"), "r1");
        awaitReport(ApplyOutcome.APPLIED, "r1", Duration.ofSeconds(60));
        String appId = docker.inspect(app).getId();
        hold(null, true);
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            HeldRecord h = Json.read(zk.client().getData().forPath(zk.paths().held(HOST, app)), HeldRecord.class);
            return h.hold().stoppedAt() != null;
        });
        assertThat(running(app)).isFalse();
        try (DockerEvents events = DockerEvents.record(module)) {
            Instant released = Instant.now();
            HeldRegistry.release(zk.client(), zk.paths(), HOST, app);
            await().atMost(Duration.ofSeconds(30)).until(() -> running(app));
            ApplyReport r = awaitReportAfter(released);
            events.settle();
            assertThat(docker.inspect(app).getId()).as("the same container").isEqualTo(appId);
            List<String> since = events.since(released).stream().filter(e -> app.equals(TestDocker.name(e)) || (TestDocker.name(e) != null
                    && TestDocker.name(e).startsWith(app + "."))).map(TestDocker::action).filter(a -> a != null && TOUCHES.contains(a.split(":")[0])).toList();
            assertThat(since).as("Docker's events: %s", DockerEvents.describe(events.all())).containsExactly("start");
            assertThat(result(r, app).action()).isEqualTo(ContainerAction.UNCHANGED);
            assertThat(result(r, app).reasons()).anySatisfy(x -> assertThat(x).isEqualTo(
                    "started again as it was: stopped by alice's hold (--stop), which ended"));
            assertThat(docker.inspect(app).getHostConfig().getRestartPolicy().getName()).isEqualTo("unless-stopped");
        }

        // Held and stopped again; started and stopped by hand meanwhile: no longer the hold's stop.
        hold(null, true);
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            HeldRecord h = Json.read(zk.client().getData().forPath(zk.paths().held(HOST, app)), HeldRecord.class);
            return h.hold().stoppedAt() != null;
        });
        docker.client().startContainerCmd(appId).exec();
        docker.client().stopContainerCmd(appId).withTimeout(2).exec();
        Instant releasedAgain = Instant.now();
        HeldRegistry.release(zk.client(), zk.paths(), HOST, app);
        await().atMost(Duration.ofSeconds(30)).until(() -> running(app));
        ApplyReport again = awaitReportAfter(releasedAgain);
        assertThat(result(again, app).action()).isEqualTo(ContainerAction.RECREATED);
        assertThat(docker.inspect(app).getId()).isNotEqualTo(appId);
        assertThat(new HoldStops(agent.stateDir()).read(module)).as("no stop left behind").isEmpty();
    }

    /**
     * A container that had exited by itself before an operator's {@code --stop} was not stopped by the hold: after the
     * release it is recreated, as SPEC.md "Apply" says of a container that is not running (decision 33).
     */
    @Test
    void aContainerThatDiedBeforeAStopHoldIsRecreatedAfterTheRelease() throws Exception {
        zk.setDesired("module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n  app:\n    image: " + BUSYBOX + "\n"
                + "    command: [sh, -c, \"sleep 2; exit 3\"]\n    network: host\n    restart: \"no\"\n    ready: {min-healthy: 0s}\n", "r1");
        awaitReport(ApplyOutcome.APPLIED, "r1", Duration.ofSeconds(60));
        String appId = docker.inspect(app).getId();
        await().atMost(Duration.ofSeconds(20)).until(() -> !running(app));
        hold(null, true);
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            HeldRecord h = Json.read(zk.client().getData().forPath(zk.paths().held(HOST, app)), HeldRecord.class);
            return h.hold().stoppedAt() != null;
        });
        assertThat(new HoldStops(agent.stateDir()).read(module)).as("the hold stopped nothing").isEmpty();
        Instant released = Instant.now();
        HeldRegistry.release(zk.client(), zk.paths(), HOST, app);
        ApplyReport r = awaitReportAfter(released);
        assertThat(result(r, app).action()).isEqualTo(ContainerAction.RECREATED);
        assertThat(docker.inspect(app).getId()).isNotEqualTo(appId);
    }

    /** {@code for 3s}: the hold ends by itself, its node is deleted by the agent, and the push lands with no new one. */
    @Test
    void aHoldForThreeSecondsExpiresAndThePushLandsWithNoNewPush() throws Exception {
        zk.setDesired(manifest("one"), "r1");
        awaitReport(ApplyOutcome.APPLIED, "r1", Duration.ofSeconds(60));
        String appId = docker.inspect(app).getId();
        Instant until = Times.now().plusSeconds(3);
        hold(until, false);
        zk.setDesired(manifest("two"), "r2");
        ApplyReport r2 = awaitReport(ApplyOutcome.DEFERRED, "r2", Duration.ofSeconds(30));
        assertThat(result(r2, app).reasons()).singleElement().asString().contains("until " + until);
        assertThat(docker.inspect(app).getId()).isEqualTo(appId);

        ApplyReport landed = awaitReport(ApplyOutcome.APPLIED, "r2", Duration.ofSeconds(30));
        assertThat(landed.finishedAt()).isAfterOrEqualTo(until);
        assertThat(result(landed, app).action()).isEqualTo(ContainerAction.RECREATED);
        assertThat(docker.inspect(app).getId()).isNotEqualTo(appId);
        await().atMost(Duration.ofSeconds(10)).until(() -> zk.client().checkExists().forPath(zk.paths().held(HOST, app)) == null);
        // The agent that deleted it says so, once, for webhooks (decision 34).
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(io.mesh.testing.Outboxes.events(zk, HOST))
                .filteredOn(e -> e.type() == io.mesh.wire.EventType.HOLD_ENDED).singleElement().satisfies(e -> {
                    assertThat(e.container()).isEqualTo(app);
                    assertThat(e.module()).isEqualTo(module);
                    assertThat(e.reason()).startsWith("expired (");
                    assertThat(e.until()).isEqualTo(until);
                }));
    }

    /** A window whose while-stopped container an operator holds is skipped: Docker shows no stop, no step. */
    @Test
    void aWindowOfAnOperatorHeldContainerIsSkippedAndStopsNothing() throws Exception {
        zk.setDesired(manifest("one"), "r1");
        awaitReport(ApplyOutcome.APPLIED, "r1", Duration.ofSeconds(60));
        String appId = docker.inspect(app).getId();
        hold(null, false);
        try (DockerEvents events = DockerEvents.record(module)) {
            WindowResult w = agent.daemon().runWindow(module, "sweep").get(1, TimeUnit.MINUTES);
            assertThat(w.outcome()).isEqualTo(WindowOutcome.SKIPPED);
            assertThat(w.outcome().wire()).isEqualTo("skipped");
            assertThat(w.error()).startsWith("held by operator").contains(app, "alice", "disk swap OPS-12");
            assertThat(w.exitCode()).isNull();
            events.settle();
            List<Event> all = events.all();
            assertThat(touches(events, app)).as("%s", DockerEvents.describe(all)).isEmpty();
            assertThat(all).as("no step container either: %s", DockerEvents.describe(all))
                    .noneMatch(e -> TestDocker.name(e) != null && TestDocker.name(e).startsWith(module + ".sweep."));
        }
        assertThat(docker.inspect(app).getId()).isEqualTo(appId);
        assertThat(running(app)).isTrue();
        assertThat(zk.client().checkExists().forPath(zk.paths().window(HOST, module))).as("no window node was written").isNull();
        HeldRecord still = Json.read(zk.client().getData().forPath(zk.paths().held(HOST, app)), HeldRecord.class);
        assertThat(still.operatorHold()).as("the operator's hold is left as it was").isTrue();
    }
}
