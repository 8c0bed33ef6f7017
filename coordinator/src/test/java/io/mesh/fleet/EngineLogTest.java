package io.mesh.fleet;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Reading dockerd's refusals out of its log: lines as dockerd 20.10 wrote them in FleetHistoryIT seed -1035554877928643886. */
class EngineLogTest {
    private static final String A = "818939770a277d189154c8e56b578ae6da530efd9be80994ab57fda2dad18d46";
    private static final String B = "019e8fb3210c5b9b8d6a4a1f0a0e4d36b1f29a7c3c8a5d2e1f0b9c8d7e6f5a4b";

    @Test
    void onlyAStartRefusedForATaskContainerdKeepsCounts(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("fleet-3-dockerd.log");
        Files.write(log, List.of(
                "time=\"2026-12-03T04:15:20.918022582Z\" level=error msg=\"Handler for POST /containers/" + B
                        + "/start returned error: transport is closing: unavailable\"",
                "time=\"2026-12-03T04:15:24.721916310Z\" level=error msg=\"failed to start container\" container=" + A
                        + " error=\"task " + A + ": already exists\"",
                "time=\"2026-12-03T04:15:26.170993163Z\" level=error msg=\"Handler for POST /containers/" + A
                        + "/start returned error: task " + A + ": already exists\"",
                // a task of another id: not this container's own
                "time=\"2026-12-03T04:15:27.000000000Z\" level=error msg=\"Handler for POST /v1.41/containers/" + B
                        + "/start returned error: task " + A + ": already exists\""));
        assertThat(EngineLog.refusedStarts(log)).containsExactly(
                new EngineLog.Refusal(A, EngineEvents.nanos(Instant.parse("2026-12-03T04:15:26.170993163Z"))));
        assertThat(EngineLog.refusedStarts(dir.resolve("none.log"))).isEmpty();
    }

    /** dockerd's other words for the same refusal, as it wrote them in FleetHistoryIT seed -7935681232215865479. */
    @Test
    void aStartRefusedAsIdAlreadyInUseCountsToo(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("fleet-3-dockerd.log");
        Files.write(log, List.of(
                "time=\"2026-12-07T22:57:44.340856502Z\" level=error msg=\"Container not cleaned up from containerd from previous run\" container="
                        + A + " error=\"id already in use\"",
                "time=\"2026-12-07T22:57:44.373028926Z\" level=error msg=\"Handler for POST /containers/" + A
                        + "/start returned error: id already in use\"",
                // another refusal of a start: not one for good
                "time=\"2026-12-07T22:57:45.000000000Z\" level=error msg=\"Handler for POST /v1.41/containers/" + B
                        + "/start returned error: transport is closing: unavailable\""));
        assertThat(EngineLog.refusedStarts(log)).containsExactly(
                new EngineLog.Refusal(A, EngineEvents.nanos(Instant.parse("2026-12-07T22:57:44.373028926Z"))));
    }

    /** Lines as dockerd 20.10 wrote them in FleetHistoryIT seed 6271426431236788468 (failure model row 70). */
    @Test
    void onlyARemovalFailedOnABusyFilesystemMakesAContainerUnremovable(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("fleet-2-dockerd.log");
        Files.write(log, List.of(
                "time=\"2026-12-03T08:16:09.726107066Z\" level=error msg=\"Error removing mounted layer " + A
                        + ": unlinkat /var/lib/mesh-fleet/fleet-2/overlay2/e19/merged: device or resource busy\"",
                "time=\"2026-12-03T08:16:09.726364058Z\" level=error msg=\"Handler for DELETE /containers/" + A
                        + " returned error: container " + A + ": driver \\\"overlay2\\\" failed to remove root filesystem: unlinkat "
                        + "/var/lib/mesh-fleet/fleet-2/overlay2/e19/merged: device or resource busy\"",
                // another refusal of a removal: a conflict, which a client can resolve
                "time=\"2026-12-03T08:16:10.000000000Z\" level=error msg=\"Handler for DELETE /v1.41/containers/" + B
                        + "?force=1 returned error: removal of container " + B + " is already in progress\""));
        assertThat(EngineLog.unremovable(log)).containsExactly(A);
        assertThat(EngineLog.unremovable(dir.resolve("none.log"))).isEmpty();
    }
}
