package io.mesh.manifest;

import io.mesh.wire.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** A container's {@code pull} (SPEC.md, "Images"): its three names, its default, and what is refused at push time. */
class PullPolicyParseTest {
    private final ManifestParser parser = new ManifestParser();

    private static String module(String pullLine) {
        return "module: store\nhosts: [host-a]\ncontainers:\n  web:\n    image: 127.0.0.1:5000/hm/busybox:1\n" + pullLine;
    }

    @ParameterizedTest(name = "[{index}] pull: {0}")
    @CsvSource({"missing, MISSING", "always, ALWAYS", "never, NEVER"})
    void eachNameReadsAsItsPolicyAndTravelsAsItsName(String name, PullPolicy policy) throws Exception {
        ModuleSpec m = parser.parse(module("    pull: " + name + "\n")).get(0);
        ContainerSpec c = m.containers().get("web");
        assertThat(c.pull()).isEqualTo(policy);
        assertThat(c.pullPolicy()).isEqualTo(policy);
        // The desired node carries SPEC's name, and an agent reading it back gets the same policy.
        String json = Json.text(m);
        assertThat(json).contains("\"pull\":\"" + name + "\"");
        assertThat(parser.parseJson(json).containers().get("web").pullPolicy()).isEqualTo(policy);
    }

    @Test
    void withoutPullTheDesiredNodeIsAsBeforeAndThePolicyIsMissing() throws Exception {
        ModuleSpec m = parser.parse(module("")).get(0);
        ContainerSpec c = m.containers().get("web");
        assertThat(c.pull()).isNull();
        assertThat(c.pullPolicy()).isEqualTo(PullPolicy.MISSING);
        assertThat(Json.text(m)).doesNotContain("pull");
    }

    @ParameterizedTest(name = "[{index}] pull: {0}")
    @CsvSource(delimiter = '|', value = {"sometimes", "true", "[always]", "Always", "if-not-present"})
    void anotherValueIsRefusedNamingTheFieldAndTheThreeNames(String value) {
        String text = module("    pull: " + value + "\n");
        ManifestException e = catchThrowableOfType(ManifestException.class, () -> parser.parse(text));
        assertThat(e).as(text).isNotNull();
        assertThat(e.errors()).singleElement().satisfies(err -> {
            assertThat(err.document()).isEqualTo(1);
            assertThat(err.field()).isEqualTo("containers.web.pull");
            assertThat(err.message()).contains("missing", "always", "never");
        });
    }

    @Test
    void theWireNamesAreSpecs() {
        assertThat(PullPolicy.MISSING.wire()).isEqualTo("missing");
        assertThat(PullPolicy.ALWAYS).hasToString("always");
        assertThat(WireName.of(PullPolicy.class, "never")).isEqualTo(PullPolicy.NEVER);
    }
}
