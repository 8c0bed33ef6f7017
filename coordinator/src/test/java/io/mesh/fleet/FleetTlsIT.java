package io.mesh.fleet;

import com.github.dockerjava.api.model.Container;
import io.mesh.curator.MeshZk;
import io.mesh.curator.ZkTls;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fleet all TLS ({@code fleet.sh up --tls}; SPEC "Running it for real"; docs/decisions/0040-tls.md): certificates
 * made by the setup, ZooKeeper on its secureClientPort only, coordinators on HTTPS only, every ZooKeeper client with
 * {@code --zk-tls}. A push through {@code deploy/bin/mesh} with the fleet's env lands on every engine (their own APIs
 * say so); plain HTTP (answered 400 naming https://), a client without the fleet's CA and a ZooKeeper client without TLS
 * are refused. The fleet is switched back to plain text after, for the other classes (the engines stay up; ZooKeeper
 * keeps its data).
 */
@ExtendWith(Fleet.class)
class FleetTlsIT {
    /** A process of deploy/bin, its exit code and output. */
    record Run(int code, String out, String err) {}

    /** {@code deploy/bin/<tool> ARGS} with {@code env} as its whole mesh environment, bounded by 60 s. */
    private static Run tool(Fleet fleet, Map<String, String> env, String tool, String... args) throws Exception {
        Path out = Files.createTempFile("tls-out", ".txt"), err = Files.createTempFile("tls-err", ".txt");
        try {
            List<String> cmd = new ArrayList<>(List.of(fleet.repo().resolve("deploy/bin/" + tool).toString()));
            cmd.addAll(List.of(args));
            ProcessBuilder pb = new ProcessBuilder(cmd);
            pb.environment().keySet().removeIf(k -> k.startsWith("MESH_"));
            pb.environment().putAll(env);
            Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("deploy/bin/" + tool + " " + String.join(" ", args) + " did not finish within 60 s");
            }
            return new Run(p.exitValue(), Files.readString(out), Files.readString(err));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    @Test
    void anAllTlsFleetAppliesAPushAndRefusesPlainClients(Fleet fleet) throws Exception {
        String module = "tls-" + Long.toHexString(System.nanoTime()).substring(0, 6);
        Path dir = Files.createTempDirectory("fleet-tls");
        try {
            fleet.fleetSh("up", String.valueOf(Fleet.SIZE), "--tls");
            Map<String, String> env = Fleet.readEnv(Fleet.RUN.resolve("env"));
            assertThat(env.get("MESH_COORDINATOR").split(",")).as("the env's coordinators").allMatch(u -> u.startsWith("https://127.0.0.1:"));
            assertThat(env).containsKeys("MESH_CA", "MESH_ZK_TLS");
            Map<String, String> client = Map.of("MESH_COORDINATOR", env.get("MESH_COORDINATOR"), "MESH_CA", env.get("MESH_CA"),
                    "MESH_ZK", env.get("MESH_ZK"), "MESH_ZK_TLS", env.get("MESH_ZK_TLS"));

            // A push lands on every engine, over HTTPS to the coordinators and TLS to ZooKeeper everywhere.
            Path file = Fleet.write(dir, module + ".yaml", FleetIT.manifest(module));
            Run push = tool(fleet, client, "mesh", "push", file.toString(), "--revision", "tls-1", "--wait", "--timeout", "90s",
                    "--interval", "500ms");
            assertThat(push.code()).as(push.toString()).isZero();
            assertThat(push.out()).contains("applied on every host");
            for (String h : fleet.hosts()) {
                List<Container> cs = fleet.containers(h, module);
                assertThat(cs).as("%s's engine", h).singleElement().satisfies(c -> assertThat(c.getState()).isEqualTo("running"));
            }

            // Plain HTTP to a coordinator's port never reaches the API: 400, naming https:// (decision 40).
            URI https = URI.create(env.get("MESH_COORDINATOR").split(",")[0]);
            for (String path : List.of("/healthz", "/v1/hosts")) {
                URI plain = URI.create("http://" + https.getHost() + ":" + https.getPort() + path);
                HttpResponse<String> answer = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()
                        .send(HttpRequest.newBuilder(plain).timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
                assertThat(answer.statusCode()).as("plain HTTP to %s: %s", plain, answer.body()).isEqualTo(400);
                assertThat(answer.body()).contains("speaks HTTPS", "https://");
            }

            // A client without the fleet's CA refuses the coordinators' certificate, naming the fix.
            Run noCa = tool(fleet, Map.of("MESH_COORDINATOR", env.get("MESH_COORDINATOR")), "mesh", "status");
            assertThat(noCa.code()).as(noCa.toString()).isNotZero();
            assertThat(noCa.out() + noCa.err()).contains("--ca");

            // With the fleet's --zk-tls a ZooKeeper client connects (Curator, and zkcli); one without TLS, at the same
            // moment, does not.
            try (CuratorFramework secure = MeshZk.connect(env.get("MESH_ZK"), Duration.ofSeconds(20), null,
                    new ZkPaths(ZkPaths.DEFAULT_ROOT), ZkTls.resolve(Path.of(env.get("MESH_ZK_TLS")), Map.of()));
                 CuratorFramework bare = CuratorFrameworkFactory.newClient(env.get("MESH_ZK"), 5_000, 3_000, new RetryOneTime(200))) {
                assertThat(secure.getChildren().forPath(fleet.paths().agents())).containsAll(fleet.hosts());
                bare.start();
                assertThat(bare.blockUntilConnected(6, TimeUnit.SECONDS)).as("a plain ZooKeeper client connected").isFalse();
                assertThat(secure.getChildren().forPath(fleet.paths().agents())).as("the ensemble serves meanwhile").containsAll(fleet.hosts());
            }
            Run zkcli = tool(fleet, client, "zkcli", "ls", fleet.paths().agents());
            assertThat(zkcli.code()).as(zkcli.toString()).isZero();
            assertThat(zkcli.out()).contains(fleet.hosts().get(0));

            Run delete = tool(fleet, client, "mesh", "delete", module, "--wait", "--timeout", "90s");
            assertThat(delete.code()).as(delete.toString()).isZero();
            for (String h : fleet.hosts()) assertThat(fleet.containers(h, module)).as("%s's engine after the delete", h).isEmpty();
        } finally {
            fleet.fleetSh("up", String.valueOf(Fleet.SIZE));
            fleet.removeModule(module);
        }
    }
}
