package io.mesh.client.compose;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.mesh.manifest.ContainerSpec;
import io.mesh.manifest.ManifestParser;
import io.mesh.manifest.ModuleSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Real-world compose files, {@code src/test/resources/compose-corpus/<name>.yml}, each stored as its repository has it
 * below a first line naming its source (repository, path, commit, license). Each either imports (as module
 * {@code <name>}) and its manifest, with every image swapped for {@code mesh-demo/busybox:1} so that it would run here,
 * passes {@link ManifestParser}; or it is refused with exactly the field paths {@link #EXPECTED} lists, in order, so
 * that a change in what imports shows here. {@code docs/compose-corpus.md} tabulates the same outcomes.
 */
class ComposeRealWorldCorpusTest {
    /** The image every imported container runs here: one of the demo images the fleet loads. */
    static final String RUNNABLE_IMAGE = "mesh-demo/busybox:1";

    /** Per file: an empty list means it imports; else the path of every refusal, in the order the import gives them. */
    static final Map<String, List<String>> EXPECTED = new LinkedHashMap<>();

    static {
        EXPECTED.put("apisix", List.of(
                "services.apisix.image"));
        EXPECTED.put("awesome-compose-elk", List.of(
                "services.elasticsearch.container_name",
                "services.logstash.container_name",
                "services.kibana.container_name"));
        EXPECTED.put("awesome-compose-nginx-flask-mysql", List.of(
                "secrets",
                "services.db.secrets",
                "services.db.expose",
                "services.backend.build",
                "services.backend.secrets",
                "services.proxy.build",
                "services.backend.image",
                "services.proxy.image"));
        EXPECTED.put("awesome-compose-pihole-doh", List.of(
                "services.cloudflared.environment[0]",
                "services.pihole.environment[0]",
                "services.pihole.environment[2]",
                "services.pihole.environment[4]",
                "services.pihole.environment[5]",
                "services.pihole.environment[6]",
                "services.pihole.environment[7]",
                "services.pihole.environment[8]",
                "networks.dns-net.ipam",
                "services.cloudflared.networks.dns-net.ipv4_address",
                "services.cloudflared.container_name",
                "services.pihole.container_name"));
        EXPECTED.put("awesome-compose-react-java-mysql", List.of(
                "secrets",
                "services.backend.build",
                "services.backend.secrets",
                "services.db.secrets",
                "services.db.expose",
                "services.frontend.build",
                "services.frontend.volumes[1]",
                "services.backend.image",
                "services.frontend.image"));
        EXPECTED.put("compose-e2e-external", List.of(
                "services.other.networks.test_network.ipv4_address"));
        EXPECTED.put("free5gc", List.of(
                "networks.privnet.ipam",
                "networks.privnet.driver_opts",
                "services.free5gc-upf.container_name",
                "services.free5gc-upf.build",
                "services.db.container_name",
                "services.db.expose",
                "services.free5gc-nrf.container_name",
                "services.free5gc-nrf.build",
                "services.free5gc-nrf.expose",
                "services.free5gc-amf.container_name",
                "services.free5gc-amf.build",
                "services.free5gc-amf.expose",
                "services.free5gc-ausf.container_name",
                "services.free5gc-ausf.build",
                "services.free5gc-ausf.expose",
                "services.free5gc-nssf.container_name",
                "services.free5gc-nssf.build",
                "services.free5gc-nssf.expose",
                "services.free5gc-pcf.container_name",
                "services.free5gc-pcf.build",
                "services.free5gc-pcf.expose",
                "services.free5gc-smf.container_name",
                "services.free5gc-smf.build",
                "services.free5gc-smf.expose",
                "services.free5gc-udm.container_name",
                "services.free5gc-udm.build",
                "services.free5gc-udm.expose",
                "services.free5gc-udr.container_name",
                "services.free5gc-udr.build",
                "services.free5gc-udr.expose",
                "services.free5gc-n3iwf.container_name",
                "services.free5gc-n3iwf.build",
                "services.free5gc-webui.container_name",
                "services.free5gc-webui.build",
                "services.free5gc-upf.image",
                "services.free5gc-nrf.image",
                "services.free5gc-amf.image",
                "services.free5gc-ausf.image",
                "services.free5gc-nssf.image",
                "services.free5gc-pcf.image",
                "services.free5gc-smf.image",
                "services.free5gc-udm.image",
                "services.free5gc-udr.image",
                "services.free5gc-n3iwf.image",
                "services.free5gc-webui.image"));
        EXPECTED.put("jaeger-hotrod", List.of(
                "services.jaeger.image",
                "services.hotrod.image"));
        EXPECTED.put("kong", List.of(
                "services.kong-migrations.image",
                "services.kong-migrations.environment.KONG_DATABASE",
                "services.kong-migrations.environment.KONG_PG_DATABASE",
                "services.kong-migrations.environment.KONG_PG_USER",
                "services.kong-migrations-up.image",
                "services.kong-migrations-up.environment.KONG_DATABASE",
                "services.kong-migrations-up.environment.KONG_PG_DATABASE",
                "services.kong-migrations-up.environment.KONG_PG_USER",
                "services.kong.image",
                "services.kong.user",
                "services.kong.environment.KONG_PROXY_LISTEN",
                "services.kong.environment.KONG_ADMIN_LISTEN",
                "services.kong.environment.KONG_PREFIX",
                "services.kong.environment.KONG_DATABASE",
                "services.kong.environment.KONG_PG_DATABASE",
                "services.kong.environment.KONG_PG_USER",
                "services.kong.ports[0]",
                "services.kong.ports[1]",
                "services.kong.volumes[0]",
                "services.db.environment.POSTGRES_DB",
                "services.db.environment.POSTGRES_USER",
                "services.db.healthcheck.test[3]",
                "secrets",
                "volumes.kong_prefix_vol.driver_opts",
                "volumes.kong_tmp_vol.driver_opts",
                "services.kong-migrations.profiles",
                "services.kong-migrations.secrets",
                "services.kong-migrations-up.command",
                "services.kong-migrations-up.profiles",
                "services.kong-migrations-up.secrets",
                "services.kong.secrets",
                "services.kong.ports[0]",
                "services.kong.ports[1]",
                "services.kong.restart",
                "services.kong.volumes[0]",
                "services.db.profiles",
                "services.db.secrets",
                "services.db.stdin_open",
                "services.db.tty"));
        EXPECTED.put("penpot", List.of(
                "services.penpot-mailcatch.expose"));
        EXPECTED.put("temporal-postgres", List.of(
                "networks.temporal-network.name",
                "services.postgresql.container_name",
                "services.temporal.container_name",
                "services.temporal-admin-tools.container_name",
                "services.temporal-admin-tools.stdin_open",
                "services.temporal-admin-tools.tty",
                "services.temporal-web.container_name"));
        EXPECTED.put("voting-app", List.of(
                "services.votes.build",
                "services.result.build",
                "services.worker.build",
                "services.redis.container_name",
                "services.redis.ports[0]",
                "services.db.container_name",
                "services.votes.image",
                "services.result.image",
                "services.worker.image"));
        EXPECTED.put("voting-app-images", List.of());
    }

    static Path corpus() throws URISyntaxException {
        return Path.of(ComposeRealWorldCorpusTest.class.getResource("/compose-corpus").toURI());
    }

    static Stream<String> files() throws IOException, URISyntaxException {
        try (Stream<Path> files = Files.list(corpus())) {
            return files.map(f -> f.getFileName().toString()).filter(n -> n.endsWith(".yml")).map(n -> n.substring(0, n.length() - 4))
                    .sorted().toList().stream();
        }
    }

    private static ComposeImport.Imported convert(String name) throws Exception {
        Path file = corpus().resolve(name + ".yml");
        return ComposeImport.of(file, List.of("host-a")).module(name).convert(Files.readString(file));
    }

    /** The manifest with every container's image replaced by {@link #RUNNABLE_IMAGE}, as YAML. */
    static String runnable(String manifest) throws IOException {
        YAMLMapper yaml = new YAMLMapper();
        ObjectNode m = (ObjectNode) yaml.readTree(manifest);
        m.get("containers").forEach(c -> ((ObjectNode) c).put("image", RUNNABLE_IMAGE));
        return yaml.writeValueAsString(m);
    }

    @Test
    void everyFileHasItsSourceAndAnExpectedOutcomeAndEveryExpectationItsFile() throws Exception {
        assertThat(files().toList()).hasSizeGreaterThanOrEqualTo(10).containsExactlyInAnyOrderElementsOf(EXPECTED.keySet());
        for (String name : files().toList()) {
            String first = Files.readString(corpus().resolve(name + ".yml")).lines().findFirst().orElse("");
            assertThat(first).as(name).matches("# Source: https://github\\.com/[^/ ]+/[^/ ]+/blob/[0-9a-f]{40}/\\S+ \\(license: .+\\)");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("files")
    void importsAndRunsHereOrIsRefusedAtExactlyTheExpectedPaths(String name) throws Exception {
        List<String> expected = EXPECTED.get(name);
        if (expected.isEmpty()) {
            ComposeImport.Imported imported = convert(name);
            List<ModuleSpec> modules = new ManifestParser().parse(runnable(imported.manifest()));
            assertThat(modules).hasSize(1);
            ModuleSpec module = modules.get(0);
            assertThat(module.module()).isEqualTo(name);
            JsonNode services = ComposeYaml.read(Files.readString(corpus().resolve(name + ".yml")), new ArrayList<>()).get("services");
            List<String> containers = new ArrayList<>();
            services.fieldNames().forEachRemaining(s -> containers.add(ServiceFields.containerName(s)));
            assertThat(module.containers().keySet()).containsExactlyElementsOf(containers);
            assertThat(module.containers().values()).extracting(ContainerSpec::image).containsOnly(RUNNABLE_IMAGE);
        } else {
            ComposeRefusedException e = catchThrowableOfType(ComposeRefusedException.class, () -> convert(name));
            assertThat(e).as(name + " refused").isNotNull();
            assertThat(e.problems().stream().map(ComposeProblem::path).toList()).as(name).containsExactlyElementsOf(expected);
            assertThat(e.problems()).allSatisfy(p -> assertThat(p.message()).hasSizeGreaterThan(20));
        }
    }

    /** The voting app's prebuilt-image file: its two tiers are module networks, and its workers wait for healthy stores. */
    @Test
    void theVotingAppKeepsItsTwoTiersAndWaitsForHealthyStores() throws Exception {
        ModuleSpec m = convert("voting-app-images").spec();
        assertThat(m.networks()).containsOnlyKeys("back-tier", "front-tier");
        assertThat(m.networks().get("back-tier").dockerName(m.module(), "back-tier")).isEqualTo("voting-app-images_back-tier");
        assertThat(m.containers().get("vote").networks()).containsOnlyKeys("front-tier", "back-tier");
        assertThat(m.containers().get("worker").networks()).containsOnlyKeys("back-tier");
        assertThat(m.containers().get("worker").dependsOn()).containsOnlyKeys("redis", "db")
                .allSatisfy((k, d) -> assertThat(d.condition()).isEqualTo("healthy"));
        assertThat(m.containers().get("db").healthcheck().test()).containsExactly("CMD-SHELL", "/healthchecks/postgres.sh");
    }

    /** The corpus is about networks: between them the files map named, internal and external networks and refuse what mesh's have not. */
    @Test
    void theCorpusCoversTheNetworkFeaturesTheImportMaps() throws Exception {
        TreeSet<String> refusedFields = new TreeSet<>();
        EXPECTED.values().forEach(l -> l.forEach(p -> refusedFields.add(p.replaceAll("\\[\\d+]", "").replaceAll(".*\\.", ""))));
        assertThat(refusedFields).contains("ipam", "driver_opts", "ipv4_address");
        List<String> imported = EXPECTED.entrySet().stream().filter(e -> e.getValue().isEmpty()).map(Map.Entry::getKey).toList();
        assertThat(imported).isNotEmpty();
    }
}
