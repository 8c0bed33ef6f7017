package io.mesh.apply;

import io.mesh.docker.PullLayers;
import io.mesh.docker.RunState;
import io.mesh.manifest.ReadySpec;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/** The progress line of an apply, its rate limit and its layer counts (docs/decisions/0032-apply-progress.md), without Docker or ZooKeeper. */
class ApplyProgressTest {
    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final List<String> writes = new ArrayList<>();
    private int clears;
    private final ApplyProgress progress = new ApplyProgress(new ApplyProgress.Sink() {
        @Override public void write(String detail) { writes.add(detail); }
        @Override public void clear() { clears++; }
    }, now::get);

    private void after(long millis) { now.addAndGet(TimeUnit.MILLISECONDS.toNanos(millis)); }

    /**
     * An activity begun in the first second that tells nothing more (a stop waiting out its stop-timeout) is written
     * once it is due, on the real clock; a clear before then writes nothing.
     */
    @Test
    void aLineNotDueYetIsWrittenWhenItIsDue() throws Exception {
        List<String> lines = java.util.Collections.synchronizedList(new ArrayList<>());
        ApplyProgress real = new ApplyProgress(into(lines), System::nanoTime, true);
        real.doing("web", ApplyProgress.stopping("m-web", 10));
        assertThat(lines).isEmpty();
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(5)).until(() -> !lines.isEmpty());
        assertThat(lines).containsExactly("stopping m-web (it has up to 10s to exit)");

        List<String> none = java.util.Collections.synchronizedList(new ArrayList<>());
        ApplyProgress quick = new ApplyProgress(into(none), System::nanoTime, true);
        quick.doing("web", ApplyProgress.stopping("m-web", 10));
        quick.clear();
        Thread.sleep(ApplyProgress.GRACE.toMillis() + 300);
        assertThat(none).as("done within its first second: nothing written").isEmpty();
    }

    /** @return a sink that keeps every line written into {@code lines} */
    private static ApplyProgress.Sink into(List<String> lines) {
        return new ApplyProgress.Sink() {
            @Override public void write(String detail) { lines.add(detail); }
            @Override public void clear() {}
        };
    }

    @Test
    void nothingIsWrittenInTheApplysFirstSecondNorCleared() {
        progress.doing("pull busybox", "pulling busybox");
        after(900);
        progress.doing("pull busybox", "pulling busybox (0 of 1 layers)");
        progress.clear();
        assertThat(writes).isEmpty();
        assertThat(clears).as("an apply that wrote nothing removes nothing").isZero();
    }

    @Test
    void atMostOneWriteASecondWhateverTheEventsAndOnlyWhenTheLineChanged() {
        after(1000);
        PullLayers layers = new PullLayers();
        for (int i = 0; i < 50; i++) {
            layers.seen("layer" + (i % 5), i < 5 ? "Pulling fs layer" : i < 45 ? "Downloading" : "Pull complete");
            progress.doing("pull app:1", ApplyProgress.pulling("app:1", layers));
            after(30); // 50 layer events in 1.5 s
        }
        assertThat(writes).containsExactly("pulling app:1 (0 of 1 layers)", "pulling app:1 (0 of 5 layers)");
        after(1000);
        progress.doing("pull app:1", ApplyProgress.pulling("app:1", layers));
        progress.doing("pull app:1", ApplyProgress.pulling("app:1", layers));
        assertThat(writes).hasSize(3).last().isEqualTo("pulling app:1 (5 of 5 layers)");
        after(1000);
        progress.doing("pull app:1", ApplyProgress.pulling("app:1", layers));
        assertThat(writes).as("the same line is not written again").hasSize(3);
        progress.clear();
        assertThat(clears).isEqualTo(1);
    }

    @Test
    void activitiesUnderWayAreJoinedTheRestCounted() {
        after(1000);
        progress.doing("app-a", "waiting for app-a: health starting");
        progress.done("app-a");
        after(1000);
        progress.doing("app-b", "waiting for app-b: health starting");
        progress.doing("app-c", "waiting for app-c: health starting");
        progress.doing("app-d", "waiting for app-d: health starting");
        assertThat(progress.line()).isEqualTo("waiting for app-b: health starting; waiting for app-c: health starting; and 1 more");
        assertThat(writes).containsExactly("waiting for app-a: health starting", "waiting for app-b: health starting");
    }

    @Test
    void linesSayWhatIsAwaited() {
        ReadySpec ready = new ReadySpec("10s", null);
        assertThat(ApplyProgress.waitingFor("app-api", state("starting", 2), ready)).isEqualTo("waiting for app-api: health starting, 2 failed checks");
        assertThat(ApplyProgress.waitingFor("app-api", state("starting", 1), ready)).isEqualTo("waiting for app-api: health starting, 1 failed check");
        assertThat(ApplyProgress.waitingFor("app-api", state("starting", 0), ready)).isEqualTo("waiting for app-api: health starting");
        assertThat(ApplyProgress.waitingFor("app-api", state(RunState.NO_HEALTH, 0), ready))
                .isEqualTo("waiting for app-api: running, ready after min-healthy 10s");
        assertThat(ApplyProgress.pulling("busybox:1.36", new PullLayers())).isEqualTo("pulling busybox:1.36");
        assertThat(ApplyProgress.fence("apply of mesh-agent pid 7")).isEqualTo("waiting for the fence (held by apply of mesh-agent pid 7)");
        assertThat(ApplyProgress.fence(null)).isEqualTo("waiting for the fence");
        assertThat(ApplyProgress.lock("window gc (w-1)")).isEqualTo("waiting for the module lock (held by window gc (w-1))");
    }

    /** The items dockerd sends for a pull of two layers, one of them already here. */
    @Test
    void layersAreCountedFromThePullsItemsNotItsOtherLines() {
        PullLayers l = new PullLayers();
        assertThat(l.seen("1.36", "Pulling from library/busybox")).isFalse();
        assertThat(l.seen("a1", "Already exists")).isTrue();
        assertThat(l.seen("b2", "Pulling fs layer")).isTrue();
        assertThat(l.seen("b2", "Downloading")).as("no change of counts").isFalse();
        assertThat(l.total()).isEqualTo(2);
        assertThat(l.done()).isEqualTo(1);
        assertThat(l.seen("b2", "Pull complete")).isTrue();
        assertThat(l.seen(null, "Digest: sha256:0123")).isFalse();
        assertThat(l.seen(null, "Status: Downloaded newer image for busybox:1.36")).isFalse();
        assertThat(l.done()).isEqualTo(2);
        assertThat(l.total()).isEqualTo(2);
    }

    private static RunState state(String health, int failing) {
        return new RunState(true, "running", 0, "2026-01-01T00:00:00Z", null, health, null, "sha256:1", failing);
    }
}
