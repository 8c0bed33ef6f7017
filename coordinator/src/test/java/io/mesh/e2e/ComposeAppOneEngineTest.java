package io.mesh.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.Network;
import io.mesh.client.compose.ComposeImport;
import io.mesh.coordinator.CoordinatorExtension;
import io.mesh.coordinator.CoordinatorExtension.Answer;
import io.mesh.coordinator.CoordinatorFixture;
import io.mesh.manifest.ModuleSpec;
import io.mesh.policy.Policy;
import io.mesh.testing.AgentDaemonExtension;
import io.mesh.testing.TestDocker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static io.mesh.e2e.ShopCompose.exec;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A compose app runs unchanged on one engine (decision 31): the shop's compose file ({@link ShopCompose}) imported as
 * {@code mesh import-compose} does, pushed to a coordinator, applied by a real agent daemon on the machine's Docker
 * engine: every service runs and reaches the others by service name and alias, checked from inside the containers;
 * deleting the module removes its containers and networks and keeps the named volume. The fleet's version is
 * {@code ComposeAppIT}.
 */
@Tag("slow") // a coordinator, an agent daemon and three containers with a healthcheck: the full run, not --fast
class ComposeAppOneEngineTest {
    private static final String HOST = "host-a";
    @TempDir
    static Path dir;
    @RegisterExtension
    @Order(1)
    final CoordinatorFixture fx = new CoordinatorFixture();
    /** The bind mount's source must be under the agent's --allow-host-path, as a new user's would be. */
    @RegisterExtension
    @Order(2)
    final AgentDaemonExtension agent = new AgentDaemonExtension(fx.zk, HOST)
            .withPolicy(Policy.builder().allowHostNetwork(true).allowHostPaths(List.of(System.getProperty("java.io.tmpdir"))).build());
    private final DockerClient docker = TestDocker.engine().client();
    private final String module = TestDocker.uniqueModule("shop");
    private String volume;

    @AfterEach
    void tearDown() {
        agent.close();
        TestDocker.clean(module);
        if (volume != null) {
            try {
                docker.removeVolumeCmd(volume).exec();
            } catch (RuntimeException ignored) {
                // gone already
            }
        }
    }

    private String state(String push) throws Exception {
        for (JsonNode t : fx.api.get("/v1/pushes/" + push).json().path("targets")) {
            if (t.path("host").asText().equals(HOST)) return t.path("state").asText();
        }
        return "absent";
    }

    private String id(String dockerName) {
        return docker.inspectContainerCmd(dockerName).exec().getId();
    }

    @Test
    void anImportedComposeAppRunsAndItsServicesReachEachOtherByName() throws Exception {
        Path project = Files.createDirectories(dir.resolve(module));
        Files.createDirectories(project.resolve("conf"));
        Files.writeString(project.resolve("conf/db.conf"), "ready\n");
        Path file = project.resolve("compose.yaml");
        Files.writeString(file, ShopCompose.compose(TestDocker.BUSYBOX));
        ComposeImport.Imported imported = ComposeImport.of(file, List.of(HOST)).module(module).convert(Files.readString(file));
        ModuleSpec spec = imported.spec();
        assertThat(spec.networks()).as(imported.manifest()).containsKeys("default", "back");
        volume = spec.containers().get("db").volumes().get(0).split(":")[0];

        Answer pushed = fx.api.post("/v1/pushes", imported.manifest().getBytes(StandardCharsets.UTF_8), Map.of("X-Mesh-Revision", "r1"));
        assertThat(pushed.status()).as(pushed.body()).isEqualTo(202);
        String push = pushed.json().path("push").asText();
        await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(250)).until(() -> state(push).equals("applied"));

        String web = id(module + "-web"), worker = id(module + "-worker"), db = id(module + "-db");
        assertThat(exec(docker, web, "ping", "-c", "1", "-W", "2", "db")).as("web reaches db by name").isZero();
        assertThat(exec(docker, web, "ping", "-c", "1", "-W", "2", "worker")).as("web reaches worker by name").isZero();
        assertThat(exec(docker, worker, "ping", "-c", "1", "-W", "2", "postgres")).as("worker reaches db by its alias on back").isZero();
        assertThat(exec(docker, db, "cat", "/conf/db.conf")).as("the bind mount").isZero();
        assertThat(exec(docker, web, "nslookup", "-timeout=1", "-retry=1", "postgres")).as("the alias is back's alone").isNotZero();
        assertThat(docker.inspectContainerCmd(db).exec().getState().getHealth().getStatus()).isEqualTo("healthy");
        assertThat(docker.listNetworksCmd().exec().stream().map(Network::getName).filter(n -> n.startsWith(module + "_")))
                .containsExactlyInAnyOrder(module + "_default", module + "_back");

        Answer deleted = fx.api.method("DELETE", "/v1/modules/" + module);
        assertThat(deleted.status()).as(deleted.body()).isEqualTo(202);
        String delete = deleted.json().path("push").asText();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(250)).until(() -> state(delete).equals("applied"));
        assertThat(docker.listContainersCmd().withShowAll(true).withLabelFilter(Map.of("mesh.module", module)).exec()).isEmpty();
        assertThat(docker.listNetworksCmd().exec()).noneMatch(n -> n.getName().startsWith(module + "_"));
        assertThat(docker.listVolumesCmd().exec().getVolumes()).as("the named volume stays").anyMatch(v -> v.getName().equals(volume));
    }
}
