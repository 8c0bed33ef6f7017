package io.mesh.agent;

import io.mesh.docker.DockerEngine;
import io.mesh.docker.StaleTaskException;
import io.mesh.testing.AgentDaemonExtension;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.WindowResult;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Failure-model row 68, in the daemon: a window's give-back that Docker refuses for good ("task ... already exists",
 * moby/moby#36145, after a dockerd restart) releases the container, and the daemon that ran the window applies the
 * module at once ({@code AgentDaemon.runWindow}), which makes the container anew under its name; not at the next
 * reconcile, which is 10 minutes away here. No test can make containerd keep a task on demand, so Docker's answer to
 * the held container's start is given by an intercepting runtime over the real engine; every other call is real.
 */
class RefusedGiveBackApplyTest {
    private static final String HOST = "host-a";
    private final String module = TestDocker.uniqueModule("rg");
    /** Containers the window stopped, once armed: their start is refused as dockerd refuses it. */
    private final Set<String> stopped = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean armed = new AtomicBoolean();
    private final DockerEngine docker = TestDocker.engine();
    @RegisterExtension
    @Order(1)
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    @Order(2)
    final AgentDaemonExtension agent = new AgentDaemonExtension(zk, HOST).withRuntime(TestDocker.intercepting(docker, (method, args, proceed) -> {
        if (armed.get() && method.getName().equals("stop")) stopped.add((String) args[0]);
        if (armed.get() && method.getName().equals("start") && stopped.contains((String) args[0])) {
            throw new StaleTaskException("container " + args[0] + " cannot be started again: Status 500: {\"message\":\"task "
                    + args[0] + ": already exists\"}", null);
        }
        return proceed.call();
    }));

    @AfterEach
    void tearDown() {
        agent.close();
        TestDocker.clean(module);
    }

    @Test
    void theDaemonAppliesTheModuleRightAfterAWindowWhoseContainerDockerWouldNotStart() throws Exception {
        zk.setDesired("module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n"
                + "  app:\n    image: " + BUSYBOX + "\n    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "    network: none\n    stop-timeout: 2s\n    ready: {min-healthy: 1s}\n"
                + "schedules:\n  sweep:\n    cron: \"30 3 * * *\"\n    timezone: UTC\n    while-stopped: [app]\n"
                + "    step:\n      image: " + BUSYBOX + "\n      command: [sh, -c, \"echo swept\"]\n    timeout: 1m\n", "r1");
        String app = module + "-app";
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            String id = docker.idByName(app);
            return id != null && docker.isRunning(id);
        });
        String before = docker.idByName(app);

        armed.set(true);
        WindowResult w = agent.daemon().runWindow(module, "sweep").get(1, TimeUnit.MINUTES);
        assertThat(w.error()).contains(app + " did not start again", "already exists", "the next apply recreates it");
        assertThat(stopped).as("the window stopped the app").contains(before);

        await().atMost(Duration.ofSeconds(30)).until(() -> {
            String id = docker.idByName(app);
            return id != null && !id.equals(before) && docker.isRunning(id);
        });
        // the recreate removes the old one once the new one is judged ready (min-healthy 1s)
        await("the container Docker would not start, removed").atMost(Duration.ofSeconds(15)).until(() ->
                docker.client().listContainersCmd().withShowAll(true).withIdFilter(List.of(before)).exec().isEmpty());
    }
}
