package io.mesh.manifest;

import io.mesh.wire.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** {@code depends-on}: compose's two forms, and what is refused at push time (a cycle, an unknown name ...). */
class DependsOnParseTest {
    private final ManifestParser parser = new ManifestParser();

    static String module(String webDeps, String dbExtra) {
        return "module: store\nhosts: [host-a]\ncontainers:\n"
                + "  web:\n    image: busybox:1\n" + webDeps
                + "  db:\n    image: busybox:1\n" + dbExtra;
    }

    @Test
    void theListFormIsStartedAndTheMappingKeepsItsCondition() throws Exception {
        ModuleSpec m = parser.parse(module("    depends-on: [db]\n", "")).get(0);
        assertThat(m.containers().get("web").dependsOn()).isEqualTo(Map.of("db", new ContainerSpec.DependsOn("started")));
        ModuleSpec h = parser.parse(module("    depends-on: {db: {condition: healthy}}\n", "    healthcheck: {test: [CMD, \"true\"]}\n")).get(0);
        assertThat(h.containers().get("web").dependsOn()).isEqualTo(Map.of("db", new ContainerSpec.DependsOn("healthy")));
        assertThat(h.containers().get("db").dependsOn()).isEmpty();
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', ignoreLeadingAndTrailingWhitespace = false, value = {
            "    depends-on: [cache]\\n|     |containers.web.depends-on.cache|not a container of this module",
            "    depends-on: [web]\\n|     |containers.web.depends-on.web|cannot depend on itself",
            "    depends-on: {db: {condition: healthy}}\\n|     |containers.web.depends-on.db|needs a healthcheck on db",
            "    depends-on: {db: {condition: running}}\\n|     |containers.web.depends-on.db|condition: started",
            "    depends-on: db\\n|     |containers.web.depends-on|a list of container names",
            "    depends-on: [db]\\n|    depends-on: [web]\\n|containers.db.depends-on|a cycle: db -> web -> db"})
    void refusedNamingTheFieldAndTheFix(String web, String db, String field, String message) {
        String text = module(web.replace("\\n", "\n"), db == null || db.isBlank() ? "" : db.replace("\\n", "\n"));
        ManifestException e = catchThrowableOfType(ManifestException.class, () -> parser.parse(text));
        assertThat(e).as(text).isNotNull();
        assertThat(e.errors()).as(text).singleElement().satisfies(err -> {
            assertThat(err.field()).isEqualTo(field);
            assertThat(err.message()).contains(message);
        });
    }

    @Test
    void aLongerCycleIsFoundWhole() {
        assertThat(ManifestParser.cycle(Map.of("a", Set.of("b"), "b", Set.of("c"), "c", Set.of("a"))))
                .containsExactly("a", "b", "c", "a");
        assertThat(ManifestParser.cycle(Map.of("a", Set.of("b"), "b", Set.of(), "c", Set.of("a", "b")))).isEmpty();
        assertThat(ManifestParser.cycle(Map.of("a", Set.of("b"), "b", Set.of("c"), "c", Set.of("b")))).isEqualTo(List.of("b", "c", "b"));
    }

    @Test
    void dependsOnIsKeptInTheDesiredNodeAsTheMapping() throws Exception {
        ModuleSpec m = parser.parse(module("    depends-on: [db]\n", "")).get(0);
        assertThat(new String(Json.bytes(m.containers().get("web")))).contains("\"depends-on\":{\"db\":{\"condition\":\"started\"}}");
        assertThat(new String(Json.bytes(m.containers().get("db")))).doesNotContain("depends-on");
    }
}
