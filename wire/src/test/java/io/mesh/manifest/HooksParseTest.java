package io.mesh.manifest;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** A container's {@code hooks} (SPEC.md, "The rest of the operator's stack"; decision 38), parsed and checked field by field. */
class HooksParseTest {
    private final ManifestParser parser = new ManifestParser();

    private ContainerSpec registry(String... lines) throws Exception {
        return parser.parse(ManifestParserTest.container(lines)).get(0).containers().get("registry");
    }

    @Test
    void hooksAreParsedWithTheirDefaultTimeout() throws Exception {
        ContainerSpec c = registry("hooks: {pre-stop: [sh, -c, \"echo drained > /tmp/drained\"], post-start: [/bin/warm, 3]}");
        assertThat(c.hooks().preStop()).containsExactly("sh", "-c", "echo drained > /tmp/drained");
        assertThat(c.hooks().postStart()).as("a number is taken as written").containsExactly("/bin/warm", "3");
        assertThat(c.hooks().timeoutDuration()).as("SPEC's default").isEqualTo(Duration.ofSeconds(30));
        assertThat(registry("hooks: {post-start: [\"true\"], timeout: 2m}").hooks().timeoutDuration()).isEqualTo(Duration.ofMinutes(2));
        assertThat(registry("hooks: {pre-stop: [\"true\"]}").hooks().postStart()).isEmpty();
        assertThat(registry().hooks()).as("absent").isNull();
        assertThat(registry().hooksOrNone().preStop()).isEmpty();
    }

    @Test
    void eachBadFieldIsRefusedNamingTheFieldAndTheFix() {
        for (String[] bad : new String[][] {
                {"hooks: [sh, -c, drain]", "containers.registry.hooks", "pre-stop"},
                {"hooks: {pre-stop: [\"true\"], timeout: abc}", "containers.registry.hooks.timeout", "such as 90s"},
                {"hooks: {pre-stop: [\"true\"], timeout: 30}", "containers.registry.hooks.timeout", "in quotes"},
                {"hooks: {pre-stop: [\"true\"], timeout: 0s}", "containers.registry.hooks.timeout", "above 0"},
                {"hooks: {pre-stop: [\"true\"], timeout: 1h}", "containers.registry.hooks.timeout", "shorter"},
                {"hooks: {pre-stop: \"sh -c drain\"}", "containers.registry.hooks.pre-stop", "list of strings"},
                {"hooks: {post-start: {cmd: x}}", "containers.registry.hooks.post-start", "list of strings"},
                {"hooks: {pre-stop: [sh, [x]]}", "containers.registry.hooks.pre-stop[1]", "string"},
                {"hooks: {pre-stop: []}", "containers.registry.hooks.pre-stop", "leave pre-stop out"},
                {"hooks: {pre-stop: [\" \"]}", "containers.registry.hooks.pre-stop[0]", "program"},
                {"hooks: {pre-stop: [\"true\"], post-stop: [\"true\"]}", "containers.registry.hooks.post-stop", "allowed here are [post-start, pre-stop, timeout]"},
                {"hooks: {timeout: 30s}", "containers.registry.hooks", "give pre-stop or post-start"}}) {
            ManifestException e = catchThrowableOfType(ManifestException.class, () -> parser.parse(ManifestParserTest.container(bad[0])));
            assertThat(e).as(bad[0]).isNotNull();
            assertThat(e.errors()).as(bad[0]).singleElement().satisfies(err -> {
                assertThat(err.field()).isEqualTo(bad[1]);
                assertThat(err.message()).contains(bad[2]);
            });
        }
    }

    @Test
    void hooksTravelInTheDesiredSpec() throws Exception {
        ContainerSpec c = registry("hooks: {pre-stop: [drain], timeout: 5s}");
        ContainerSpec back = io.mesh.wire.Json.MAPPER.readValue(io.mesh.wire.Json.MAPPER.writeValueAsString(c), ContainerSpec.class);
        assertThat(back).isEqualTo(c);
        assertThat(io.mesh.wire.Json.MAPPER.writeValueAsString(c)).contains("\"hooks\":{\"pre-stop\":[\"drain\"],\"timeout\":\"5s\"}");
        assertThat(io.mesh.wire.Json.MAPPER.writeValueAsString(registry())).doesNotContain("hooks");
    }
}
