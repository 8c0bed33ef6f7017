package io.mesh.faults;

import io.mesh.testing.ChildJvm;
import io.mesh.testing.ZkTxnLog;
import io.mesh.wire.AgentRecord;
import io.mesh.wire.Json;
import io.mesh.wire.Times;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;

import static io.mesh.faults.FaultFixture.sleepStep;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Failure model, "a second agent for a host": an agent started with a {@code --host} whose
 * agent node belongs to another live session refuses to start, naming that process, with exit code 2 and nothing
 * changed in ZooKeeper or Docker; an agent whose predecessor was killed ({@code kill -9}) waits for the dead session to
 * expire, saying so, then starts; one after a clean stop starts at once. Real daemons ({@code mesh-agent run} JVMs),
 * the real 3-server ensemble, the real Docker engine.
 */
@Tag("slow")
class OneAgentPerHostTest {
    @RegisterExtension
    final FaultFixture fx = new FaultFixture();

    private AgentRecord agentRecord() throws Exception {
        return Json.read(fx.client.getData().forPath(fx.agentNode()), AgentRecord.class);
    }

    @Test
    @DaemonWithR1(name = "first", stepSeconds = 5)
    void aSecondAgentOfALiveHostRefusesNamingItAndChangesNothing(ChildJvm first) throws Exception {
        Stat before = fx.stat(fx.agentNode());
        AgentRecord holder = agentRecord();
        assertThat(holder.pid()).isEqualTo(first.pid());
        long zxid0 = fx.zxidNow();
        Instant t0 = Instant.now();

        ChildJvm second = fx.daemon("second", "1s");
        assertThat(second.awaitExit(Duration.ofSeconds(60))).as(second.output()).isEqualTo(2);
        assertThat(second.output())
                .contains("host " + fx.host + " already has a live agent: pid " + first.pid() + ", started at " + holder.startedAt())
                .contains("stop it first, or use another --host");

        // Nothing changed: the first agent's node is the same node with the same data, and no session but the first
        // agent's and this test's wrote anything to ZooKeeper meanwhile (the ensemble's own transaction log).
        long zxid1 = fx.zxidNow();
        Stat after = fx.stat(fx.agentNode());
        assertThat(after.getCzxid()).isEqualTo(before.getCzxid());
        assertThat(after.getMzxid()).isEqualTo(before.getMzxid());
        assertThat(agentRecord()).isEqualTo(holder);
        long mine = fx.client.getZookeeperClient().getZooKeeper().getSessionId();
        // Session 0 is the server itself: its container manager (every 60 s) deleting an earlier test's empty report
        // parent, /mesh/reports/<its host> (seen in CI, 2026-12-03), is nobody's write.
        List<ZkTxnLog.Change> others = ZkTxnLog.read(fx.zk, zxid0).stream()
                .filter(c -> c.zxid() <= zxid1 && c.session() != 0 && !Set.of(mine, before.getEphemeralOwner()).contains(c.session())).toList();
        assertThat(others).as("ZooKeeper changes by other sessions").isEmpty();
        // and in Docker: no event of the module's containers
        fx.events.settle();
        assertThat(fx.events.since(t0)).as("Docker events of the module").isEmpty();
        assertThat(first.isAlive()).isTrue();
    }

    /**
     * The agent killed with {@code kill -9} leaves its node until ZooKeeper expires its session (15 s): the next agent
     * waits for that, saying so, then starts. After a clean stop (the node is deleted) the next one starts at once.
     */
    @Test
    @DaemonWithR1(name = "first", stepSeconds = 5)
    void anAgentKilledWithKill9IsReplacedOnceItsSessionExpiresAndOneStoppedCleanlyAtOnce(ChildJvm first) throws Exception {
        first.kill9();
        assertThat(fx.exists(fx.agentNode())).as("the killed agent's node lives on with its session").isTrue();

        ChildJvm second = fx.daemon("second", "1s");
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                .until(() -> second.output().contains("does not run on this machine; waiting up to 20s for its ZooKeeper session to expire"));
        await().atMost(Duration.ofSeconds(45)).pollInterval(Duration.ofMillis(200)).ignoreExceptions()
                .until(() -> agentRecord().pid() == second.pid());
        assertThat(second.output()).contains("the node of the previous agent went; this process is the host's agent now");
        assertThat(second.isAlive()).isTrue();
        fx.setDesired(fx.yaml("two", "unless-stopped", sleepStep(5), "1m"), "r2"); // and it is the host's agent
        fx.awaitApplied("r2", Duration.ofSeconds(60));

        assertThat(second.terminate(Duration.ofSeconds(60))).as(second.output()).isNotEqualTo(-1);
        assertThat(second.output()).contains("agent host=" + fx.host + " stopped");
        assertThat(fx.exists(fx.agentNode())).as("a cleanly stopped agent deletes its node").isFalse();
        ChildJvm third = fx.daemon("third", "1s");
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).ignoreExceptions()
                .until(() -> agentRecord().pid() == third.pid());
        assertThat(third.output()).doesNotContain("waiting up to");
    }

    /**
     * A node whose process does not run on this machine but whose session stays alive (an agent of the same host id on
     * another machine; here this test's own session): refused after waiting for the session timeout, naming it.
     */
    @Test
    void anAgentOfTheSameHostElsewhereIsRefusedAfterTheSessionTimeout() throws Exception {
        long pid = 4_000_000 + (System.nanoTime() & 0xffff);
        assertThat(ProcessHandle.of(pid)).isEmpty();
        Instant startedAt = Times.now().minusSeconds(3600);
        AgentRecord elsewhere = new AgentRecord(fx.host, "0.1.0", pid, startedAt);
        fx.client.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(fx.agentNode(), Json.bytes(elsewhere));
        try {
            long t0 = System.nanoTime();
            ChildJvm second = fx.daemon("second", "1s");
            assertThat(second.awaitExit(Duration.ofSeconds(60))).as(second.output()).isEqualTo(2);
            assertThat((System.nanoTime() - t0) / 1_000_000_000).as("waited for the session timeout").isGreaterThanOrEqualTo(20);
            assertThat(second.output())
                    .contains("waiting up to 20s for its ZooKeeper session to expire")
                    .contains("host " + fx.host + " already has an agent: pid " + pid + ", started at " + startedAt)
                    .contains("does not run on this machine")
                    .contains("stop it first, or use another --host");
            assertThat(agentRecord()).isEqualTo(elsewhere);
        } finally {
            fx.client.delete().forPath(fx.agentNode());
        }
    }
}
