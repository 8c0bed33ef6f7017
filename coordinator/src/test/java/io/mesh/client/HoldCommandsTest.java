package io.mesh.client;

import io.mesh.coordinator.BearerToken;
import io.mesh.coordinator.CoordinatorFixture;
import io.mesh.coordinator.Manifests;
import io.mesh.curator.HeldRegistry;
import io.mesh.wire.AgentRecord;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.Times;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code mesh hold}, {@code mesh release} and {@code mesh held}'s operator holds (decision 0015), and mesh hold's wait
 * for its host's confirmation (SPEC.md "Operator holds"), with a stand-in for the agent where one is needed.
 */
class HoldCommandsTest {
    @RegisterExtension
    static final CoordinatorFixture fx = new CoordinatorFixture();

    private ClientRun mesh(String... args) { return ClientRun.of(fx.api.uri().toString(), args); }

    @Test
    void holdHeldAndRelease() throws Exception {
        assertThat(fx.api.push(Manifests.store("[host-a]")).status()).isEqualTo(202);
        fx.zk.client().create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL)
                .forPath(fx.zk.paths().agent("host-a"), Json.bytes(new AgentRecord("host-a", "0.1.0", 4242, Times.now())));

        ClientRun bad = mesh("hold", "host-a", "store-registry", "--reason", "x", "--for", "soon");
        assertThat(bad.code()).as(bad.toString()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(bad.err()).contains("for:", "not a duration");
        assertThat(mesh("hold", "host-a", "store-registry").code()).as("--reason is required").isEqualTo(ExitCodes.BAD_INPUT);

        // A stand-in for host-a's agent confirms the hold a little after it is written; mesh hold waits for that.
        Instant at = Instant.parse("2026-12-01T10:00:02.500Z");
        AtomicReference<HeldRecord> confirmed = new AtomicReference<>();
        Thread agent = confirmer("host-a", "store-registry", at, confirmed);
        ClientRun held = mesh("hold", "host-a", "store-registry", "--reason", "disk swap", "--for", "30m", "--stop");
        agent.join(20_000);
        assertThat(confirmed.get()).as("the stand-in confirmed it").isNotNull();
        assertThat(held.code()).as(held.toString()).isZero();
        assertThat(held.out()).contains("store-registry on host-a: hold recorded, by ", "disk swap", "until ", "its agent stops it",
                "host-a's agent confirmed it at " + at, "in force", "it stopped it at " + at.plusSeconds(2));
        HeldRecord h = Json.read(fx.zk.client().getData().forPath(fx.zk.paths().held("host-a", "store-registry")), HeldRecord.class);
        assertThat(h.hold().stops()).isTrue();
        assertThat(h.hold().confirmed()).isEqualTo(at);

        ClientRun list = mesh("held");
        assertThat(list.code()).isZero();
        assertThat(list.out()).contains("no container is held by a window", "HOLD BY", "REASON", "UNTIL", "CONFIRMED", "disk swap", "stopped", at.toString());

        ClientRun rel = mesh("release", "host-a", "store-registry");
        assertThat(rel.code()).as(rel.toString()).isZero();
        assertThat(rel.out()).contains("released", "disk swap");
        assertThat(mesh("release", "host-a", "store-registry").code()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(mesh("held").out()).contains("no container is held by an operator");
    }

    /**
     * A host with no agent node cannot confirm a hold: mesh hold answers 3 at once (not after --wait), saying the hold
     * is recorded and when it will be confirmed; the node is there, unconfirmed, and mesh held says "not yet".
     */
    @Test
    void withItsHostsAgentDownHoldAnswers3AtOnceAndTheHoldStaysRecorded() throws Exception {
        assertThat(fx.api.push(Manifests.store("[host-a]")).status()).isEqualTo(202);
        knownByAReportOnly("host-a");

        long t0 = System.nanoTime();
        ClientRun run = mesh("hold", "host-a", "store-registry", "--reason", "disk swap", "--wait", "2m");
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        assertThat(run.code()).as(run.toString()).isEqualTo(ExitCodes.TIMEOUT);
        assertThat(took).as("at once, not after --wait").isLessThan(Duration.ofSeconds(30));
        assertThat(run.out()).contains("store-registry on host-a: hold recorded");
        assertThat(run.err()).contains("recorded but not yet confirmed", "nothing is lost", "host-a's agent is down",
                "confirms the hold before its first Docker call of module store");
        HeldRecord h = Json.read(fx.zk.client().getData().forPath(fx.zk.paths().held("host-a", "store-registry")), HeldRecord.class);
        assertThat(h.operatorHold()).isTrue();
        assertThat(h.hold().confirmed()).as("nothing confirmed it").isNull();
        assertThat(new String(fx.zk.client().getData().forPath(fx.zk.paths().held("host-a", "store-registry")), StandardCharsets.UTF_8))
                .doesNotContain("confirmed");
        assertThat(mesh("held").out()).contains("CONFIRMED", "not yet");
    }

    /**
     * An agent that runs but does not confirm within --wait: exit 3 after --wait, the hold recorded. --wait 0s does not
     * wait (3 at once); a bad --wait is refused before anything is written.
     */
    @Test
    void anAgentThatDoesNotConfirmWithinWaitIs3AndWait0sDoesNotWait() throws Exception {
        assertThat(fx.api.push(Manifests.TWO).status()).isEqualTo(202);
        agentUp("host-a");

        ClientRun badWait = mesh("hold", "host-a", "store-registry", "--reason", "x", "--wait", "soon");
        assertThat(badWait.code()).as(badWait.toString()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(badWait.err()).contains("--wait", "not a duration");
        assertThat(fx.zk.client().checkExists().forPath(fx.zk.paths().held("host-a", "store-registry"))).as("nothing written").isNull();

        long t0 = System.nanoTime();
        ClientRun run = mesh("hold", "host-a", "store-registry", "--reason", "x", "--wait", "1s");
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        assertThat(run.code()).as(run.toString()).isEqualTo(ExitCodes.TIMEOUT);
        assertThat(took).isBetween(Duration.ofSeconds(1), Duration.ofSeconds(10));
        assertThat(run.err()).contains("recorded but not yet confirmed", "host-a's agent runs but did not confirm it within 1s");
        assertThat(fx.zk.client().checkExists().forPath(fx.zk.paths().held("host-a", "store-registry"))).isNotNull();

        ClientRun now = mesh("hold", "host-a", "web-app", "--reason", "x", "--wait", "0s");
        assertThat(now.code()).as(now.toString()).isEqualTo(ExitCodes.TIMEOUT);
        assertThat(now.err()).contains("not waiting", "--wait 0s");
        assertThat(fx.zk.client().checkExists().forPath(fx.zk.paths().held("host-a", "web-app"))).isNotNull();
    }

    /** Bad input is exit 2, naming the field and the fix, with nothing written. */
    @Test
    void badInputIsExit2NamingTheFieldAndWritesNothing() throws Exception {
        assertThat(fx.api.push(Manifests.store("[host-a]")).status()).isEqualTo(202);
        agentUp("host-a");

        ClientRun days = mesh("hold", "host-a", "store-registry", "--reason", "x", "--for", "400d");
        assertThat(days.code()).as(days.toString()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(days.err()).contains("for:", "400d");
        ClientRun tooLong = mesh("hold", "host-a", "store-registry", "--reason", "x", "--for", "9600h");
        assertThat(tooLong.code()).as(tooLong.toString()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(tooLong.err()).contains("for:", "at most 366 days", "give a shorter --for");
        ClientRun zero = mesh("hold", "host-a", "store-registry", "--reason", "x", "--for", "0s");
        assertThat(zero.code()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(zero.err()).contains("for:", "zero");
        ClientRun host = mesh("hold", "host-z", "store-registry", "--reason", "x");
        assertThat(host.code()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(host.err()).contains("no host 'host-z'", "check the name");
        ClientRun container = mesh("hold", "host-a", "store-nope", "--reason", "x");
        assertThat(container.code()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(container.err()).contains("store-nope", "<module>-<name>");
        assertThat(fx.zk.client().checkExists().forPath(fx.zk.paths().held("host-a"))).as("nothing written").isNull();
    }

    /**
     * With named tokens the token's name is the hold's by (the OS user only a claim beside it), and the wait reads the
     * hold with the token.
     */
    @Test
    void withANamedTokenTheTokensNameHoldsAndTheWaitReadsWithIt(@TempDir Path dir) throws Exception {
        fx.api.restart(BearerToken.fromFile(Files.writeString(dir.resolve("tokens"), "ops:tok-ops-1\n")), null);
        Path mine = Files.writeString(dir.resolve("mine"), "tok-ops-1\n");
        assertThat(fx.api.post("/v1/pushes", Manifests.store("[host-a]").getBytes(StandardCharsets.UTF_8), Map.of("Authorization", "Bearer tok-ops-1"))
                .status()).isEqualTo(202);
        agentUp("host-a");

        AtomicReference<HeldRecord> confirmed = new AtomicReference<>();
        Thread agent = confirmer("host-a", "store-registry", Instant.parse("2026-12-01T10:00:00Z"), confirmed);
        ClientRun run = mesh("hold", "host-a", "store-registry", "--reason", "x", "--token-file", mine.toString());
        agent.join(20_000);
        assertThat(run.code()).as(run.toString()).isZero();
        String by = "ops"; // a named token's name is the by, whoever the client says it is
        assertThat(run.out()).contains("hold recorded, by " + by);
        assertThat(confirmed.get().hold().by()).isEqualTo(by);
    }

    /**
     * {@code mesh release HOST CONTAINER --stale}: an admin's token removes a held node nothing owns (here one made by
     * hand with a window's data); another token is exit 2 naming the fix, and the node stays.
     */
    @Test
    void releaseStaleRemovesAHandMadeNodeWithAnAdminsTokenOnly(@TempDir Path dir) throws Exception {
        fx.api.restart(BearerToken.fromFile(Files.writeString(dir.resolve("tokens"), "ops:tok-ops-1\nci:tok-ci-1\n")).withAdmins(List.of("ops")), null);
        Path ops = Files.writeString(dir.resolve("ops"), "tok-ops-1\n");
        Path ci = Files.writeString(dir.resolve("ci"), "tok-ci-1\n");
        String path = fx.zk.paths().held("host-a", "store-registry");
        fx.zk.client().create().creatingParentsIfNeeded().forPath(path, Json.bytes(new HeldRecord("host-a", "store", "store-registry", null,
                "garbage-collect", "w-by-hand", Times.now(), io.mesh.wire.ProcessRef.current("zkcli"))));

        ClientRun plain = mesh("release", "host-a", "store-registry", "--token-file", ops.toString());
        assertThat(plain.code()).as(plain.toString()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(plain.err()).contains("--stale");
        ClientRun notAdmin = mesh("release", "host-a", "store-registry", "--stale", "--token-file", ci.toString());
        assertThat(notAdmin.code()).as(notAdmin.toString()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(notAdmin.err()).contains("403", "not an admin's", "--admin NAME");
        assertThat(fx.zk.client().checkExists().forPath(path)).isNotNull();

        ClientRun run = mesh("release", "host-a", "store-registry", "--stale", "--token-file", ops.toString());
        assertThat(run.code()).as(run.toString()).isZero();
        assertThat(run.out()).contains("the stale held node of store-registry on host-a is removed (it read: window w-by-hand, schedule garbage-collect)");
        assertThat(fx.zk.client().checkExists().forPath(path)).isNull();
    }

    private void agentUp(String host) throws Exception {
        fx.zk.client().create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL)
                .forPath(fx.zk.paths().agent(host), Json.bytes(new AgentRecord(host, "0.1.0", 4242, Times.now())));
    }

    private void knownByAReportOnly(String host) throws Exception {
        ApplyReport r = ApplyReport.deferred(host, "store", "r1", "push-0000000000", Times.now(), null, List.of());
        fx.zk.client().create().creatingParentsIfNeeded().forPath(fx.zk.paths().report(host, "store"), Json.bytes(r));
    }

    /**
     * Stands in for the host's agent (not what is tested here): once the hold's node is written, confirms it after a
     * short delay, as the agent does under the module's lock ({@link HeldRegistry#confirm}).
     *
     * @param confirmed set to the hold as confirmed
     */
    private Thread confirmer(String host, String container, Instant at, AtomicReference<HeldRecord> confirmed) {
        Thread t = new Thread(() -> {
            try {
                String path = fx.zk.paths().held(host, container);
                await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(20)).until(() -> fx.zk.client().checkExists().forPath(path) != null);
                Thread.sleep(400);
                HeldRecord read = Json.read(fx.zk.client().getData().forPath(path), HeldRecord.class);
                HeldRecord c = HeldRegistry.confirm(fx.zk.client(), fx.zk.paths(), read, at);
                confirmed.set(c);
                if (c.hold().stops()) { // then stops it, as the agent does, a little later
                    Thread.sleep(1_500);
                    HeldRegistry.markStopped(fx.zk.client(), fx.zk.paths(), c, at.plusSeconds(2));
                }
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, "stand-in agent of " + host);
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** A push deferred by an operator hold names the hold, not a window, in mesh status. */
    @Test
    void statusOfAPushDeferredByAnOperatorHoldNamesTheHold() throws Exception {
        assertThat(fx.api.push(Manifests.store("[host-a]")).status()).isEqualTo(202);
        Instant t = Instant.parse("2026-12-01T10:00:00Z");
        ApplyReport r = ApplyReport.deferred("host-a", "store", "r1", "push-0000000000", t, null, List.of(ApplyReport.ContainerResult.held(
                "registry", "store-registry", "held by operator alice: disk swap (since " + t + ", until released)", "3f2a")));
        fx.writeReport(r);
        ClientRun s = mesh("status", "push-0000000000");
        assertThat(s.code()).as(s.toString()).isZero();
        assertThat(s.out()).contains("deferred", "store-registry held by operator alice: disk swap");
    }
}
