package io.mesh.fleet;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerClientImpl;
import com.github.dockerjava.httpclient5.ApacheDockerHttpClient;
import io.mesh.client.CoordinatorClient;
import io.mesh.client.ExitCodes;
import io.mesh.client.MeshCli;
import io.mesh.docker.Labels;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fleet on one machine, end to end: a module for every host pushed through coordinator 1 runs exactly once on
 * each engine (seen through each engine's own Docker API, not mesh's reports), and the operator's {@code mesh}
 * (the real launcher) still answers through coordinator 2 when coordinator 1 is killed.
 */
@ExtendWith(Fleet.class)
class FleetIT {
    static final String BUSYBOX = "mesh-demo/busybox:1";

    record Run(int code, String out, String err) {}

    /** {@code mesh ARGS} in this JVM. */
    static Run mesh(String... args) {
        StringWriter out = new StringWriter(), err = new StringWriter();
        CommandLine cl = MeshCli.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int code = cl.execute(args);
        return new Run(code, out.toString(), err.toString());
    }

    /** {@code deploy/bin/mesh ARGS} as an operator runs it, with the fleet's {@code MESH_COORDINATOR}, bounded. */
    static Run launcher(Fleet fleet, String coordinators, String... args) throws Exception {
        Path out = Files.createTempFile("mesh-out", ".txt"), err = Files.createTempFile("mesh-err", ".txt");
        try {
            ProcessBuilder pb = new ProcessBuilder(new java.util.ArrayList<>(List.of(fleet.repo().resolve("deploy/bin/mesh").toString())));
            pb.command().addAll(List.of(args));
            pb.environment().put("MESH_COORDINATOR", coordinators);
            Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("deploy/bin/mesh " + String.join(" ", args) + " did not finish within 60 s");
            }
            return new Run(p.exitValue(), Files.readString(out), Files.readString(err));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    static String manifest(String module) {
        // network none: the engines share the machine's loopback, so nothing here may bind a port.
        return "module: " + module + "\nhosts: [\"*\"]\ncontainers:\n"
                + "  app:\n    image: " + BUSYBOX + "\n"
                + "    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "    network: none\n    stop-timeout: 2s\n    restart: unless-stopped\n";
    }

    static int healthz(URI coordinator) throws Exception {
        try {
            return HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()
                    .send(HttpRequest.newBuilder(coordinator.resolve("/healthz")).timeout(Duration.ofSeconds(10)).build(),
                            HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (java.io.IOException e) {
            return -1;
        }
    }

    @Test
    void aModuleForEveryHostRunsOnceOnEachEngineAndMeshFailsOverWhenCoordinatorOneIsKilled(Fleet fleet) throws Exception {
        String module = "fleetit" + String.format("%06x", ThreadLocalRandom.current().nextInt(1 << 24));
        String revision = "fleet-it-1";
        URI first = fleet.coordinators().get(0), second = fleet.coordinators().get(1);
        Path dir = Files.createTempDirectory("fleet-it");
        Path file = dir.resolve(module + ".yaml");
        Files.writeString(file, manifest(module));
        try {
            // Pushed through coordinator 1 alone, followed until every host applied.
            long t0 = System.nanoTime();
            Run push = mesh("push", file.toString(), "--revision", revision, "--wait", "--timeout", "120s", "--interval", "500ms",
                    "--coordinator=" + first);
            System.out.printf("push applied on every host in %.1f s%n", (System.nanoTime() - t0) / 1e9);
            assertThat(push.code()).as(push.toString()).isEqualTo(ExitCodes.OK);
            assertThat(push.out()).contains("applied on every host");
            String pushId = push.out().substring(0, push.out().indexOf(' '));
            JsonNode view = new CoordinatorClient(first, null).get("/v1/pushes/" + pushId).json();
            Set<String> targets = new HashSet<>();
            view.path("targets").forEach(t -> {
                if (t.path("module").asText().equals(module)) targets.add(t.path("host").asText());
            });
            assertThat(targets).as("hosts the push targeted").containsExactlyInAnyOrderElementsOf(fleet.hosts());
            for (String host : fleet.hosts()) assertThat(push.out()).contains(host);

            // Each engine's own API: exactly one container of the module, running, with mesh's labels.
            Set<String> ids = new HashSet<>();
            for (String host : fleet.hosts()) {
                List<Container> cs = fleet.containers(host, module);
                assertThat(cs).as("containers of %s on %s", module, host).hasSize(1);
                Container c = cs.get(0);
                assertThat(c.getState()).as(host).isEqualTo("running");
                assertThat(c.getNames()).as(host).containsExactly("/" + module + "-app");
                assertThat(c.getLabels()).as(host).containsEntry(Labels.MODULE, module).containsEntry(Labels.CONTAINER, "app")
                        .containsEntry(Labels.REVISION, revision).containsKey(Labels.SPEC_HASH);
                InspectContainerResponse inspect = fleet.docker(host).inspectContainerCmd(c.getId()).exec();
                assertThat(inspect.getHostConfig().getNetworkMode()).as(host).isEqualTo("none");
                assertThat(inspect.getConfig().getImage()).as(host).isEqualTo(BUSYBOX);
                ids.add(c.getId());
            }
            assertThat(ids).as("one container per engine, each its own").hasSize(fleet.hosts().size());
            // The engines are not the machine's default engine: nothing of the module runs there.
            try (DockerClient defaultEngine = defaultEngine()) {
                assertThat(defaultEngine.listContainersCmd().withShowAll(true).withLabelFilter(Map.of(Labels.MODULE, module)).exec()).isEmpty();
            }

            // Coordinator 1 dies: mesh, given both URLs (MESH_COORDINATOR as the fleet's env has it), asks coordinator 2.
            fleet.killCoordinator(1);
            assertThat(healthz(first)).isEqualTo(-1);
            String both = fleet.env().get("MESH_COORDINATOR");
            assertThat(both).isEqualTo(first + "," + second);
            t0 = System.nanoTime();
            Run status = launcher(fleet, both, "status");
            System.out.printf("mesh status with coordinator 1 down: %.1f s%n", (System.nanoTime() - t0) / 1e9);
            assertThat(status.code()).as(status.toString()).isEqualTo(ExitCodes.OK);
            assertThat(status.err()).contains(first + " does not answer", "asking " + second);
            for (String host : fleet.hosts()) {
                // the host table's line (the image table below it names the host and the module's container too)
                assertThat(status.out().lines().filter(l -> l.startsWith(host + " ") && l.contains(module) && !l.contains("sha256:")))
                        .as("%s's line in mesh status:%n%s", host, status.out()).singleElement().asString()
                        .contains("online", revision, "applied");
            }
            Run one = launcher(fleet, both, "status", pushId);
            assertThat(one.code()).as(one.toString()).isEqualTo(ExitCodes.OK);
            assertThat(one.out()).contains("state applied");

            // fleet.sh up starts what is missing: coordinator 1 answers again.
            fleet.up();
            assertThat(healthz(first)).isEqualTo(200);
            Run again = mesh("status", "--coordinator=" + first);
            assertThat(again.code()).as(again.toString()).isEqualTo(ExitCodes.OK);
            assertThat(again.err()).isEmpty();
        } finally {
            if (healthz(first) != 200) fleet.up();
            fleet.removeModule(module);
            for (String host : fleet.hosts()) assertThat(fleet.containers(host, module)).as("left on " + host).isEmpty();
            Files.deleteIfExists(file);
            Files.deleteIfExists(dir);
        }
    }

    static DockerClient defaultEngine() {
        DefaultDockerClientConfig config = DefaultDockerClientConfig.createDefaultConfigBuilder().withDockerHost("unix:///var/run/docker.sock").build();
        return DockerClientImpl.getInstance(config, new ApacheDockerHttpClient.Builder().dockerHost(config.getDockerHost())
                .connectionTimeout(Duration.ofSeconds(10)).responseTimeout(Duration.ofSeconds(60)).build());
    }
}
