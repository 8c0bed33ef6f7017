package io.mesh.client.compose;

import com.fasterxml.jackson.databind.JsonNode;
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
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The corpus of {@code src/test/resources/compose/}: one directory per compose file written for this test to look like a
 * real deployment. A file that converts has its expected manifest ({@code manifest.yaml}) and notes ({@code notes.txt});
 * a refused one lists the path of every refusal ({@code refusals.txt}), in order. {@code @DIR@} stands for the case's
 * directory, which relative host paths resolve against.
 */
class ComposeCorpusTest {
    static Path corpus() throws URISyntaxException {
        return Path.of(ComposeCorpusTest.class.getResource("/compose").toURI());
    }

    static Stream<Path> cases() throws IOException, URISyntaxException {
        try (Stream<Path> dirs = Files.list(corpus())) {
            return dirs.filter(Files::isDirectory).sorted().toList().stream();
        }
    }

    static Stream<Path> converting() throws IOException, URISyntaxException {
        return cases().filter(d -> Files.exists(d.resolve("manifest.yaml")));
    }

    static Stream<Path> refused() throws IOException, URISyntaxException {
        return cases().filter(d -> Files.exists(d.resolve("refusals.txt")));
    }

    private static String expected(Path dir, String file) throws IOException {
        return Files.readString(dir.resolve(file)).replace("@DIR@/..", dir.getParent().toString()).replace("@DIR@", dir.toString());
    }

    private static ComposeImport.Imported convert(Path dir) throws Exception {
        return ComposeImport.of(dir.resolve("compose.yaml"), List.of("host-a")).convert(Files.readString(dir.resolve("compose.yaml")));
    }

    @Test
    void theCorpusHasAtLeastTenFilesAndEachCaseSaysWhatItExpects() throws Exception {
        assertThat(cases().count()).isGreaterThanOrEqualTo(10);
        assertThat(converting().count()).isGreaterThanOrEqualTo(10);
        assertThat(refused().count()).isGreaterThanOrEqualTo(2);
        cases().forEach(d -> assertThat(Files.exists(d.resolve("manifest.yaml")) ^ Files.exists(d.resolve("refusals.txt")))
                .as(d + " has exactly one of manifest.yaml and refusals.txt").isTrue());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("converting")
    void convertsToItsExpectedManifestThatTheManifestParserReads(Path dir) throws Exception {
        ComposeImport.Imported imported = convert(dir);
        assertThat(imported.manifest()).isEqualTo(expected(dir, "manifest.yaml"));
        assertThat(imported.notes().stream().map(ComposeProblem::toString).toList())
                .containsExactlyElementsOf(expected(dir, "notes.txt").lines().toList());
        // Read back as a push would be: one module, a container per service (its name with '-' for '_').
        List<ModuleSpec> modules = new ManifestParser().parse(imported.manifest());
        assertThat(modules).hasSize(1);
        JsonNode services = ComposeYaml.read(Files.readString(dir.resolve("compose.yaml")), new ArrayList<>()).get("services");
        List<String> names = new ArrayList<>();
        services.fieldNames().forEachRemaining(s -> names.add(s.replace('_', '-')));
        assertThat(modules.get(0).containers().keySet()).containsExactlyElementsOf(names);
        assertThat(modules.get(0).hosts()).containsExactly("host-a");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refused")
    void refusesEachFieldWithItsPathAndNothingIsReturned(Path dir) throws Exception {
        ComposeRefusedException e = catchThrowableOfType(ComposeRefusedException.class, () -> convert(dir));
        assertThat(e).as("refused").isNotNull();
        assertThat(e.problems().stream().map(ComposeProblem::path).toList())
                .containsExactlyElementsOf(Files.readAllLines(dir.resolve("refusals.txt")));
        assertThat(e.problems()).allSatisfy(p -> assertThat(p.message()).contains(": ").hasSizeGreaterThan(30));
    }

    /** Every service field mesh imports is used by at least one file that converts, and no other field is. */
    @Test
    void theConvertingCorpusUsesEverySupportedServiceFieldAndNoOther() throws Exception {
        Set<String> used = new TreeSet<>();
        for (Path dir : converting().toList()) {
            List<ComposeProblem> problems = new ArrayList<>();
            JsonNode root = ComposeYaml.read(Files.readString(dir.resolve("compose.yaml")), problems);
            assertThat(problems).isEmpty();
            root.get("services").forEach(s -> s.fieldNames().forEachRemaining(used::add));
        }
        used.removeIf(k -> k.startsWith("x-"));
        assertThat(used).isEqualTo(new TreeSet<>(ServiceFields.SUPPORTED));
    }

    /** The two refused files between them refuse the fields decision 21 refuses whole: build, deploy, configs, profiles, extends ... */
    @Test
    void theRefusedCorpusRefusesTheFieldsRefusedWhole() throws Exception {
        Set<String> last = new TreeSet<>();
        for (Path dir : refused().toList()) {
            for (String path : Files.readAllLines(dir.resolve("refusals.txt"))) last.add(path.replaceAll("\\[\\d+]", "").replaceAll(".*\\.", ""));
        }
        assertThat(last).contains("build", "deploy", "configs", "secrets", "profiles", "extends", "links", "scale", "include", "env_file",
                "container_name");
        assertThatThrownBy(() -> convert(corpus().resolve("refused-build"))).isInstanceOf(ComposeRefusedException.class);
    }
}
