package io.mesh.coordinator;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The committed CLI reference (docs/reference/cli.md, docs/reference/man/) is what {@link CliReference} renders from the
 * commands' picocli definitions now: a changed option or description fails here until the reference is written again
 * ({@code deploy/dev/reference.sh}, which runs this test with {@code -Dmesh.reference.write=true}).
 */
class CliReferenceTest {
    private static final Path REPO = Path.of("..");

    @Test
    void theCommittedReferenceIsWhatTheCommandsSay() throws Exception {
        if (Boolean.getBoolean("mesh.reference.write")) CliReference.write(REPO);
        Map<String, String> files = CliReference.files();
        for (Map.Entry<String, String> f : files.entrySet()) {
            Path p = REPO.resolve(f.getKey());
            assertThat(p).as("%s: run deploy/dev/reference.sh and commit what it writes", f.getKey()).exists();
            assertThat(Files.readString(p, StandardCharsets.UTF_8))
                    .as("%s is stale: run deploy/dev/reference.sh and commit what it writes", f.getKey())
                    .isEqualTo(f.getValue());
        }
        Set<String> pages;
        try (Stream<Path> man = Files.list(REPO.resolve(CliReference.MAN))) {
            pages = man.map(p -> CliReference.MAN + "/" + p.getFileName()).collect(Collectors.toCollection(TreeSet::new));
        }
        assertThat(pages).as("man pages of no program").isSubsetOf(files.keySet());
        assertThat(files.get(CliReference.MARKDOWN)).as("every program and command").contains("## mesh push\n", "## mesh rollout abort\n",
                "## mesh-agent run\n", "## mesh-coordinator serve\n", "## mesh-coordinator credentials\n");
    }
}
