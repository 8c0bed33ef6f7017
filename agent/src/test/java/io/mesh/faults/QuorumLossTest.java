package io.mesh.faults;

import com.github.dockerjava.api.model.Event;
import io.mesh.testing.ChildJvm;
import io.mesh.testing.DockerEvents;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static io.mesh.faults.FaultFixture.sleep;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fault 4 (docs/failure-model.md): two of the three servers die, so ZooKeeper has no quorum, while the daemon
 * reconciles every second. Nothing is stopped, started, created or removed meanwhile (Docker's events); the
 * containers keep running; an apply that met the outage (longer than the 20 s an apply waits out a blip) reports it
 * {@code failed} with the reason once ZooKeeper answers again (seen in the ensemble's own transaction log), and the
 * module converges: {@code applied}, same containers.
 */
@Tag("slow")
class QuorumLossTest {
    @RegisterExtension
    final FaultFixture fx = new FaultFixture();

    @Test
    @DaemonWithR1(stepSeconds = 1)
    void quorumLostThenBack(ChildJvm daemon) throws Exception {
        String registryId = fx.inspect(fx.registry).getId();
        String webId = fx.inspect(fx.web).getId();
        long zxid = fx.zxidNow();
        Instant down = Instant.now();

        // Longer than an apply waits out a blip (Applier.BLIP, 20 s): then the outage is reported, once ZooKeeper answers.
        int[] lost = loseQuorum();
        sleep(Duration.ofSeconds(25)); // deliberate: the outage's length
        assertThat(fx.running(fx.registry)).isTrue();
        assertThat(fx.running(fx.web)).isTrue();
        // Taken before the servers start: the agent may reconnect and report before regainQuorum sees the quorum.
        Instant up = Instant.now();
        regainQuorum(lost);

        // An apply under way when ZooKeeper went reports the outage once it answers again, then the module converges
        // (the usual case). An apply whose ZooKeeper call was retried across the whole outage finds, once it answers,
        // nothing to change and writes nothing (decision 4): then the r1 report stands. Either way no report says
        // anything but applied at the end, and a failed one names its error.
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).ignoreExceptions().until(() -> {
            List<ApplyReport> h = fx.reportHistory(zxid);
            ApplyReport now = fx.report();
            boolean settled = now.outcome() == ApplyOutcome.APPLIED && "r1".equals(now.revision());
            return settled && (h.isEmpty() ? Duration.between(up, Instant.now()).toSeconds() >= 15
                    : h.get(h.size() - 1).outcome() == ApplyOutcome.APPLIED);
        });
        assertThat(daemon.isAlive()).isTrue();
        List<ApplyReport> history = fx.reportHistory(zxid);
        System.out.println("reports written after the outage began: " + history.stream().map(r -> r.outcome() + "").toList());
        assertThat(history).as("every failed report says why").allSatisfy(r -> {
            if (r.outcome() == ApplyOutcome.FAILED) assertThat(r.error()).isNotBlank();
        });

        fx.events.settle();
        List<Event> touched = fx.events.since(down);
        assertThat(touched).as("Docker events of the module from the outage on:\n%s", DockerEvents.describe(touched)).isEmpty();
        assertThat(fx.inspect(fx.registry).getId()).isEqualTo(registryId);
        assertThat(fx.inspect(fx.web).getId()).isEqualTo(webId);
        assertThat(fx.running(fx.registry) && fx.running(fx.web)).isTrue();
    }

    /** Kills the leader and a follower: two of the three servers, so no quorum. @return the two, for {@link #regainQuorum} */
    private int[] loseQuorum() {
        int[] two = {fx.zk.leader(), fx.zk.follower()};
        for (int server : two) fx.zk.kill(server);
        return two;
    }

    /** Starts the servers {@link #loseQuorum} killed, and waits (60 s at most) until the ensemble has a quorum. */
    private void regainQuorum(int[] two) throws java.io.IOException {
        for (int server : two) fx.zk.start(server);
        fx.zk.awaitQuorum(Duration.ofSeconds(60));
    }

    /**
     * Once ZooKeeper answers again, the daemon reconciles at once: a container removed by hand during the outage is
     * back within seconds, though the reconcile interval is 10 minutes.
     */
    @Test
    @DaemonWithR1(reconcile = "10m", stepSeconds = 1)
    void quorumBackReconcilesAtOnce(ChildJvm daemon) throws Exception {
        String webId = fx.inspect(fx.web).getId();

        int[] lost = loseQuorum();
        fx.docker.remove(webId);
        sleep(Duration.ofSeconds(5)); // deliberate: the outage goes on after the removal
        regainQuorum(lost);

        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(40)).pollInterval(Duration.ofMillis(200)).ignoreExceptions()
                .until(() -> fx.running(fx.web));
        String newWeb = fx.inspect(fx.web).getId();
        assertThat(newWeb).isNotEqualTo(webId);
        ApplyReport r = fx.awaitReport(Duration.ofSeconds(20), x -> x.outcome() == ApplyOutcome.APPLIED
                && x.containers().stream().anyMatch(c -> c.container().equals(fx.web) && newWeb.equals(c.id())));
        assertThat(r.revision()).isEqualTo("r1");
        assertThat(daemon.isAlive()).isTrue();
    }
}
