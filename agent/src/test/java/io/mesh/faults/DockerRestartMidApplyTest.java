package io.mesh.faults;

import io.mesh.testing.ChildJvm;
import io.mesh.testing.Dockerd;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Fault 6 (docs/failure-model.md): dockerd is restarted (SIGTERM, then {@code deploy/dev/docker-engine.sh}) while
 * the daemon recreates a module's five containers. The apply reports {@code failed}; a later apply converges: every
 * container of the spec exists once, under its own name, running the new spec, with no {@code .mesh-next} or
 * {@code .mesh-prev} container left.
 */
@Tag("restarts-dockerd")
class DockerRestartMidApplyTest {
    private static final List<String> NAMES = List.of("a", "b", "c", "d", "e");

    @RegisterExtension
    final FaultFixture fx = new FaultFixture();

    /**
     * Five containers that ignore SIGTERM (sh as PID 1), so that each stop takes its 4 s stop-timeout and the apply
     * that recreates them all is still running when dockerd, which answers while it shuts its containers down, exits.
     */
    private String slowYaml(String mode) {
        StringBuilder b = new StringBuilder("module: " + fx.module + "\nhosts: [" + fx.host + "]\ncontainers:\n");
        for (String n : NAMES) {
            b.append("  ").append(n).append(":\n    image: ").append(BUSYBOX).append('\n')
                    .append("    command: [sh, -c, \"while true; do sleep 1; done\"]\n")
                    .append("    env: {MODE: \"").append(mode).append("\"}\n    network: host\n    stop-timeout: 4s\n")
                    .append("    restart: unless-stopped\n");
        }
        return b.toString();
    }

    @Test
    void dockerdRestartedMidApply() throws Exception {
        fx.setDesired(slowYaml("one"), "r1");
        ChildJvm daemon = fx.daemon("daemon", "3s");
        fx.awaitApplied("r1", Duration.ofSeconds(60));
        long zxid = fx.zxidNow();

        fx.setDesired(slowYaml("two"), "r2");
        // mid-apply: the first replacement exists, the old container is being stopped
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
                .until(() -> fx.managedNames().stream().anyMatch(n -> n.endsWith(".mesh-next")));
        Duration down;
        try {
            down = Dockerd.restart();
        } finally {
            Dockerd.ensureRunning();
        }
        System.out.println("dockerd was down for " + down.toMillis() + " ms");

        ApplyReport done = fx.awaitApplied("r2", Duration.ofSeconds(90));
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).ignoreExceptions().untilAsserted(() -> {
            assertThat(fx.managedNames()).containsExactlyElementsOf(NAMES.stream().map(n -> fx.module + "-" + n).toList());
            for (String n : NAMES) {
                assertThat(fx.running(fx.module + "-" + n)).as("%s running", n).isTrue();
                assertThat(fx.inspect(fx.module + "-" + n).getConfig().getEnv()).contains("MODE=two");
            }
        });
        assertThat(done.outcome()).isEqualTo(ApplyOutcome.APPLIED);
        assertThat(daemon.isAlive()).as("daemon log:\n%s", daemon.output()).isTrue();
        List<ApplyReport> history = fx.reportHistory(zxid);
        assertThat(history).as("the apply that met the restart reported failed: %s", history)
                .anySatisfy(r -> {
                    assertThat(r.outcome()).isEqualTo(ApplyOutcome.FAILED);
                    assertThat(r.revision()).isEqualTo("r2");
                    assertThat(r.error()).isNotBlank();
                });
    }
}
