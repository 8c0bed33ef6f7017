package io.mesh.fleet;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.api.model.Network;
import io.mesh.client.ExitCodes;
import io.mesh.e2e.ShopCompose;
import io.mesh.manifest.ManifestParser;
import io.mesh.manifest.ModuleSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

import static io.mesh.e2e.ShopCompose.exec;
import static io.mesh.fleet.FleetIT.mesh;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A compose app runs unchanged on the fleet (decision 31): a three-service compose file (services reaching each other
 * by name, a named volume, a bind mount, a healthcheck, {@code depends_on: condition: service_healthy}) imported with
 * {@code mesh import-compose} and pushed runs on every engine, each service reaching the others by name from inside
 * its container; {@code mesh delete} removes the containers and the networks and keeps the named volume. Every check
 * is made through each engine's own Docker API.
 */
@ExtendWith(Fleet.class)
class ComposeAppIT {
    private static String id(Fleet fleet, String host, String dockerName) {
        return fleet.containers(host, dockerName.substring(0, dockerName.indexOf('-'))).stream()
                .filter(c -> List.of(c.getNames()).contains("/" + dockerName)).map(Container::getId).findFirst()
                .orElseThrow(() -> new AssertionError(dockerName + " is not on " + host));
    }

    @Test
    void anImportedComposeAppRunsOnEveryEngineAndItsServicesReachEachOtherByName(Fleet fleet) throws Exception {
        String module = "shop" + String.format("%06x", ThreadLocalRandom.current().nextInt(1 << 24));
        // The bind mount's source must be under the fleet agents' --allow-host-path.
        Path dir = Files.createDirectories(Fleet.RUN.resolve("share").resolve(module));
        Files.createDirectories(dir.resolve("conf"));
        Files.writeString(dir.resolve("conf/db.conf"), "ready\n");
        Path file = dir.resolve("compose.yaml");
        Files.writeString(file, ShopCompose.compose(FleetIT.BUSYBOX));
        String volume = null;
        try {
            FleetIT.Run imported = mesh("import-compose", file.toString(), "--module", module, "--hosts", String.join(",", fleet.hosts()));
            assertThat(imported.code()).as(imported.toString()).isEqualTo(ExitCodes.OK);
            Path manifest = dir.resolve(module + ".yaml");
            Files.writeString(manifest, imported.out());
            ModuleSpec spec = new ManifestParser().parse(imported.out()).get(0);
            assertThat(spec.networks()).as(imported.out()).containsKeys("default", "back");
            volume = spec.containers().get("db").volumes().get(0).split(":")[0];

            FleetIT.Run push = mesh("push", manifest.toString(), "--wait", "--timeout", "180s", "--interval", "500ms",
                    "--coordinator=" + fleet.coordinators().get(0));
            assertThat(push.code()).as(push.toString()).isEqualTo(ExitCodes.OK);

            for (String host : fleet.hosts()) {
                DockerClient docker = fleet.docker(host);
                String web = id(fleet, host, module + "-web"), worker = id(fleet, host, module + "-worker"), db = id(fleet, host, module + "-db");
                assertThat(exec(docker, web, "ping", "-c", "1", "-W", "2", "db")).as("web reaches db by name on %s", host).isZero();
                assertThat(exec(docker, web, "ping", "-c", "1", "-W", "2", "worker")).as("web reaches worker on %s", host).isZero();
                assertThat(exec(docker, worker, "ping", "-c", "1", "-W", "2", "postgres")).as("worker reaches db's alias on %s", host).isZero();
                assertThat(exec(docker, db, "cat", "/conf/db.conf")).as("the bind mount on %s", host).isZero();
                assertThat(exec(docker, web, "nslookup", "-timeout=1", "-retry=1", "postgres")).as("the alias is back's alone on %s", host).isNotZero();
                List<String> networks = docker.listNetworksCmd().exec().stream().map(Network::getName).filter(n -> n.startsWith(module + "_")).toList();
                assertThat(networks).as(host).containsExactlyInAnyOrder(module + "_default", module + "_back");
            }

            FleetIT.Run delete = mesh("delete", module, "--wait", "--timeout", "120s", "--interval", "500ms",
                    "--coordinator=" + fleet.coordinators().get(0));
            assertThat(delete.code()).as(delete.toString()).isEqualTo(ExitCodes.OK);
            for (String host : fleet.hosts()) {
                DockerClient docker = fleet.docker(host);
                assertThat(fleet.containers(host, module)).as("containers left on %s", host).isEmpty();
                assertThat(docker.listNetworksCmd().exec()).as("networks left on %s", host).noneMatch(n -> n.getName().startsWith(module + "_"));
                String v = volume;
                assertThat(docker.listVolumesCmd().exec().getVolumes()).as("the named volume stays on %s", host)
                        .anyMatch(x -> x.getName().equals(v));
            }
        } finally {
            fleet.removeModule(module);
            for (String host : fleet.hosts()) {
                DockerClient docker = fleet.docker(host);
                docker.listNetworksCmd().exec().stream().filter(n -> n.getName().startsWith(module + "_"))
                        .forEach(n -> { try { docker.removeNetworkCmd(n.getId()).exec(); } catch (RuntimeException ignored) { } });
                if (volume != null) {
                    try { docker.removeVolumeCmd(volume).exec(); } catch (RuntimeException ignored) { }
                }
            }
            try (var files = Files.walk(dir)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }
}
