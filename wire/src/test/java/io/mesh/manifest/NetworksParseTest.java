package io.mesh.manifest;

import io.mesh.wire.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** A module's {@code networks} and a container's (SPEC.md, "Containers"; decision 31): the forms, the names, the refusals. */
class NetworksParseTest {
    private final ManifestParser parser = new ManifestParser();

    private static final String SHOP = """
            module: shop
            hosts: [host-a]
            networks:
              default: {}
              back: {internal: true, labels: {team: shop}}
              corp: {external: true, name: corp-net}
            containers:
              web: {image: mesh-demo/busybox:1, networks: [default]}
              db:
                image: mesh-demo/busybox:1
                networks: {default: {}, back: {aliases: [postgres]}, corp: }
            """;

    @Test
    void theSpecsExampleReadsAndTravelsAsOneForm() throws Exception {
        ModuleSpec m = parser.parse(SHOP).get(0);
        assertThat(m.networks()).containsOnlyKeys("default", "back", "corp");
        assertThat(m.networks().get("back").internalOnly()).isTrue();
        assertThat(m.networks().get("back").labels()).containsEntry("team", "shop");
        assertThat(m.networks().get("default")).isEqualTo(NetworkSpec.bridge());
        assertThat(m.containers().get("web").networks()).containsOnlyKeys("default");
        assertThat(m.containers().get("web").network()).as("no single network beside networks").isNull();
        assertThat(m.containers().get("db").networks().get("back").aliases()).containsExactly("postgres");
        // The desired node keeps the mapping form, and an agent reads it back the same.
        String json = Json.text(m);
        assertThat(json).contains("\"networks\":{\"default\":{}}");
        assertThat(parser.parseJson(json)).isEqualTo(m);
    }

    @Test
    void asRunEachContainerJoinsDockerNamesAnsweringToItsOwnName() throws Exception {
        ModuleSpec m = parser.parse(SHOP).get(0);
        Map<String, ContainerSpec> run = m.containersAsRun();
        assertThat(run.get("web").networks()).containsOnlyKeys("shop_default");
        assertThat(run.get("web").networks().get("shop_default").aliases()).containsExactly("web");
        assertThat(run.get("db").networks()).containsOnlyKeys("shop_default", "shop_back", "corp-net");
        assertThat(run.get("db").networks().get("shop_back").aliases()).containsExactly("db", "postgres");
        assertThat(m.ownedNetworksOn("host-a")).containsOnlyKeys("shop_default", "shop_back");
        assertThat(m.ownedNetworksOn("host-b")).as("not a host of the module").isEmpty();
    }

    @Test
    void aModuleWithoutNetworksKeepsItsFormAndHash() throws Exception {
        ModuleSpec m = parser.parse("module: store\nhosts: [host-a]\ncontainers:\n  web: {image: mesh-demo/busybox:1}\n").get(0);
        assertThat(Json.text(m)).doesNotContain("networks");
        assertThat(m.containersAsRun()).isEqualTo(m.containers());
        assertThat(m.containers().get("web").network()).isEqualTo("host");
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', value = {
            "networks: {default: {driver: overlay}}|web: {image: i, networks: [default]}|networks.default.driver|external: true",
            "networks: {default: {name: x}}|web: {image: i, networks: [default]}|networks.default.name|only for an external network",
            "networks: {default: {ipam: {}}}|web: {image: i, networks: [default]}|networks.default.ipam|unknown field",
            "networks: {default: {}}|web: {image: i, networks: [front]}|containers.web.networks.front|declare it under networks",
            "networks: {default: {}}|web: {image: i, network: host, networks: [default]}|containers.web.networks|not both",
            "networks: {default: {}}|web: {image: i, networks: []}|containers.web.networks|is empty",
            "networks: {default: {}}|web: {image: i, networks: {default: {ipv4_address: 10.0.0.2}}}|containers.web.networks.default.ipv4_address|unknown field",
            "networks: {default: {}}|web: {image: i, networks: {default: {aliases: ['a b']}}}|containers.web.networks.default.aliases[0]|DNS name",
            "networks: {h: {external: true, name: host}}|web: {image: i, networks: [h]}|networks.h|network: host",
            "networks: {e: {external: true, internal: true}}|web: {image: i, networks: [e]}|networks.e.internal|external network",
            "networks: {d: {}}|{web: {image: i, networks: {d: {aliases: [db]}}}, db: {image: i, networks: [d]}}|containers.web.networks.d.aliases[0]|already names container 'db'",
    })
    void aBadNetworkIsRefusedNamingTheFieldAndTheFix(String networks, String container, String field, String fix) {
        String text = "module: shop\nhosts: [host-a]\n" + networks + "\ncontainers:" + (container.startsWith("{") ? " " : "\n  ") + container + "\n";
        ManifestException e = catchThrowableOfType(ManifestException.class, () -> parser.parse(text));
        assertThat(e).as(text).isNotNull();
        assertThat(e.errors()).as(text).anySatisfy(err -> {
            assertThat(err.field()).isEqualTo(field);
            assertThat(err.message()).contains(fix);
        });
    }

    @Test
    void netSysctlsAreAllowedOnAModuleNetwork() throws Exception {
        ModuleSpec m = parser.parse("module: shop\nhosts: [h]\nnetworks: {default: }\ncontainers:\n  web:\n    image: i\n"
                + "    networks: [default]\n    sysctls: {net.core.somaxconn: 1024}\n").get(0);
        assertThat(m.containers().get("web").sysctls()).containsKey("net.core.somaxconn");
        assertThat(m.containers().get("web").networks()).isEqualTo(Map.of("default", new NetworkSpec.Attachment(List.of())));
    }
}
