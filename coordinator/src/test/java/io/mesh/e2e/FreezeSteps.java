package io.mesh.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.coordinator.CoordinatorExtension;
import io.mesh.coordinator.CoordinatorExtension.Answer;
import io.mesh.docker.DockerEngine;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.Json;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The steps the freeze tests share, on one host: push a module of one container (with a window), freeze it, read a
 * push's state and the host's report, and the container's environment (which revision runs).
 *
 * @param zk   the ZooKeeper
 * @param api  the coordinator
 * @param host the agent's host
 */
record FreezeSteps(ZooKeeperExtension zk, CoordinatorExtension api, String host) {
    static final Duration LANDS = Duration.ofSeconds(60);

    DockerEngine docker() { return TestDocker.engine(); }

    /** @return a module of one container {@code web}, with a window {@code sweep} that holds it, in revision {@code mode} */
    String manifest(String name, String mode) {
        return "module: " + name + "\nhosts: [" + host + "]\ncontainers:\n"
                + "  web:\n    image: " + BUSYBOX + "\n"
                + "    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "    network: none\n"
                + "    env: {MODE: \"" + mode + "\"}\n    stop-timeout: 2s\n"
                + "schedules:\n  sweep:\n    cron: \"30 3 * * *\"\n    while-stopped: [web]\n"
                + "    step: {image: " + BUSYBOX + ", command: [sleep, \"1\"]}\n    timeout: 1m\n";
    }

    /** @return the push's id, once accepted */
    String push(String yaml, String revision) throws Exception {
        Answer a = api.post("/v1/pushes", yaml.getBytes(StandardCharsets.UTF_8), Map.of("X-Mesh-Revision", revision));
        assertThat(a.status()).as(a.body()).isEqualTo(202);
        return a.json().path("push").asText();
    }

    /** {@code POST /v1/freezes}, which must answer 201. */
    Answer freeze(String body) throws Exception {
        Answer a = api.post("/v1/freezes", body.getBytes(StandardCharsets.UTF_8), Map.of());
        assertThat(a.status()).as(a.body()).isEqualTo(201);
        return a;
    }

    /** @return the push status's entry of this host and {@code name}; an empty object when none */
    JsonNode target(String push, String name) throws Exception {
        for (JsonNode t : api.get("/v1/pushes/" + push).json().path("targets")) {
            if (t.path("host").asText().equals(host) && t.path("module").asText().equals(name)) return t;
        }
        return Json.MAPPER.createObjectNode();
    }

    String state(String push, String name) throws Exception { return target(push, name).path("state").asText(); }

    ApplyReport report(String name) throws Exception {
        return Json.read(zk.client().getData().forPath(zk.paths().report(host, name)), ApplyReport.class);
    }

    /** @return the environment of the module's container, comma-joined: {@code MODE=...} says which revision runs */
    String env(String name) { return String.join(",", docker().inspect(name + "-web").getConfig().getEnv()); }

    /** Pushes r1 and waits for it to run; returns the container's id. */
    String landed(String name) throws Exception {
        String p = push(manifest(name, "one"), "r1");
        await().atMost(LANDS).until(() -> state(p, name).equals("applied"));
        return docker().inspect(name + "-web").getId();
    }
}
