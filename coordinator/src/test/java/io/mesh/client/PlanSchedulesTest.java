package io.mesh.client;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.coordinator.CoordinatorExtension;
import io.mesh.coordinator.CoordinatorFixture;
import io.mesh.coordinator.Manifests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code mesh push --plan} shows each module's schedules added, changed and removed against the desired state now,
 * computed by the coordinator ({@code io.mesh.coordinator.ScheduleDiff}) from the desired node and the manifest: no
 * agent is needed for that part, so the hosts here have none.
 */
class PlanSchedulesTest {
    @RegisterExtension
    static final CoordinatorFixture fx = new CoordinatorFixture();
    @TempDir
    Path dir;

    /** store with garbage-collect at another time and a longer timeout, and a second schedule, compact. */
    private static String changed() {
        return Manifests.store("[host-x]").replace("cron: \"30 3 * * *\"", "cron: \"0 4 * * *\"").replace("timeout: 30m", "timeout: 45m")
                + """
                  compact:
                    cron: "0 5 * * 0"
                    timezone: UTC
                    step:
                      image: mesh-demo/busybox:1
                      command: ["true"]
                """;
    }

    @Test
    void aPlanSaysWhichSchedulesAPushAddsChangesAndRemoves() throws Exception {
        assertThat(fx.api.push(Manifests.store("[host-x]")).status()).isEqualTo(202);
        long pushesBefore = fx.zk.client().checkExists().forPath(fx.zk.paths().pushes()).getCversion();

        Path m = Files.writeString(dir.resolve("m.yaml"), changed() + "---\n" + Manifests.web("[host-x]"));
        ClientRun r = ClientRun.of(fx.api.uri().toString(), "push", m.toString(), "--plan", "--timeout", "2s", "--interval", "100ms");
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.FAILED); // host-x has no agent
        assertThat(r.out()).contains(
                "schedule store/compact added: cron: 0 5 * * 0 UTC",
                "schedule store/garbage-collect changed: cron: 30 3 * * * -> 0 4 * * *; timeout: 30m -> 45m");
        assertThat(r.out()).as("web has no schedules, before or after").doesNotContain("schedule web/");
        assertThat(fx.zk.client().checkExists().forPath(fx.zk.paths().pushes()).getCversion()).as("a plan pushes nothing").isEqualTo(pushesBefore);

        // Against the desired state now: the plain manifest again takes compact away and puts garbage-collect back.
        assertThat(fx.api.push(changed()).status()).isEqualTo(202);
        CoordinatorExtension.Answer a = fx.api.post("/v1/plans", Manifests.store("[host-x]").getBytes(StandardCharsets.UTF_8), Map.of());
        assertThat(a.status()).as(a.body()).isEqualTo(202);
        JsonNode s = a.json().path("schedules");
        assertThat(s).hasSize(2);
        assertThat(s.get(0).path("schedule").asText()).isEqualTo("compact");
        assertThat(s.get(0).path("change").asText()).isEqualTo("removed");
        assertThat(s.get(1).path("change").asText()).isEqualTo("changed");
        assertThat(s.get(1).path("fields").toString()).contains("cron: 0 4 * * * -> 30 3 * * *");

        ClientRun same = ClientRun.of(fx.api.uri().toString(), "push", Files.writeString(dir.resolve("same.yaml"), changed()).toString(),
                "--plan", "--timeout", "2s", "--interval", "100ms");
        assertThat(same.out()).contains("schedules: no change");
    }
}
