package io.mesh.manifest;

import io.mesh.wire.Json;
import io.mesh.wire.MeshVersion;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** The fields a push uses, as an agent's parser meets them, against the fields a version knows (decision 41). */
class ManifestFieldsTest {
    private static final String RICH = """
            module: shop
            hosts: [host-a]
            containers:
              web:
                image: mesh-demo/busybox:1
                command: [sleep, "1000"]
                hooks: {pre-stop: [sh, -c, "true"], timeout: 5s}
                healthcheck: {test: [CMD, "true"], interval: 5s}
            schedules:
              nightly:
                cron: "0 3 * * *"
                while-stopped: [web]
                step: {image: mesh-demo/busybox:1, command: ["true"]}
                gate: {prometheus: {url: "http://127.0.0.1:9090", query: "up"}, on-blocked: skip}
            rollout:
              canary: 1
            """;

    @Test
    void aPushUsesWhatItsDesiredNodesCarryAndThisVersionKnowsAllOfIt() throws Exception {
        ModuleSpec spec = new ManifestParser().parse(RICH).get(0);
        Set<String> used = ManifestFields.used(Json.MAPPER.valueToTree(spec));
        assertThat(used).contains("containers", "schedules", "rollout.canary", "containers.*.hooks", "containers.*.hooks.pre-stop",
                "containers.*.healthcheck.test", "schedules.*.step.image", "schedules.*.gate.prometheus.query", "schedules.*.gate.on-blocked");
        assertThat(ManifestFields.known()).as("every field a spec's JSON carries is one the parser knows").containsAll(used);
        for (String example : new String[]{"../deploy/examples/store.yaml", "../deploy/examples/walkthrough.yaml"}) {
            for (ModuleSpec m : new ManifestParser().parse(Files.readString(Path.of(example)))) {
                assertThat(ManifestFields.known()).as(example).containsAll(ManifestFields.used(Json.MAPPER.valueToTree(m)));
            }
        }
    }

    @Test
    void anAgentKnowsTheFieldsOfItsVersionAndANodeWithoutOneIsTheFirstReleases() throws Exception {
        Set<String> used = ManifestFields.used(Json.MAPPER.valueToTree(new ManifestParser().parse(RICH).get(0)));
        assertThat(MeshVersion.unknownTo(ManifestFields.FIRST, used)).isEmpty();
        assertThat(MeshVersion.unknownTo("0.2.0", used)).as("a newer agent knows what this version knows").isEmpty();
        assertThat(MeshVersion.unknownTo("0.0.9", used)).as("older than the first release").containsOnlyKeys(used)
                .containsValue(ManifestFields.FIRST);
        assertThat(MeshVersion.unknownTo("dev", used)).as("no version: the first release's").isEmpty();
        assertThat(MeshVersion.unknownTo(null, used)).isEmpty();
    }
}
