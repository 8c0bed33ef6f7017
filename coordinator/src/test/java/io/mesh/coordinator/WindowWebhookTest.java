package io.mesh.coordinator;

import io.mesh.curator.MeshZk;
import io.mesh.docker.DockerEngine;
import io.mesh.testing.AgentDaemonExtension;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.EventType;
import io.mesh.wire.Json;
import io.mesh.wire.MeshEvent;
import io.mesh.wire.WindowOutcome;
import io.mesh.wire.WindowResult;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A window's events from end to end (decision 34): a real window of an in-process agent daemon on the default Docker
 * engine writes {@code window.started} (delivered while the window is still open) and {@code window.ended} /
 * {@code window.failed} into its host's outbox, and a coordinator's {@link Notifier} sends them, signed, to a real HTTP
 * receiver, in order.
 */
@Tag("slow") // two windows on the real engine
class WindowWebhookTest {
    private static final String HOST = "hooks-a";
    @RegisterExtension
    @Order(1)
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    @Order(2)
    final AgentDaemonExtension agent = new AgentDaemonExtension(zk, HOST);
    private final String module = TestDocker.uniqueModule("hooks");
    private final DockerEngine docker = TestDocker.engine();
    @TempDir
    Path dir;
    private WebhookReceiver receiver;
    private Notifier notifier;

    @AfterEach
    void tearDown() {
        agent.close();
        if (notifier != null) notifier.close();
        if (receiver != null) receiver.close();
        TestDocker.clean(module);
    }

    @Test
    void aWindowsStartIsSentWhileItIsOpenAndItsEndAfterSignedAndInOrder() throws Exception {
        Files.writeString(dir.resolve("ops.secret"), "window-secret\n");
        WebhookSecret secret = WebhookSecret.fromFile(dir.resolve("ops.secret"));
        receiver = new WebhookReceiver(secret).start();
        NotifyConfig config = new NotifyConfig(List.of(new Webhook("ops", java.net.URI.create(receiver.url()), secret,
                Set.of(EventType.WINDOW_STARTED, EventType.WINDOW_ENDED, EventType.WINDOW_FAILED), NotifyFormat.JSON)));
        notifier = new Notifier(MeshZk.connect(zk.connect(), Duration.ofSeconds(20), null, zk.paths()), zk.paths(), config,
                Notifier.Timing.DEFAULT, Clock.systemUTC());
        notifier.start();

        zk.setDesired("module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n"
                + "  app:\n    image: " + BUSYBOX + "\n    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "    network: none\n    stop-timeout: 2s\n"
                + "schedules:\n"
                + "  sweep:\n    cron: \"30 3 * * *\"\n    while-stopped: [app]\n"
                + "    step:\n      image: " + BUSYBOX + "\n      command: [sh, -c, \"sleep 3; echo swept\"]\n    timeout: 1m\n"
                + "  broken:\n    cron: \"30 4 * * *\"\n    while-stopped: [app]\n"
                + "    step:\n      image: " + BUSYBOX + "\n      command: [sh, -c, \"exit 3\"]\n    timeout: 1m\n", "r1");
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            String id = docker.idByName(module + "-app");
            return id != null && docker.isRunning(id);
        });

        Future<WindowResult> window = agent.daemon().runWindow(module, "sweep");
        // window.started is delivered while the window holds its container: nothing waits for the window's end.
        await().atMost(Duration.ofSeconds(20)).until(() -> receiver.distinctIds() == 1);
        assertThat(zk.client().checkExists().forPath(zk.paths().window(HOST, module))).as("the window is open as its start is delivered").isNotNull();
        WindowResult w = window.get(1, TimeUnit.MINUTES);
        assertThat(w.outcome()).as("%s", w).isEqualTo(WindowOutcome.SUCCEEDED);
        WindowResult failed = agent.daemon().runWindow(module, "broken").get(1, TimeUnit.MINUTES);
        assertThat(failed.outcome()).isEqualTo(WindowOutcome.STEP_FAILED);
        await().atMost(Duration.ofSeconds(20)).until(() -> receiver.distinctIds() == 4);

        List<MeshEvent> got = receiver.got().stream().map(g -> Json.read(g.body(), MeshEvent.class)).toList();
        assertThat(receiver.got()).allMatch(WebhookReceiver.Got::signed);
        assertThat(got).extracting(MeshEvent::type).containsExactly(EventType.WINDOW_STARTED, EventType.WINDOW_ENDED,
                EventType.WINDOW_STARTED, EventType.WINDOW_FAILED);
        assertThat(got).allSatisfy(e -> {
            assertThat(e.host()).isEqualTo(HOST);
            assertThat(e.module()).isEqualTo(module);
            assertThat(e.id()).startsWith(HOST + "/e-");
            assertThat(e.held()).containsExactly(module + "-app");
        });
        assertThat(got.get(0).window()).isEqualTo(w.window()).isEqualTo(got.get(1).window());
        assertThat(got.get(0).schedule()).isEqualTo("sweep");
        assertThat(got.get(1).outcome()).isEqualTo("succeeded");
        assertThat(got.get(1).exitCode()).isZero();
        assertThat(got.get(3).window()).isEqualTo(failed.window());
        assertThat(got.get(3).outcome()).isEqualTo("step-failed");
        assertThat(got.get(3).exitCode()).isEqualTo(3);
        assertThat(got.get(3).reason()).isEqualTo("step exited 3");
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(zk.client().getChildren().forPath(zk.paths().events(HOST))).as("delivered: deleted").isEmpty());
    }
}
