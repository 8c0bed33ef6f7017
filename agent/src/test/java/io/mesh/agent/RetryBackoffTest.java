package io.mesh.agent;

import io.mesh.testing.AgentDaemonExtension;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A module whose apply keeps failing is tried again with one back-off chain, whatever else asks for an apply: a
 * reconcile that asks while a retry waits must not start a second chain (a review counted twelve applies in one
 * burst two minutes after the module began to fail, each writing a report). Evidence: the report node's version in
 * ZooKeeper, one per write.
 */
@Tag("slow") // watches the daemon for 20 s
class RetryBackoffTest {
    private static final String HOST = "host-a";
    @RegisterExtension
    @Order(1)
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    @Order(2)
    final AgentDaemonExtension agent = new AgentDaemonExtension(zk, HOST).reconcileEvery(Duration.ofSeconds(2));
    private final String module = TestDocker.uniqueModule("rb");

    @AfterEach
    void tearDown() {
        TestDocker.clean(module);
    }

    @Test
    void aFailingModuleHasOneRetryChainNotOnePerReconcile() throws Exception {
        // privileged is refused by the agent's default policy: every apply fails, without a Docker change
        zk.setDesired("module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n  web:\n    image: " + TestDocker.BUSYBOX
                + "\n    network: none\n    privileged: true\n", "r1");
        String report = zk.paths().report(HOST, module);
        await().atMost(Duration.ofSeconds(20)).until(() -> zk.client().checkExists().forPath(report) != null);
        Stat first = zk.client().checkExists().forPath(report);
        Thread.sleep(20_000);
        Stat last = zk.client().checkExists().forPath(report);
        int writes = last.getVersion() - first.getVersion();
        // One chain: a retry at most every 2 s (back-off capped at the reconcile interval) plus the reconcile's own
        // request, so at most about two applies per 2 s; piled-up chains write several times as many.
        assertThat(writes).as("report writes in 20 s").isBetween(1, 22);
    }
}
