package io.mesh.hold;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The file of a module's hold stops: written whole, forgotten per container, and an unreadable one kept aside. */
class HoldStopsTest {
    @TempDir
    Path state;

    @Test
    void aStopIsRememberedAndForgottenAndTheFileGoesWithTheLast() throws Exception {
        HoldStops stops = new HoldStops(state);
        HoldStops.Stop s = new HoldStops.Stop("c".repeat(64), "2026-12-07T00:00:00.1Z", "alice", "disk", Instant.parse("2026-12-07T00:01:00Z"));
        stops.record("m", "m-app", s);
        stops.record("m", "m-web", s);
        assertThat(stops.read("m")).containsOnlyKeys("m-app", "m-web").containsEntry("m-app", s);
        stops.readOnly().forget("m", List.of("m-app"));
        assertThat(stops.read("m")).as("a plan forgets nothing").containsOnlyKeys("m-app", "m-web");
        stops.forget("m", List.of("m-app", "m-web"));
        assertThat(stops.read("m")).isEmpty();
        assertThat(state.resolve(HoldStops.DIR).resolve("m.json")).doesNotExist();
    }

    @Test
    void anUnreadableFileReadsAsNoStopAndIsKeptAside() throws Exception {
        Path file = Files.createDirectories(state.resolve(HoldStops.DIR)).resolve("m.json");
        Files.writeString(file, "not json {");
        HoldStops stops = new HoldStops(state);
        assertThat(stops.readOnly().read("m")).isEmpty();
        assertThat(file).as("a plan leaves it where it is").exists();
        assertThat(stops.read("m")).isEmpty();
        assertThat(file).doesNotExist();
        assertThat(file.resolveSibling("m.json.unreadable")).hasContent("not json {");
        Files.writeString(file, "null");
        assertThat(stops.read("m")).isEmpty();
    }
}
