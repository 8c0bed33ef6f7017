package io.mesh.apply;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.command.BuildImageResultCallback;
import com.github.dockerjava.api.model.Event;
import io.mesh.docker.DockerEngine;
import io.mesh.testing.ApplierExtension;
import io.mesh.testing.DockerEvents;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.ContainerAction;
import io.mesh.wire.Json;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.UUID;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Docker copies an image's labels onto its containers: an image built with {@code LABEL mesh.window=...} would make
 * a managed container look like a window's step to mesh. Such an image is refused before anything is created
 * (decision 20). Real engine (an image built here from busybox, no network), real ZooKeeper; Docker's events.
 */
class ImageMeshLabelTest {
    private static final String HOST = ApplierExtension.HOST;
    @RegisterExtension
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    final ApplierExtension here = new ApplierExtension(zk, "fa-");
    private DockerEngine docker;
    private String module;
    private String image;

    @BeforeEach
    void setUp() throws Exception {
        docker = here.docker();
        module = here.module();
        image = "fa-evil-" + UUID.randomUUID().toString().substring(0, 8) + ":1";
        Path context = Files.createTempDirectory("fa-build");
        Files.writeString(context.resolve("Dockerfile"), "FROM " + BUSYBOX + "\nLABEL mesh.window=w-evil\n");
        docker.client().buildImageCmd(context.toFile()).withTags(Set.of(image)).exec(new BuildImageResultCallback()).awaitImageId();
    }

    @AfterEach
    void tearDown() {
        TestDocker.clean(module);
        DockerClient c = docker.client();
        c.removeImageCmd(image).withForce(true).exec();
    }

    @Test
    void anImageCarryingAMeshLabelFailsItsContainerAndNothingIsCreated() throws Exception {
        zk.setDesired("module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n"
                + "  web:\n    image: " + image + "\n    pull: never\n    command: [sh, -c, \"sleep 60\"]\n    network: none\n", "r1");
        try (DockerEvents events = DockerEvents.record(module)) {
            ApplyReport r = here.applier().apply(module, () -> false);
            events.settle();
            ApplyReport.ContainerResult web = r.containers().stream().filter(c -> c.name().equals("web")).findFirst().orElseThrow();
            assertThat(web.action()).as(Json.text(r)).isEqualTo(ContainerAction.FAILED);
            assertThat(String.join("; ", web.reasons())).contains("image " + image, "mesh.window", "rebuild the image without it");
            List<Event> seen = events.all();
            assertThat(seen).as(DockerEvents.describe(seen)).noneSatisfy(e -> assertThat(TestDocker.action(e)).isEqualTo("create"));
        }
        assertThat(docker.idByName(module + "-web")).isNull();
    }
}
