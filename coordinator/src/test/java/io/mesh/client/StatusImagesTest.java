package io.mesh.client;

import io.mesh.coordinator.CoordinatorExtension;
import io.mesh.coordinator.CoordinatorFixture;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.ApplyReport.ContainerResult;
import io.mesh.wire.ContainerAction;
import io.mesh.wire.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code mesh status} and {@code mesh status PUSH} show which build runs where (SPEC.md, "Images"): each container's
 * image id and registry digest, as the host's report node holds them (written here as an agent writes it; that an agent
 * writes them is PrivateRegistryTest's).
 */
class StatusImagesTest {
    private static final String ID = "sha256:4512950a5b70" + "3".repeat(52);
    private static final String DIGEST = "127.0.0.1:5000/hm/busybox@sha256:" + "9".repeat(64);
    private static final String LOCAL_ID = "sha256:7aeefbc714b2" + "4".repeat(52);

    @RegisterExtension
    static final CoordinatorFixture fx = new CoordinatorFixture();

    private ClientRun mesh(String... args) { return ClientRun.of(fx.api.uri().toString(), args); }

    @Test
    void statusPrintsEachContainersImageIdAndDigest() throws Exception {
        CoordinatorExtension.Answer pushed = fx.api.push("module: hm-status\nhosts: [host-a]\ncontainers:\n"
                + "  app: {image: \"127.0.0.1:5000/hm/busybox:1\", pull: always}\n  local: {image: mesh-demo/busybox:1}\n");
        assertThat(pushed.status()).as(pushed.body()).isEqualTo(202);
        String push = pushed.json().path("push").asText();
        String revision = pushed.json().path("revision").asText();
        ApplyReport report = ApplyReport.applied("host-a", "hm-status", revision, push, Instant.now(), null, List.of(
                new ContainerResult("app", "hm-status-app", ContainerAction.RECREATED, List.of("image changed: a -> b (pulled)"), "c1",
                        "none", ID, DIGEST),
                new ContainerResult("local", "hm-status-local", ContainerAction.UNCHANGED, List.of(), "c2", "none", LOCAL_ID, null),
                new ContainerResult("old", "hm-status-old", ContainerAction.REMOVED, List.of("no longer in the spec"), "c3")));
        fx.zk.client().create().creatingParentsIfNeeded().forPath(fx.zk.paths().report("host-a", "hm-status"), Json.bytes(report));

        ClientRun fleet = mesh("status");
        assertThat(fleet.code()).as(fleet.err()).isZero();
        assertThat(fleet.out()).containsPattern("HOST\\s+CONTAINER\\s+IMAGE ID\\s+IMAGE DIGEST")
                .containsPattern("host-a\\s+hm-status-app\\s+sha256:4512950a5b70\\s+" + java.util.regex.Pattern.quote(DIGEST))
                .containsPattern("host-a\\s+hm-status-local\\s+sha256:7aeefbc714b2\\s+-\\n")
                .doesNotContain("hm-status-old");

        ClientRun one = mesh("status", push);
        assertThat(one.code()).as(one.err()).isZero();
        assertThat(one.out()).containsPattern("HOST\\s+CONTAINER\\s+ACTION\\s+IMAGE ID\\s+IMAGE DIGEST")
                .containsPattern("host-a\\s+hm-status-app\\s+recreated\\s+sha256:4512950a5b70\\s+" + java.util.regex.Pattern.quote(DIGEST))
                .containsPattern("host-a\\s+hm-status-local\\s+unchanged\\s+sha256:7aeefbc714b2\\s+-\\n");

        // scripts read the whole ids from --json
        ClientRun json = mesh("status", "--json");
        var image = Json.MAPPER.readTree(json.out()).path("hosts").get(0).path("modules").get(0).path("images").get(0);
        assertThat(image.path("imageId").asText()).isEqualTo(ID);
        assertThat(image.path("imageDigest").asText()).isEqualTo(DIGEST);
    }
}
