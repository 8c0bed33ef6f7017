package io.mesh.client.compose;

import io.mesh.manifest.ContainerSpec;
import io.mesh.manifest.ManifestParser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** The rules of {@link ComposeImport} one at a time (decision 21); the corpus test shows them together on real-looking files. */
class ComposeImportTest {
    @TempDir
    Path dir;

    ComposeImport.Imported convert(String yaml) throws ComposeRefusedException {
        return ComposeImport.of(dir.resolve("app/compose.yaml"), List.of("host-a")).convert(yaml);
    }

    List<ComposeProblem> refusals(String yaml) {
        ComposeRefusedException e = catchThrowableOfType(ComposeRefusedException.class, () -> convert(yaml));
        assertThat(e).as("refused").isNotNull();
        return e.problems();
    }

    ContainerSpec container(String yaml, String name) throws ComposeRefusedException {
        return convert(yaml).spec().containers().get(name);
    }

    static Stream<String> refusedServiceFields() { return ServiceFields.REFUSED.keySet().stream().sorted(); }

    @ParameterizedTest
    @MethodSource("refusedServiceFields")
    void eachRefusedServiceFieldIsRefusedAtItsPathWithItsReason(String field) {
        List<ComposeProblem> p = refusals("services:\n  s:\n    image: x:1\n    network_mode: host\n    " + field + ": whatever\n");
        assertThat(p).containsExactly(new ComposeProblem("services.s." + field, ServiceFields.REFUSED.get(field)));
    }

    @Test
    void otherComposeFieldsAndUnknownOnesAreRefusedNotDropped() {
        assertThat(refusals("services:\n  s:\n    image: x:1\n    network_mode: host\n    shm_size: 1g\n    imgae: y\n    x-note: ignored\n"))
                .extracting(ComposeProblem::path, ComposeProblem::message)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("services.s.shm_size", "mesh does not do shm_size: remove it"),
                        org.assertj.core.groups.Tuple.tuple("services.s.imgae", "unknown service field 'imgae': check its spelling against the Compose Specification, or remove it"));
    }

    @Test
    void versionAndExtensionFieldsAreIgnoredAsComposeIgnoresThemOtherTopLevelFieldsAreRefused() throws Exception {
        assertThat(convert("version: '3.8'\nx-anything: {a: '${NOT_INTERPOLATED}'}\nservices:\n  s: {image: x:1, network_mode: host}\n").spec().module()).isEqualTo("app");
        assertThat(refusals("services:\n  s: {image: x:1, network_mode: host}\nmodels: {}\n")).extracting(ComposeProblem::path).containsExactly("models");
    }

    @Test
    void theModuleIsTheOptionElseNameElseTheDirectorysNameWithDashesForUnderscores() throws Exception {
        String s = "services:\n  s: {image: x:1, network_mode: host}\n";
        assertThat(ComposeImport.of(dir.resolve("My_App/compose.yaml"), List.of("h")).convert(s).spec().module()).isEqualTo("my-app");
        assertThat(convert("name: shop_v2\n" + s).spec().module()).isEqualTo("shop-v2");
        assertThat(ComposeImport.of(dir.resolve("app/compose.yaml"), List.of("h")).module("store").convert("name: shop\n" + s).spec().module()).isEqualTo("store");
        List<ComposeProblem> p = catchThrowableOfType(ComposeRefusedException.class,
                () -> ComposeImport.of(dir.resolve("app/compose.yaml"), List.of("bad host")).module("Bad").convert(s)).problems();
        assertThat(p).extracting(ComposeProblem::path).containsExactly("--module", "--hosts[0]");
    }

    @Test
    void serviceNamesGetDashesForUnderscoresAndAClashAfterThatIsRefused() throws Exception {
        ComposeImport.Imported i = convert("services:\n  web_app: {image: x:1, network_mode: host, depends_on: [db_main]}\n"
                + "  db_main: {image: y:1, network_mode: host}\n");
        assertThat(i.spec().containers()).containsOnlyKeys("web-app", "db-main");
        assertThat(i.spec().containers().get("web-app").dependsOn()).containsOnlyKeys("db-main");
        assertThat(refusals("services:\n  a_b: {image: x:1, network_mode: host}\n  a-b: {image: x:1, network_mode: host}\n  Web: {image: x:1}\n"))
                .extracting(ComposeProblem::path).containsExactly("services.a-b", "services.Web");
    }

    @Test
    void valuesKeepTheTextWrittenThroughTheManifestParser() throws Exception {
        ContainerSpec c = container("services:\n  s:\n    image: x:1\n    network_mode: host\n    user: 1000:50\n"
                + "    environment: {V: 1.10, B: no, O: 0o17, T: 12:30, D: 2024-01-01, E: \"\"}\n    command: [\"12:30\", \"010\", on]\n", "s");
        assertThat(c.user()).isEqualTo("1000:50");
        assertThat(c.env()).containsEntry("V", "1.10").containsEntry("B", "no").containsEntry("O", "0o17").containsEntry("T", "12:30")
                .containsEntry("D", "2024-01-01").containsEntry("E", "");
        assertThat(c.command()).containsExactly("12:30", "010", "on");
    }

    @Test
    void anchorsAndMergeKeysAreReadAndTheOwnKeysWin() throws Exception {
        ContainerSpec c = container("x-base: &base {image: x:1, network_mode: host, restart: always, environment: {A: '1'}}\n"
                + "services:\n  s:\n    <<: *base\n    restart: on-failure\n", "s");
        assertThat(c.image()).isEqualTo("x:1");
        assertThat(c.restart()).isEqualTo("on-failure");
        assertThat(c.env()).containsEntry("A", "1");
    }

    @Test
    void interpolationIsRefusedAndDoubleDollarIsOneDollar() throws Exception {
        assertThat(container("services:\n  s: {image: x:1, network_mode: host, command: [sh, -c, 'echo $$HOME costs $$5']}\n", "s").command())
                .containsExactly("sh", "-c", "echo $HOME costs $5");
        assertThat(refusals("services:\n  s: {image: 'x:${TAG:-1}', network_mode: host, environment: [A=$HOME, B=a $ b]}\n"))
                .extracting(ComposeProblem::path).containsExactly("services.s.image", "services.s.environment[0]", "services.s.environment[1]");
        assertThat(refusals("services:\n  s: {image: 'x:${TAG:-1}', network_mode: host}\n").get(0).message()).contains("${TAG:-1}");
    }

    @Test
    void aStringCommandIsSplitAsComposeSplitsItAndShellOperatorsAreRefused() {
        assertThat(ShellWords.split("redis-server --save \"\" --dir '/data dir' a\\ b \"x\\\"y\"")).containsExactly("redis-server", "--save", "", "--dir", "/data dir", "a b", "x\"y");
        assertThat(ShellWords.split("  a\tb  ")).containsExactly("a", "b");
        assertThat(ShellWords.split("sh -c 'a && b | c'")).containsExactly("sh", "-c", "a && b | c");
        for (String bad : List.of("a && b", "a; b", "a | b", "a > f", "echo `id`", "echo $(id)")) {
            assertThatThrownBy(() -> ShellWords.split(bad)).as(bad).hasMessageContaining("shell operator");
        }
        assertThatThrownBy(() -> ShellWords.split("echo 'x")).hasMessageContaining("unclosed single quote");
    }

    @Test
    void composeDurationsBecomeMeshDurationsOfWholeSeconds() {
        assertThat(GoDuration.mesh(GoDuration.parse("90s"))).isEqualTo("1m30s");
        assertThat(GoDuration.mesh(GoDuration.parse("1h0m5s"))).isEqualTo("1h5s");
        assertThat(GoDuration.mesh(GoDuration.parse("1.5m"))).isEqualTo("1m30s");
        assertThat(GoDuration.mesh(GoDuration.parse("2000ms"))).isEqualTo("2s");
        assertThat(GoDuration.parse("0s")).isEqualTo(Duration.ZERO);
        assertThatThrownBy(() -> GoDuration.mesh(GoDuration.parse("500ms"))).hasMessageContaining("whole seconds");
        assertThatThrownBy(() -> GoDuration.parse("10")).hasMessageContaining("not a duration");
    }

    @Test
    void healthcheckZeroDurationsAreTheDefaultsAndAFractionIsRefused() throws Exception {
        ContainerSpec c = container("services:\n  s:\n    image: x:1\n    network_mode: host\n"
                + "    healthcheck: {test: [CMD, true], interval: 0s, start_period: 0s, retries: 2}\n", "s");
        assertThat(c.healthcheck().interval()).isNull();
        assertThat(c.healthcheck().startPeriod()).isNull();
        assertThat(refusals("services:\n  s: {image: x:1, network_mode: host, healthcheck: {test: [CMD, 'true'], timeout: 1500ms, start_interval: 1s}}\n"))
                .extracting(ComposeProblem::path).containsExactly("services.s.healthcheck.timeout", "services.s.healthcheck.start_interval");
    }

    @Test
    void publishedPortsBindLoopbackUnlessAnAddressIsWrittenAndNeedAHostPort() throws Exception {
        ComposeImport.Imported i = convert("services:\n  s: {image: x:1, ports: ['8080:80', '0.0.0.0:443:443', '53:53/udp', '7000-7001:8000-8001']}\n");
        assertThat(i.spec().containers().get("s").ports())
                .containsExactly("127.0.0.1:8080:80", "0.0.0.0:443:443", "127.0.0.1:53:53/udp", "127.0.0.1:7000:8000", "127.0.0.1:7001:8001");
        assertThat(i.notes()).extracting(ComposeProblem::path).contains("services.s.ports[0]", "services.s.ports[2]", "services.s.ports[3]")
                .doesNotContain("services.s.ports[1]");
        assertThat(refusals("services:\n  s: {image: x:1, ports: ['80', '127.0.0.1::80', '[::1]:80:80', '7000-7002:80', {target: 80}, {target: 80, published: 80, mode: ingress}]}\n"))
                .extracting(ComposeProblem::path).containsExactly("services.s.ports[0]", "services.s.ports[1]", "services.s.ports[2]",
                        "services.s.ports[3]", "services.s.ports[4]", "services.s.ports[5].mode");
        assertThat(refusals("services:\n  s: {image: x:1, network_mode: host, ports: ['80:80']}\n").get(0).message()).contains("publish nothing with network_mode host");
    }

    @Test
    void aBadPortThatOnlyMeshsParserSeesIsReportedAtItsComposeIndexAfterARangeWasExpanded() {
        assertThat(refusals("services:\n  s: {image: x:1, ports: ['1-2:1-2', '70000:80']}\n")).extracting(ComposeProblem::path)
                .containsExactly("services.s.ports[1]");
    }

    @Test
    void servicesWithoutNetworksOrAModeJoinComposesDefaultNetworkAsTheModuleNetworkDefault() throws Exception {
        ComposeImport.Imported i = convert("services:\n  s: {image: x:1}\n  t: {image: x:1, network_mode: host}\n  u: {image: x:1, network_mode: none}\n");
        assertThat(i.spec().networks()).containsOnlyKeys("default");
        assertThat(i.spec().networks().get("default").dockerName("app", "default")).isEqualTo("app_default");
        assertThat(i.spec().containers().get("s").networks()).containsOnlyKeys("default");
        assertThat(i.spec().containers().get("t").network()).isEqualTo("host");
        assertThat(i.spec().containers().get("u").network()).isEqualTo("none");
        assertThat(i.manifest()).contains("networks:\n  default: {}\ncontainers:\n  s:\n    image: x:1\n    networks:\n      - default\n");
        // Every service with a mode: the module has no networks at all.
        assertThat(convert("services:\n  s: {image: x:1, network_mode: bridge}\n").spec().networks()).isEmpty();
    }

    @Test
    void namedNetworksKeepInternalLabelsExternalNamesAndAliasesAndARenamedServiceAnswersToItsComposeName() throws Exception {
        ComposeImport.Imported i = convert("services:\n  web: {image: x:1, networks: [front, default, ext]}\n"
                + "  db_main: {image: y:1, networks: {back: {aliases: [postgres]}, front: }}\n"
                + "  old: {image: y:1, networks: {legacy: {}}}\n"
                + "networks:\n  front: {driver: bridge, labels: [team=shop]}\n  back: {internal: true, x-note: ignored}\n"
                + "  ext: {external: true, name: corp-net}\n  legacy: {external: {name: old-net}}\n  unused: {}\n");
        assertThat(i.spec().networks()).containsOnlyKeys("back", "default", "ext", "front", "legacy");
        assertThat(i.spec().networks().get("back").internalOnly()).isTrue();
        assertThat(i.spec().networks().get("front").labels()).containsExactly(java.util.Map.entry("team", "shop"));
        assertThat(i.spec().networks().get("ext").owned()).isFalse();
        assertThat(i.spec().networks().get("ext").dockerName("app", "ext")).isEqualTo("corp-net");
        assertThat(i.spec().networks().get("legacy").dockerName("app", "legacy")).isEqualTo("old-net");
        assertThat(i.spec().containers().get("web").networks()).containsOnlyKeys("front", "default", "ext");
        ContainerSpec db = i.spec().containers().get("db-main");
        assertThat(db.networks().get("back").aliases()).containsExactly("postgres", "db_main");
        assertThat(db.networks().get("front").aliases()).containsExactly("db_main");
        assertThat(i.notes()).extracting(ComposeProblem::toString).contains(
                "services.db_main: answers to 'db_main' as compose's service name does: it is an alias on each of its networks, beside the container's name 'db-main'",
                "networks.unused: no service joins it: left out of the module",
                "networks.ext: is external: mesh neither creates nor removes the Docker network 'corp-net', which must exist on every host of hosts");
        // The project is 'app', so the networks mesh creates have compose's Docker names, and nothing is noted about them.
        assertThat(i.notes()).noneMatch(n -> n.path().equals("networks.front") || n.path().equals("networks.default"));
        ComposeImport.Imported renamed = ComposeImport.of(dir.resolve("app/compose.yaml"), List.of("host-a")).module("shop")
                .convert("services:\n  s: {image: x:1}\n");
        assertThat(renamed.notes()).extracting(ComposeProblem::toString).contains("networks.default: is the Docker network 'shop_default' "
                + "(compose's default network, which services without networks or network_mode join), which mesh creates; compose's was "
                + "'app_default', and containers compose left on it are not on this one");
    }

    @Test
    void networkSettingsMeshsNetworksDoNotHaveAreRefusedEachAtItsPath() {
        List<ComposeProblem> p = refusals("services:\n  s: {image: x:1, network_mode: host, networks: [a]}\n  t: {image: x:1, network_mode: 'service:s'}\n"
                + "  u: {image: x:1, networks: [nope, a, a]}\n"
                + "  v: {image: x:1, networks: {a: {ipv4_address: 10.0.0.2, ipv6_address: 'fe80::2', priority: 5, link_local_ips: [169.254.0.2], aliases: [ok]}}}\n"
                + "networks:\n  a: {driver: overlay, ipam: {config: [{subnet: 10.0.0.0/24}]}, driver_opts: {x: y}, attachable: true, enable_ipv6: true, name: fixed}\n"
                + "  b: {external: true, internal: true}\n");
        assertThat(p).extracting(ComposeProblem::path).containsExactly("networks.a.driver", "networks.a.ipam", "networks.a.driver_opts",
                "networks.a.attachable", "networks.a.enable_ipv6", "networks.a.name", "networks.b.internal", "services.s.network_mode",
                "services.t.network_mode", "services.u.networks[0]", "services.u.networks[2]", "services.v.networks.a.ipv4_address",
                "services.v.networks.a.ipv6_address", "services.v.networks.a.priority", "services.v.networks.a.link_local_ips");
        assertThat(p.get(0).message()).contains("bridge").contains("overlay").contains("external: true");
        assertThat(p.get(1).message()).startsWith("mesh lets Docker choose a network's subnet");
        assertThat(p.get(5).message()).contains("<module>_a").contains("docker network create fixed");
        assertThat(p.get(11).message()).contains("remove ipv4_address");
    }

    @Test
    void volumesNamedOnesAreDeclaredAndKeepComposesDockerNamesRelativePathsResolveAgainstTheFile() throws Exception {
        ComposeImport.Imported i = convert("services:\n  s:\n    image: x:1\n    network_mode: host\n    volumes:\n"
                + "      - data:/data\n      - ./conf:/etc/conf:ro\n      - ../logs:/logs:rw\n      - shared:/shared\n      - named:/named\n"
                + "      - {type: tmpfs, target: /scratch, tmpfs: {size: 64m}}\n"
                + "volumes:\n  data:\n  shared: {external: true}\n  named: {name: exact-name, driver: local}\n");
        ContainerSpec c = i.spec().containers().get("s");
        assertThat(c.volumes()).containsExactly("app_data:/data", dir.resolve("app/conf") + ":/etc/conf:ro", dir.resolve("logs") + ":/logs",
                "shared:/shared", "exact-name:/named");
        assertThat(c.tmpfs()).containsExactly("/scratch:size=64m");
        assertThat(c.createHostPath()).isNull();
        assertThat(i.notes()).extracting(ComposeProblem::path).contains("services.s.volumes[1]", "services.s.volumes[2]", "services.s", "volumes.data");
        assertThat(refusals("services:\n  s:\n    image: x:1\n    network_mode: host\n    volumes: [undeclared:/a, /anon, '~/x:/x', 'd:/d:z', "
                + "{type: bind, source: /a, target: /b, bind: {propagation: rshared}}, {type: npipe, source: a, target: /c}]\n"
                + "volumes: {d: {driver: nfs}}\n")).extracting(ComposeProblem::path).containsExactly("volumes.d.driver",
                "services.s.volumes[0]", "services.s.volumes[1]", "services.s.volumes[2]", "services.s.volumes[3]",
                "services.s.volumes[4].bind.propagation", "services.s.volumes[5].type");
    }

    @Test
    void createHostPathIsSetOnlyWhenEveryLongBindAsksForItAsMeshsIsPerContainer() throws Exception {
        String asks = "{type: bind, source: /srv/a, target: /a, bind: {create_host_path: true}}";
        ComposeImport.Imported all = convert("services:\n  s:\n    image: x:1\n    network_mode: host\n    volumes:\n"
                + "      - " + asks + "\n      - /srv/short:/short\n      - data:/data\nvolumes: {data: {}}\n");
        assertThat(all.spec().containers().get("s").createHostPath()).isTrue();
        assertThat(all.notes()).extracting(ComposeProblem::path).doesNotContain("services.s", "services.s.volumes[0].bind.create_host_path");

        ComposeImport.Imported mixed = convert("services:\n  s:\n    image: x:1\n    network_mode: host\n    volumes:\n"
                + "      - " + asks + "\n      - {type: bind, source: /srv/b, target: /b}\n");
        assertThat(mixed.spec().containers().get("s").createHostPath()).isNull();
        assertThat(mixed.notes()).filteredOn(n -> n.path().equals("services.s.volumes[0].bind.create_host_path")).singleElement()
                .extracting(ComposeProblem::message).asString().contains("services.s.volumes[1]", "per container");
    }

    @Test
    void environmentAndLabelsInBothFormsAndAValueFromTheShellIsRefused() throws Exception {
        ContainerSpec c = container("services:\n  s: {image: x:1, network_mode: host, environment: [A=1, B=x=y, C=], labels: [a.b=c, flag]}\n", "s");
        assertThat(c.env()).containsEntry("A", "1").containsEntry("B", "x=y").containsEntry("C", "");
        assertThat(c.labels()).containsEntry("a.b", "c").containsEntry("flag", "");
        assertThat(refusals("services:\n  s: {image: x:1, network_mode: host, environment: [A=1, A=2, HOME]}\n"))
                .extracting(ComposeProblem::path).containsExactly("services.s.environment[1]", "services.s.environment[2]");
    }

    @Test
    void anEnvValueNamedLikeASecretIsImportedAsWrittenWithANotePointingAtMeshsSecrets() throws Exception {
        ComposeImport.Imported i = convert("services:\n  s: {image: x:1, network_mode: host, environment: {DB_Password: hunter2, MODE: prod, API_TOKEN: ''}}\n"
                + "  t: {image: x:1, network_mode: host, environment: [JWT_SECRET=abc, PORT=80]}\n");
        assertThat(i.spec().containers().get("s").env()).containsEntry("DB_Password", "hunter2");
        assertThat(i.notes()).extracting(ComposeProblem::path).contains("services.s.environment.DB_Password", "services.t.environment[0]")
                .doesNotContain("services.s.environment.MODE", "services.s.environment.API_TOKEN", "services.t.environment[1]");
        assertThat(i.notes()).filteredOn(n -> n.path().equals("services.t.environment[0]")).singleElement()
                .extracting(ComposeProblem::message).asString().contains("'JWT_SECRET'", "mesh's secrets", "secrets: {JWT_SECRET: {file: PATH}}")
                .doesNotContain("abc");
    }

    @Test
    void dependsOnConditionsMapAndWhatMeshDoesNotDoIsRefused() throws Exception {
        ContainerSpec c = container("services:\n  a: {image: x:1, network_mode: host, healthcheck: {test: 'true'}}\n  b: {image: x:1, network_mode: host}\n"
                + "  c: {image: x:1, network_mode: host, depends_on: {a: {condition: service_healthy, restart: false}, b: {condition: service_started}}}\n", "c");
        assertThat(c.dependsOn()).containsEntry("a", new ContainerSpec.DependsOn("healthy")).containsEntry("b", new ContainerSpec.DependsOn("started"));
        assertThat(refusals("services:\n  a: {image: x:1, network_mode: host}\n"
                + "  c: {image: x:1, network_mode: host, depends_on: {a: {condition: service_started, restart: true, required: false}}}\n"
                + "  d: {image: x:1, network_mode: host, depends_on: [nowhere]}\n"))
                .extracting(ComposeProblem::path).containsExactly("services.c.depends_on.a.restart", "services.c.depends_on.a.required",
                        "services.d.depends_on.nowhere");
    }

    @Test
    void entrypointAndCommandStringsAndListsAndAnEmptyEntrypointIsRefused() throws Exception {
        ContainerSpec c = container("services:\n  s: {image: x:1, network_mode: host, entrypoint: /bin/tini --, command: [a, 'b c']}\n", "s");
        assertThat(c.entrypoint()).containsExactly("/bin/tini", "--");
        assertThat(c.command()).containsExactly("a", "b c");
        assertThat(refusals("services:\n  s: {image: x:1, network_mode: host, entrypoint: []}\n")).extracting(ComposeProblem::path)
                .containsExactly("services.s.entrypoint");
        // a multi-line sh -c script (decision 21: a script file, or one line joined with ';')
        assertThat(refusals("services:\n  s:\n    image: x:1\n    network_mode: host\n    command: [sh, -c, \"a\\nb\"]\n"))
                .singleElement().extracting(ComposeProblem::message).asString().contains("control character");
    }

    @Test
    void namesAndValuesWithControlCharactersArePrintedEscapedOnOneLine() {
        List<ComposeProblem> p = refusals("services:\n  \"web\\nhosts: ['*']\": {image: x:1, network_mode: host}\n"
                + "  s: {image: x:1, network_mode: host, volumes: [\"~/a\\r\\nb:/x\"], \"x\\u001b[2Jy\": 1}\n");
        assertThat(p).hasSizeGreaterThanOrEqualTo(3);
        assertThat(p).allSatisfy(x -> assertThat(x.toString()).doesNotContainPattern("[\\x00-\\x1f\\x7f]"));
        assertThat(p).extracting(ComposeProblem::path).contains("services.web\\u000ahosts: ['*']", "services.s.x\\u001b[2Jy");
        assertThat(p).extracting(ComposeProblem::message).anyMatch(m -> m.contains("'~/a\\u000d\\u000ab'"));
    }

    @Test
    void theYamlItselfOneDocumentNoCustomTagsNoAliasBomb() {
        assertThat(refusals("services: {s: {image: x:1}}\n---\nservices: {}\n").get(0).message()).contains("2 YAML documents");
        assertThat(refusals("services:\n  s: {image: x:1, network_mode: host, environment: !reset {}}\n")).extracting(ComposeProblem::path)
                .containsExactly("services.s.environment");
        StringBuilder bomb = new StringBuilder("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for (char c = 'b'; c <= 'h'; c++) bomb.append(c).append(": &").append(c).append(" [*").append((char) (c - 1)).append(", *")
                .append((char) (c - 1)).append(", *").append((char) (c - 1)).append(", *").append((char) (c - 1)).append(", *").append((char) (c - 1))
                .append(", *").append((char) (c - 1)).append(", *").append((char) (c - 1)).append(", *").append((char) (c - 1)).append("]\n");
        assertThat(refusals(bomb + "services: {s: {image: x:1}}\n")).isNotEmpty();
        assertThat(refusals("services: [a\n").get(0).message()).startsWith("not valid YAML");
        assertThat(refusals("services:\n  s: {image: x:1, image: y:1}\n")).extracting(ComposeProblem::path).contains("services.s.image");
    }

    @Test
    void theManifestIsInSpecsFieldOrder() throws Exception {
        String m = convert("services:\n  s: {healthcheck: {test: 'true'}, restart: always, network_mode: none, environment: {A: '1'}, "
                + "command: [a], image: x:1, read_only: true, user: app}\n").manifest();
        assertThat(m).containsSubsequence("image:", "command:", "env:", "network:", "restart:", "user:", "read-only:", "healthcheck:");
        assertThat(new ManifestParser().parse(m)).hasSize(1);
    }
}
