package io.mesh.wire;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The order of mesh's versions: a backup from a newer mesh is refused by it (decision 39 item 3). */
class MeshVersionTest {
    @Test
    void versionsCompareNumberByNumber() {
        assertThat(MeshVersion.compare("0.1.0", "0.1.0")).isZero();
        assertThat(MeshVersion.compare("0.1", "0.1.0")).as("a missing number is 0").isZero();
        assertThat(MeshVersion.compare("0.10.0", "0.9.9")).isPositive();
        assertThat(MeshVersion.compare("0.2.0", "0.10.0")).isNegative();
        assertThat(MeshVersion.compare("1.0.0", "0.99.99")).isPositive();
        assertThat(MeshVersion.compare("0.1.0-SNAPSHOT", "0.1.0")).as("a suffix is not compared").isZero();
        assertThat(MeshVersion.compare(MeshVersion.CURRENT, "0.0.1")).isPositive();
    }

    @Test
    void theVersionIsTheBuildsVersion() throws Exception {
        String pom = java.nio.file.Files.readString(java.nio.file.Path.of("../pom.xml"));
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("<artifactId>mesh-parent</artifactId>\\s*<version>([^<]+)</version>").matcher(pom);
        assertThat(m.find()).as("the parent pom's version").isTrue();
        assertThat(m.group(1).replace("-SNAPSHOT", "")).isEqualTo(MeshVersion.CURRENT);
    }

    @Test
    void aVersionThatIsNoneIsRefusedNamingIt() {
        assertThatThrownBy(() -> MeshVersion.compare("latest", "0.1.0")).hasMessageContaining("'latest' is not a version such as");
        assertThatThrownBy(() -> MeshVersion.compare(null, "0.1.0")).isInstanceOf(IllegalArgumentException.class);
    }
}
