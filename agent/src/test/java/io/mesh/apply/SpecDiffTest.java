package io.mesh.apply;

import io.mesh.manifest.ContainerSpec;
import io.mesh.manifest.ManifestParser;
import io.mesh.manifest.ModuleSpec;
import io.mesh.wire.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The spec hash and the recreate's reasons (pure). The hashes below were computed by the code before the compose-grade
 * fields existed (decision 17): an agent upgraded past them must find every running container's hash unchanged, or it
 * would recreate every container of the fleet at once.
 */
class SpecDiffTest {
    /** Every field a container had before decision 17, as the manifest writes them. */
    static final String OLD = """
            module: hc-old
            hosts: [host-a]
            containers:
              minimal:
                image: mesh-demo/busybox:1
              full:
                image: mesh-demo/registry:2.8.2
                command: [/bin/registry, serve, /etc/docker/registry/config.yml]
                env: {REGISTRY_HTTP_ADDR: "127.0.0.1:5000", B: 1.10}
                network: bridge
                ports: ["5000:5000"]
                volumes: ["store-data:/var/lib/registry", "/srv/x:/x:ro"]
                restart: always
                stop-timeout: 30s
                privileged: false
                pid: host
                cap-add: [NET_ADMIN]
                healthcheck: {test: "wget -q -O- http://127.0.0.1:5000/v2/ || exit 1", interval: 5s, retries: 3}
                ready: {min-healthy: 1s, deadline: 1m}
                depends-on: [minimal]
            """;

    private static ModuleSpec module(String yaml) throws Exception {
        return new ManifestParser().parse(yaml).get(0);
    }

    private static ContainerSpec one(String... lines) throws Exception {
        StringBuilder b = new StringBuilder("module: hc-diff\nhosts: [host-a]\ncontainers:\n  web:\n    image: mesh-demo/busybox:1\n");
        for (String l : lines) b.append("    ").append(l).append('\n');
        return module(b.toString()).containers().get("web");
    }

    @Test
    void theHashOfASpecWrittenBeforeTheComposeFieldsIsWhatItWas() throws Exception {
        ModuleSpec m = module(OLD);
        assertThat(SpecDiff.hash(m.containers().get("minimal"))).isEqualTo("0b2aa55413e55c28");
        assertThat(SpecDiff.canonical(m.containers().get("minimal")))
                .isEqualTo("{\"image\":\"mesh-demo/busybox:1\",\"network\":\"host\",\"restart\":\"unless-stopped\",\"stop-timeout\":\"10s\"}");
        assertThat(SpecDiff.hash(m.containers().get("full"))).isEqualTo("b10b1f1a2278b57d");
        // Read back from the label written by the old code, and from the desired node the coordinator wrote: the same.
        ContainerSpec fromLabel = SpecDiff.parse(SpecDiff.canonical(m.containers().get("full")));
        assertThat(SpecDiff.hash(fromLabel)).isEqualTo("b10b1f1a2278b57d");
        ModuleSpec fromNode = new ManifestParser().parseJson(Json.text(m));
        assertThat(SpecDiff.hash(fromNode.containers().get("full"))).isEqualTo("b10b1f1a2278b57d");
    }

    @Test
    void rememberedHashesAndLabelsAreThoseOfTheSpecAskedFor() throws Exception {
        ContainerSpec x = one("env: {A: x}"), alsoX = one("env: {A: x}"), y = one("env: {A: y}");
        String hx = SpecDiff.hash(x), lx = SpecDiff.label(x, Map.of());
        assertThat(SpecDiff.hash(alsoX)).as("an equal spec, another instance").isEqualTo(hx);
        assertThat(SpecDiff.hash(y)).isNotEqualTo(hx);
        assertThat(SpecDiff.label(y, Map.of())).isNotEqualTo(lx).contains(SpecDiff.envDigest("y"));
        // past the memo's bound (it is cleared, not grown): still each spec's own
        for (int i = 0; i < 5_000; i++) {
            ContainerSpec s = ContainerSpec.builder("img:" + i).build();
            assertThat(SpecDiff.hash(s)).isEqualTo(java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
                    .digest(SpecDiff.canonical(s).getBytes(java.nio.charset.StandardCharsets.UTF_8))).substring(0, 16));
        }
        assertThat(SpecDiff.hash(x)).isEqualTo(hx);
        assertThat(SpecDiff.label(alsoX, Map.of())).isEqualTo(lx).contains(SpecDiff.envDigest("x"));
    }

    @Test
    void falseFlagsAndEmptyListsAreTheSpecWithoutThem() throws Exception {
        ContainerSpec plain = one();
        ContainerSpec falses = one("read-only: false", "init: false", "create-host-path: false", "labels: {}", "ulimits: {}", "tmpfs: []",
                "dns: []", "extra-hosts: []", "devices: []", "sysctls: {}", "security-opt: []");
        assertThat(SpecDiff.canonical(falses)).isEqualTo(SpecDiff.canonical(plain));
        assertThat(SpecDiff.hash(falses)).isEqualTo("0b2aa55413e55c28");
    }

    @Test
    void createHostPathIsNotPartOfTheHash() throws Exception {
        assertThat(SpecDiff.hash(one("create-host-path: true"))).isEqualTo(SpecDiff.hash(one()));
        assertThat(SpecDiff.reasons(one(), one("create-host-path: true"))).isEmpty();
    }

    /** Each new field changes the hash and names itself in the reasons, old and new value. */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            entrypoint: [/bin/sh, -c]                     | entrypoint: [] -> [/bin/sh, -c]
            user: "1000:1000"                             | user: unset -> 1000:1000
            working-dir: /srv                             | working-dir: unset -> /srv
            hostname: web-1                               | hostname: unset -> web-1
            labels: {com.example.team: store}             | labels: {} -> {com.example.team=store}
            memory: 512M                                  | memory: unset -> 512m
            cpus: 1.50                                    | cpus: unset -> 1.5
            pids-limit: 200                               | pids-limit: unset -> 200
            ulimits: {nofile: {soft: 1024, hard: 2048}}   | ulimits: {} -> {nofile=1024:2048}
            ulimits: {nproc: 65535}                       | ulimits: {} -> {nproc=65535:65535}
            tmpfs: /run                                   | tmpfs: [] -> [/run]
            read-only: true                               | read-only: false -> true
            extra-hosts: ["db:192.0.2.10"]                | extra-hosts: [] -> [db:192.0.2.10]
            stop-signal: SIGINT                           | stop-signal: unset -> SIGINT
            init: true                                    | init: false -> true
            logging: {driver: local}                      | logging: unset -> local
            logging: {options: {max-size: 1m}}            | logging: unset -> (default driver) {max-size=1m}
            dns: 192.0.2.53                               | dns: [] -> [192.0.2.53]
            devices: [/dev/fuse]                          | devices: [] -> [/dev/fuse]
            sysctls: {kernel.shm_rmid_forced: 1}          | sysctls: {} -> {kernel.shm_rmid_forced=1}
            security-opt: ["no-new-privileges:true"]      | security-opt: [] -> [no-new-privileges:true]
            """)
    void eachNewFieldIsInTheHashAndItsReason(String line, String reason) throws Exception {
        ContainerSpec before = one();
        ContainerSpec after = one(line);
        assertThat(SpecDiff.hash(after)).as(line).isNotEqualTo(SpecDiff.hash(before));
        assertThat(SpecDiff.reasons(before, after)).as(line).containsExactly(reason);
        // What the container's label keeps reads back as the same spec: the next apply finds it unchanged.
        assertThat(SpecDiff.hash(SpecDiff.parse(SpecDiff.canonical(after)))).isEqualTo(SpecDiff.hash(after));
        assertThat(SpecDiff.reasons(SpecDiff.parse(SpecDiff.canonical(after)), after)).isEmpty();
    }

    @Test
    void aChangedValueReadsOldToNew() throws Exception {
        assertThat(SpecDiff.reasons(one("memory: 256m"), one("memory: 512m"))).containsExactly("memory: 256m -> 512m");
        assertThat(SpecDiff.reasons(one("cpus: 0.5", "user: app"), one("cpus: 2.0", "user: app")))
                .containsExactly("cpus: 0.5 -> 2");
        assertThat(SpecDiff.reasons(one("logging: {driver: json-file, options: {max-size: 1m}}"),
                one("logging: {driver: json-file, options: {max-size: 2m}}")))
                .containsExactly("logging: json-file {max-size=1m} -> json-file {max-size=2m}");
        assertThat(SpecDiff.reasons(one("labels: [a=1, b=2]"), one("labels: {b: 2, a: 1}"))).isEmpty();
    }

    @Test
    void theBuilderMakesWhatTheParserMakes() throws Exception {
        ContainerSpec parsed = one("entrypoint: [/bin/sh, -c]", "memory: 64m", "ulimits: {nofile: 1024}", "labels: {team: store}",
                "logging: {driver: json-file, options: {max-size: 1m}}", "read-only: true");
        ContainerSpec built = ContainerSpec.builder("mesh-demo/busybox:1").entrypoint(List.of("/bin/sh", "-c")).memory("64m")
                .ulimits(Map.of("nofile", new ContainerSpec.Ulimit(1024, 1024))).labels(Map.of("team", "store"))
                .logging(new ContainerSpec.Logging("json-file", Map.of("max-size", "1m"))).readOnly(true).build();
        assertThat(built).isEqualTo(parsed);
        assertThat(built.toBuilder().build()).isEqualTo(built);
        assertThat(SpecDiff.canonical(built)).isEqualTo(SpecDiff.canonical(parsed))
                .startsWith("{\"entrypoint\":[\"/bin/sh\",\"-c\"],\"image\":");
    }
}
