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

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Issue 11, requirement 9 (failure model: "a second agent for a host"): an agent started with a {@code --host} whose
 * agent node belongs to another live session refuses to start, naming that process, with exit code 2 and nothing
 * changed in ZooKeeper or Docker; an agent whose predecessor was killed ({@code kill -9}) waits for the dead session to
 * expire, saying so, then starts; one after a clean stop starts at once. Real daemons ({@code mesh-agent run} JVMs),
 * the real 3-server ensemble, the real Docker engine.
 */
@Tag("slow")
class OneAgentPerHostTest extends FaultFixture {

    private AgentRecord agentRecord() throws Exception {
        return Json.read(client.getData().forPath(paths.agent(host)), AgentRecord.class);
    }

    @Test
    void aSecondAgentOfALiveHostRefusesNamingItAndChangesNothing() throws Exception {
        ChildJvm first = daemonWithR1Applied("first", "1s", "unless-stopped", 5, "1m");
        Stat before = stat(paths.agent(host));
        AgentRecord holder = agentRecord();
        assertThat(holder.pid()).isEqualTo(first.pid());
        long zxid0 = zxidNow();
        Instant t0 = Instant.now();

        ChildJvm second = daemon("second", "1s");
        assertThat(second.awaitExit(Duration.ofSeconds(60))).as(second.output()).isEqualTo(2);
        assertThat(second.output())
                .contains("host " + host + " already has a live agent: pid " + first.pid() + ", started at " + holder.startedAt())
                .contains("stop it first, or use another --host");

        // Nothing changed: the first agent's node is the same node with the same data, and no session but the first
        // agent's and this test's wrote anything to ZooKeeper meanwhile (the ensemble's own transaction log).
        long zxid1 = zxidNow();
        Stat after = stat(paths.agent(host));
        assertThat(after.getCzxid()).isEqualTo(before.getCzxid());
        assertThat(after.getMzxid()).isEqualTo(before.getMzxid());
        assertThat(agentRecord()).isEqualTo(holder);
        long mine = client.getZookeeperClient().getZooKeeper().getSessionId();
        List<ZkTxnLog.Change> others = ZkTxnLog.read(zk, zxid0).stream()
                .filter(c -> c.zxid() <= zxid1 && !Set.of(mine, before.getEphemeralOwner()).contains(c.session())).toList();
        assertThat(others).as("ZooKeeper changes by other sessions").isEmpty();
        // and in Docker: no event of the module's containers
        events.settle();
        assertThat(events.since(t0)).as("Docker events of the module").isEmpty();
        assertThat(first.isAlive()).isTrue();
    }

    /**
     * The agent killed with {@code kill -9} leaves its node until ZooKeeper expires its session (15 s): the next agent
     * waits for that, saying so, then starts. After a clean stop (the node is deleted) the next one starts at once.
     */
    @Test
    void anAgentKilledWithKill9IsReplacedOnceItsSessionExpiresAndOneStoppedCleanlyAtOnce() throws Exception {
        ChildJvm first = daemonWithR1Applied("first", "1s", "unless-stopped", 5, "1m");
        first.kill9();
        assertThat(exists(paths.agent(host))).as("the killed agent's node lives on with its session").isTrue();

        ChildJvm second = daemon("second", "1s");
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                .until(() -> second.output().contains("does not run on this machine; waiting up to 20s for its ZooKeeper session to expire"));
        await().atMost(Duration.ofSeconds(45)).pollInterval(Duration.ofMillis(200)).ignoreExceptions()
                .until(() -> agentRecord().pid() == second.pid());
        assertThat(second.output()).contains("the node of the previous agent went; this process is the host's agent now");
        assertThat(second.isAlive()).isTrue();
        setDesired(yaml("two", "unless-stopped", sleepStep(5), "1m"), "r2"); // and it is the host's agent
        awaitApplied("r2", Duration.ofSeconds(60));

        assertThat(second.terminate(Duration.ofSeconds(60))).as(second.output()).isNotEqualTo(-1);
        assertThat(second.output()).contains("agent host=" + host + " stopped");
        assertThat(exists(paths.agent(host))).as("a cleanly stopped agent deletes its node").isFalse();
        ChildJvm third = daemon("third", "1s");
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
        AgentRecord elsewhere = new AgentRecord(host, "0.1.0", pid, startedAt);
        client.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(paths.agent(host), Json.bytes(elsewhere));
        try {
            long t0 = System.nanoTime();
            ChildJvm second = daemon("second", "1s");
            assertThat(second.awaitExit(Duration.ofSeconds(60))).as(second.output()).isEqualTo(2);
            assertThat((System.nanoTime() - t0) / 1_000_000_000).as("waited for the session timeout").isGreaterThanOrEqualTo(20);
            assertThat(second.output())
                    .contains("waiting up to 20s for its ZooKeeper session to expire")
                    .contains("host " + host + " already has an agent: pid " + pid + ", started at " + startedAt)
                    .contains("does not run on this machine")
                    .contains("stop it first, or use another --host");
            assertThat(agentRecord()).isEqualTo(elsewhere);
        } finally {
            client.delete().forPath(paths.agent(host));
        }
    }
}
