package io.mesh.agent;

import com.github.dockerjava.api.model.Event;
import io.mesh.docker.DockerEngine;
import io.mesh.testing.AgentDaemonExtension;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.ContainerAction;
import io.mesh.wire.Json;
import io.mesh.wire.WindowOutcome;
import io.mesh.wire.WindowResult;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A container's hooks (SPEC.md, "The rest of the operator's stack"; decision 38) against the real engine, a real
 * ZooKeeper and a real daemon. The evidence is Docker's: what each hook wrote in its container (read back with the
 * {@code docker} command line's {@code exec}), Docker's own events in dockerd's order (an exec's {@code exec_create},
 * {@code exec_start}, {@code exec_die} beside the container's {@code kill}, {@code stop}, {@code start}), the
 * container's {@code State.StartedAt}, and the processes left in it ({@code ps}).
 */
@Tag("slow") // windows and recreates with readiness waits and hooks that hang to their timeout: the full run
class ContainerHooksTest {
    private static final String HOST = "hooks-a";
    @RegisterExtension
    @Order(1)
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    @Order(2)
    final AgentDaemonExtension agent = new AgentDaemonExtension(zk, HOST);
    private final String module = TestDocker.uniqueModule("hooks");
    private final DockerEngine docker = TestDocker.engine();
    /** A named volume the recreate test's old and new containers share. */
    private final String volume = module + "-hooks";

    @AfterEach
    void tearDown() {
        agent.close();
        TestDocker.clean(module, volume);
    }

    /** A container that serves until SIGTERM, with these lines (its hooks) at container indentation. */
    private static String container(String name, String... lines) {
        StringBuilder b = new StringBuilder("  " + name + ":\n    image: " + BUSYBOX + "\n"
                + "    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "    network: none\n    stop-timeout: 2s\n    ready: {min-healthy: 0s}\n");
        for (String l : lines) b.append("    ").append(l).append('\n');
        return b.toString();
    }

    private void pushWindow(List<String> held, String... containers) throws Exception {
        zk.setDesired("module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n" + String.join("", containers)
                + "schedules:\n  sweep:\n    cron: \"30 3 * * *\"\n    timezone: UTC\n    while-stopped: " + held + "\n"
                + "    step:\n      image: " + BUSYBOX + "\n      command: [sh, -c, \"sleep 1; echo swept\"]\n    timeout: 1m\n", "r1");
        for (String name : held) {
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                String id = docker.idByName(module + "-" + name);
                return id != null && docker.isRunning(id);
            });
        }
    }

    /** @return what {@code docker exec CONTAINER cmd...} printed (the Docker command line, not mesh's client) */
    private static List<String> dockerExec(String container, String... cmd) throws Exception {
        List<String> argv = new ArrayList<>(List.of("docker", "exec", container));
        argv.addAll(List.of(cmd));
        Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return out.lines().toList();
    }

    /** @return the module's Docker events since {@code from}, each as {@code <container> <action>}, in dockerd's order */
    private List<String> events(Instant from) {
        List<String> out = new ArrayList<>();
        for (Event e : TestDocker.events(module, from, Instant.now())) out.add(TestDocker.name(e) + " " + TestDocker.action(e));
        return out;
    }

    private static int first(List<String> events, String prefix) {
        for (int i = 0; i < events.size(); i++) if (events.get(i).startsWith(prefix)) return i;
        return -1;
    }

    private static int last(List<String> events, String prefix) {
        for (int i = events.size() - 1; i >= 0; i--) if (events.get(i).startsWith(prefix)) return i;
        return -1;
    }

    private ApplyReport report() throws Exception {
        return Json.read(zk.client().getData().forPath(zk.paths().report(HOST, module)), ApplyReport.class);
    }

    @Test
    void aWindowRunsThePreStopBeforeItsStopAndThePostStartAfterItsStart() throws Exception {
        String app = module + "-app";
        pushWindow(List.of("app"), container("app",
                "hooks: {pre-stop: [sh, -c, \"echo pre-stop >> /tmp/hooks.log\"], post-start: [sh, -c, \"echo post-start >> /tmp/hooks.log\"]}"));
        String id = docker.idByName(app);
        Instant from = Instant.now();
        WindowResult w = agent.daemon().runWindow(module, "sweep").get(1, TimeUnit.MINUTES);

        assertThat(w.outcome()).as("%s", w).isEqualTo(WindowOutcome.SUCCEEDED);
        assertThat(w.hooks()).containsExactly("pre-stop of " + app + " exited 0", "post-start of " + app + " exited 0");
        assertThat(docker.idByName(app)).as("the same container").isEqualTo(id);
        assertThat(docker.isRunning(id)).isTrue();
        // What the hooks did, in the container, read by docker exec: once each, in that order, after the post-start of
        // the apply that created it (a create is a start mesh makes).
        assertThat(dockerExec(app, "cat", "/tmp/hooks.log")).containsExactly("post-start", "pre-stop", "post-start");
        // Docker's order: the pre-stop's exec ended before the window's stop began, the post-start's began after its start.
        List<String> ev = events(from);
        int preStop = first(ev, app + " exec_create: sh -c echo pre-stop");
        assertThat(preStop).as("%s", ev).isGreaterThanOrEqualTo(0);
        assertThat(ev.get(preStop + 2)).as("its exec ended before anything else of the window: %s", ev).isEqualTo(app + " exec_die");
        assertThat(preStop + 2).as("%s", ev).isLessThan(first(ev, app + " kill"));
        assertThat(last(ev, app + " exec_create: sh -c echo post-start")).as("%s", ev).isGreaterThan(last(ev, app + " start"));
        // The report carries the window's hooks; the agent's ledger has the two execs as calls of the window, and none
        // of Docker's exec_* events (they touch nothing: decision 38).
        assertThat(report().lastWindow().hooks()).containsExactlyElementsOf(w.hooks());
        String ledger = ledgerText();
        assertThat(ledger).contains("\"action\":\"exec\"").contains("\"cause\":\"window:sweep\"").doesNotContain("exec_create");
    }

    private String ledgerText() throws IOException {
        StringBuilder b = new StringBuilder();
        try (Stream<Path> files = Files.walk(agent.stateDir().resolve("ledger"))) {
            for (Path p : files.filter(f -> f.toString().endsWith(".jsonl")).toList()) b.append(Files.readString(p));
        }
        return b.toString();
    }

    @Test
    void aPreStopThatExits75SkipsTheWindowBeforeAnythingIsStoppedAndUndoesTheOnesThatRan() throws Exception {
        String a = module + "-a", b = module + "-b";
        pushWindow(List.of("a", "b"),
                container("a", "hooks: {pre-stop: [sh, -c, \"echo drained >> /tmp/hooks.log\"], post-start: [sh, -c, \"echo undrained >> /tmp/hooks.log\"]}"),
                container("b", "hooks: {pre-stop: [sh, -c, \"echo 'busy: 3 uploads'; exit 75\"]}"));
        String startedA = docker.inspect(a).getState().getStartedAt(), startedB = docker.inspect(b).getState().getStartedAt();
        Instant from = Instant.now();
        WindowResult w = agent.daemon().runWindow(module, "sweep").get(1, TimeUnit.MINUTES);

        assertThat(w.outcome()).as("%s", w).isEqualTo(WindowOutcome.SKIPPED);
        assertThat(w.error()).startsWith("hook: pre-stop of " + b + " exited 75").contains("busy: 3 uploads").endsWith("nothing was stopped");
        assertThat(w.hooks()).containsExactly("pre-stop of " + a + " exited 0", "pre-stop of " + b + " exited 75: busy: 3 uploads",
                "post-start of " + a + " exited 0");
        // Nothing stopped, updated or created: since the two containers' own create and start (the events' second
        // precision takes them in), Docker's events of the module are the hooks' execs alone.
        List<String> ev = events(from);
        List<String> after = ev.subList(Math.max(last(ev, a + " start"), last(ev, b + " start")) + 1, ev.size());
        assertThat(after).as("%s", ev).isNotEmpty().allMatch(e -> e.contains(" exec_"));
        assertThat(ev).as("%s", ev).noneMatch(e -> e.endsWith(" kill") || e.endsWith(" stop") || e.endsWith(" die")
                || e.endsWith(" update") || e.endsWith(" destroy"));
        assertThat(docker.inspect(a).getState().getStartedAt()).isEqualTo(startedA);
        assertThat(docker.inspect(b).getState().getStartedAt()).isEqualTo(startedB);
        assertThat(docker.containersWithLabel(io.mesh.docker.Labels.WINDOW, w.window())).as("no step container").isEmpty();
        assertThat(dockerExec(a, "cat", "/tmp/hooks.log")).containsExactly("undrained", "drained", "undrained");
        assertThat(report().lastWindow().outcome()).isEqualTo(WindowOutcome.SKIPPED);
        assertThat(zk.client().checkExists().forPath(zk.paths().held(HOST, a))).as("no held node was made").isNull();
    }

    @Test
    void aHookThatHangsIsKilledAtItsTimeoutAndTheWindowStillEndsWithItsContainerRunning() throws Exception {
        String app = module + "-app";
        pushWindow(List.of("app"), container("app", "hooks: {pre-stop: [sh, -c, \"echo pre >> /tmp/hooks.log; exec sleep 600\"],"
                + " post-start: [sh, -c, \"echo post >> /tmp/hooks.log; exec sleep 601\"], timeout: 2s}"));
        String id = docker.idByName(app);
        long began = System.nanoTime();
        WindowResult w = agent.daemon().runWindow(module, "sweep").get(1, TimeUnit.MINUTES);

        assertThat(w.outcome()).as("a hook never fails the window: %s", w).isEqualTo(WindowOutcome.SUCCEEDED);
        assertThat(w.hooks()).containsExactly("pre-stop of " + app + " timed out after 2s (hooks.timeout), killed",
                "post-start of " + app + " timed out after 2s (hooks.timeout), killed");
        assertThat(Duration.ofNanos(System.nanoTime() - began)).as("bounded by the hooks' timeouts").isLessThan(Duration.ofSeconds(30));
        assertThat(docker.idByName(app)).isEqualTo(id);
        assertThat(docker.isRunning(id)).as("given back").isTrue();
        assertThat(dockerExec(app, "cat", "/tmp/hooks.log")).as("the create's post-start, then the window's hooks")
                .containsExactly("post", "pre", "post");
        // The hung post-start is gone from the running container: killed, not left behind.
        assertThat(dockerExec(app, "ps")).as("the container's processes").noneMatch(l -> l.contains("sleep 601"));
        assertThat(zk.client().checkExists().forPath(zk.paths().held(HOST, app))).isNull();
    }

    @Test
    void aRecreateRunsThePreStopInTheOldContainerAndThePostStartInTheNewOneAndAHookChangeAloneRecreatesNothing() throws Exception {
        String app = module + "-app";
        String hooks = "hooks: {pre-stop: [sh, -c, \"echo pre-stop $(hostname) >> /hooks/log\"], post-start: [sh, -c, \"echo post-start $(hostname) >> /hooks/log\"]}";
        String first = push("r1", "A", hooks);
        assertThat(dockerExec(app, "cat", "/hooks/log")).as("a create is a start").containsExactly("post-start " + first.substring(0, 12));
        assertThat(report().containers()).singleElement().satisfies(c -> assertThat(c.reasons()).contains("hook post-start of " + app + " exited 0"));

        Instant from = Instant.now();
        String second = push("r2", "B", hooks);
        assertThat(second).as("recreated").isNotEqualTo(first);
        assertThat(dockerExec(app, "cat", "/hooks/log")).containsExactly("post-start " + first.substring(0, 12), "pre-stop " + first.substring(0, 12),
                "post-start " + second.substring(0, 12));
        assertThat(report().containers()).singleElement().satisfies(c -> {
            assertThat(c.action()).isEqualTo(ContainerAction.RECREATED);
            assertThat(c.reasons()).contains("hook pre-stop of " + app + " exited 0", "hook post-start of " + app + " exited 0");
        });
        List<String> ev = events(from);
        assertThat(first(ev, app + " exec_die")).as("the old one's pre-stop ended before its stop: %s", ev)
                .isGreaterThanOrEqualTo(0).isLessThan(first(ev, app + " kill"));

        String third = push("r3", "B", hooks.replace("post-start $(hostname)", "post-start again $(hostname)"));
        assertThat(third).as("a change of hooks alone recreates nothing (decision 38)").isEqualTo(second);
        assertThat(report().containers()).singleElement().satisfies(c -> assertThat(c.action()).isEqualTo(ContainerAction.UNCHANGED));
    }

    /**
     * An operator's {@code hold --stop} runs the pre-stop before its stop; the release's start of the same container
     * (decision 33) runs the post-start once it is ready.
     */
    @Test
    void aStopHoldRunsThePreStopBeforeItsStopAndItsReleaseRunsThePostStart() throws Exception {
        String app = module + "-app";
        pushWindow(List.of("app"), container("app", "restart: unless-stopped",
                "hooks: {pre-stop: [sh, -c, \"echo pre-stop >> /tmp/hooks.log\"], post-start: [sh, -c, \"echo post-start >> /tmp/hooks.log\"]}"));
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> report().outcome() == io.mesh.wire.ApplyOutcome.APPLIED);
        String id = docker.idByName(app);
        Instant from = Instant.now();
        io.mesh.curator.HeldRegistry.hold(zk.client(), zk.paths(), io.mesh.wire.HeldRecord.operator(HOST, module, app, null,
                io.mesh.wire.ProcessRef.current("mesh-coordinator (test)"),
                new io.mesh.wire.HeldRecord.OperatorHold("alice", "disk swap", io.mesh.wire.Times.now(), null, Boolean.TRUE, null)));
        await().atMost(Duration.ofSeconds(30)).until(() -> !docker.isRunning(id));
        List<String> held = events(from);
        int preStop = first(held, app + " exec_create: sh -c echo pre-stop");
        assertThat(preStop).as("%s", held).isGreaterThanOrEqualTo(0).isLessThan(first(held, app + " kill"));

        io.mesh.curator.HeldRegistry.release(zk.client(), zk.paths(), HOST, app);
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() -> assertThat(report().containers())
                .singleElement().satisfies(c -> assertThat(c.reasons()).contains(
                        "started again as it was: stopped by alice's hold (--stop), which ended", "hook post-start of " + app + " exited 0")));
        assertThat(docker.idByName(app)).as("the same container, started again").isEqualTo(id);
        assertThat(dockerExec(app, "cat", "/tmp/hooks.log")).containsExactly("post-start", "pre-stop", "post-start");
    }

    /** Pushes the one container with env {@code V=value} and waits for the revision's report; @return the container's id. */
    private String push(String revision, String value, String hooks) throws Exception {
        zk.setDesired("module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n" + container("app",
                "env: {V: " + value + "}", "volumes: [\"" + volume + ":/hooks\"]", hooks), revision);
        await().atMost(Duration.ofSeconds(60)).ignoreExceptions().untilAsserted(() -> {
            ApplyReport r = report();
            assertThat(r.revision()).isEqualTo(revision);
            assertThat(r.outcome()).isEqualTo(io.mesh.wire.ApplyOutcome.APPLIED);
        });
        return docker.idByName(module + "-app");
    }
}
