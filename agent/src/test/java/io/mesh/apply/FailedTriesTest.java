package io.mesh.apply;

import io.mesh.wire.ApplyReport.ContainerResult;
import io.mesh.wire.ContainerAction;
import io.mesh.wire.DesiredRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** The back-off of a push's failed tries (failure model row 81), on local disk, without Docker or ZooKeeper. */
class FailedTriesTest {
    private static final Instant T0 = Instant.parse("2026-11-30T03:30:00Z");
    @TempDir
    Path stateDir;

    private static DesiredRecord push(String push, String revision) {
        return new DesiredRecord("store", revision, push, null);
    }

    private static ContainerResult notReady(String name) {
        return new ContainerResult(name, "store-" + name, ContainerAction.FAILED, List.of("not ready: exited (3) 0.1s after its start",
                "log: no config"), "id-" + name);
    }

    @Test
    void theBackOffDoublesFromTwoSecondsToFiveMinutes() {
        assertThat(List.of(1, 2, 3, 4, 8, 9, 10, 100).stream().map(FailedTries::backoff).map(Duration::toSeconds).toList())
                .containsExactly(2L, 4L, 8L, 16L, 256L, 300L, 300L, 300L);
    }

    @Test
    void failedTriesOfAPushCountUpSurviveANewInstanceAndAnotherPushStartsAfresh() throws Exception {
        FailedTries tries = new FailedTries(stateDir);
        DesiredRecord p1 = push("push-0000000001", "r1");
        FailedTries.Memory m = tries.record("store", p1, Set.of("bad", "web"), Map.of("bad", notReady("bad")), T0);
        assertThat(m.failures()).isEqualTo(1);
        assertThat(m.nextTry()).isEqualTo(T0.plusSeconds(2));
        assertThat(m.containers()).containsOnlyKeys("bad");

        // An apply in between tried nothing of it: nothing changes.
        FailedTries again = new FailedTries(stateDir); // a restarted agent reads the same file
        assertThat(again.record("store", p1, Set.of(), Map.of(), T0.plusSeconds(1))).isEqualTo(m);
        m = again.record("store", p1, Set.of("bad"), Map.of("bad", notReady("bad")), T0.plusSeconds(3));
        assertThat(m.failures()).isEqualTo(2);
        assertThat(m.nextTry()).isEqualTo(T0.plusSeconds(3 + 4));
        assertThat(again.of("store", p1)).contains(m);
        assertThat(again.of("store", push("push-0000000002", "r2"))).as("another push's apply starts afresh").isEmpty();

        // A thaw or a release: the next try is now; what failed is still known.
        again.tryAgainNow("store");
        FailedTries.Memory now = again.read("store").orElseThrow();
        assertThat(now.nextTry()).isNull();
        assertThat(now.failures()).isZero();
        assertThat(now.containers()).containsOnlyKeys("bad");

        // A try that succeeds forgets it, and the file goes.
        assertThat(again.record("store", p1, Set.of("bad"), Map.of(), T0.plusSeconds(10))).isNull();
        assertThat(Files.exists(stateDir.resolve("tries/store.json"))).isFalse();
    }

    @Test
    void aFileThatCannotBeReadCountsAsNone() throws Exception {
        Files.createDirectories(stateDir.resolve("tries"));
        Files.writeString(stateDir.resolve("tries/store.json"), "{not json");
        assertThat(new FailedTries(stateDir).read("store")).isEmpty();
    }
}
