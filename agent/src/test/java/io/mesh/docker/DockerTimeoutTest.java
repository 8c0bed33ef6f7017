package io.mesh.docker;

import io.mesh.manifest.ManifestParser;
import io.mesh.manifest.ModuleSpec;
import io.mesh.testing.ChildJvm;
import io.mesh.testing.TestDocker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Failure model, "dockerd hangs": every Docker call has a bound. Against a real endpoint
 * that accepts connections and never answers ({@link HungDockerd}: what a hung dockerd looks like to a client), each
 * call of {@link DockerEngine} returns within its bound with an error naming the engine and the call, instead of
 * never; and against the real engine the calls that legitimately wait long (a stop, a step's wait) are not cut by the
 * short bound.
 */
@Tag("slow")
class DockerTimeoutTest {
    /** The call bound these tests give the engine (the agent's default is 30 s). */
    private static final Duration BOUND = Duration.ofSeconds(2);
    /** What a bounded call may take beyond its bound on a loaded 2-core machine. */
    private static final long SLACK_MS = 1_500;

    private String module;

    @BeforeEach
    void clean() {
        module = TestDocker.uniqueModule("dt");
        TestDocker.clean(module);
    }

    @AfterEach
    void cleanAfter() {
        TestDocker.clean(module);
    }

    /** Runs a call, returns what it threw and checks the time it took. */
    private static Throwable timed(long atLeastMs, long atMostMs, Callable<?> call) {
        long t0 = System.nanoTime();
        Throwable thrown = null;
        try {
            call.call();
        } catch (Throwable e) {
            thrown = e;
        }
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertThat(ms).as("call took %d ms", ms).isBetween(atLeastMs, atMostMs);
        assertThat(Thread.currentThread().isInterrupted()).as("the watchdog's interrupt is taken back").isFalse();
        return thrown;
    }

    @Test
    void everyCallToAHungEngineReturnsWithinItsBound() throws Exception {
        try (HungDockerd hung = HungDockerd.start(false); DockerEngine engine = new DockerEngine(hung.uri(), BOUND)) {
            long b = BOUND.toMillis();
            assertThat(timed(b - 100, b + SLACK_MS, () -> {
                engine.ping();
                return null;
            })).isInstanceOf(IllegalStateException.class).hasMessageContaining(hung.uri()).hasMessageContaining("did not answer a ping within 2s");
            assertThat(timed(b - 100, b + SLACK_MS, () -> engine.moduleContainers(module)))
                    .isInstanceOf(DockerTimeoutException.class).hasMessageContaining(hung.uri())
                    .hasMessageContaining("the list of module " + module + "'s containers within 2s");
            assertThat(timed(b - 100, b + SLACK_MS, () -> engine.inspect("c1"))).isInstanceOf(DockerTimeoutException.class);
            assertThat(timed(b - 100, b + SLACK_MS, () -> {
                engine.start("c1");
                return null;
            })).isInstanceOf(DockerTimeoutException.class).hasMessageContaining("the start of container c1");
            assertThat(timed(b - 100, b + SLACK_MS, () -> {
                engine.remove("c1");
                return null;
            })).isInstanceOf(DockerTimeoutException.class);
            assertThat(timed(b - 100, b + SLACK_MS, () -> {
                engine.kill("c1");
                return null;
            })).isInstanceOf(DockerTimeoutException.class);
            assertThat(timed(b - 100, b + SLACK_MS, () -> engine.restartPolicy("c1"))).isInstanceOf(DockerTimeoutException.class);
            assertThat(timed(b - 100, b + SLACK_MS, () -> engine.containersWithLabel(Labels.MODULE, module)))
                    .isInstanceOf(DockerTimeoutException.class);
            assertThat(timed(b - 100, b + SLACK_MS, () -> engine.stepLabels(module))).isInstanceOf(DockerTimeoutException.class);
            // a stop is bounded by its stop timeout plus the call bound
            assertThat(timed(b + 3_000 - 100, b + 3_000 + SLACK_MS, () -> {
                engine.stop("c1", 3);
                return null;
            })).isInstanceOf(DockerTimeoutException.class).hasMessageContaining("the stop of container c1 (stop timeout 3s) within 5s");
            // a wait is bounded by the caller's bound: "still running" when it passes
            Integer[] exit = {-1};
            assertThat(timed(900, 1_000 + SLACK_MS, () -> exit[0] = engine.awaitExit("c1", Duration.ofSeconds(1)))).isNull();
            assertThat(exit[0]).isNull();
            // a step's start is a short call
            assertThat(timed(b - 100, b + SLACK_MS, () -> engine.runStep("c1", Duration.ofMinutes(30), 5)))
                    .isInstanceOf(DockerTimeoutException.class);
            // a hook's exec: its create is a short call, whatever the hook's own timeout (decision 38)
            assertThat(timed(b - 100, b + SLACK_MS, () -> engine.exec("c1", java.util.List.of("true"), Duration.ofMinutes(5), 5)))
                    .isInstanceOf(DockerTimeoutException.class).hasMessageContaining("the exec create in container c1");
        }
    }

    /** More calls at once than the client's 32 connections: those waiting for a connection are bounded too. */
    @Test
    void manyCallsAtOnceToAHungEngineAllReturnWithinTheBound() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(40);
        try (HungDockerd hung = HungDockerd.start(false); DockerEngine engine = new DockerEngine(hung.uri(), BOUND)) {
            long t0 = System.nanoTime();
            List<Future<Throwable>> calls = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                calls.add(pool.submit(() -> {
                    try {
                        engine.moduleContainers(module);
                        return null;
                    } catch (Throwable e) {
                        return e;
                    }
                }));
            }
            for (Future<Throwable> f : calls) {
                assertThat(f.get(BOUND.toMillis() + 10_000, TimeUnit.MILLISECONDS)).isInstanceOf(DockerTimeoutException.class);
            }
            assertThat((System.nanoTime() - t0) / 1_000_000).isLessThan(BOUND.toMillis() + 2 * SLACK_MS);
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * A call abandoned at its bound closes only its own connection: the engine goes on answering the calls dockerd
     * answers (the endpoint here answers pings and hangs every other request).
     */
    @Test
    void aCallAbandonedAtItsBoundLeavesTheEngineUsable() throws Exception {
        try (HungDockerd half = HungDockerd.start(true); DockerEngine engine = new DockerEngine(half.uri(), BOUND)) {
            engine.ping();
            assertThatThrownBy(() -> engine.moduleContainers(module)).isInstanceOf(DockerTimeoutException.class);
            for (int i = 0; i < 50; i++) engine.ping(); // more than the pool's 32 connections: none leaked
        }
    }

    /** {@code mesh-agent run --docker-timeout 2s} against a hung engine exits 3 (unreachable) within the bound, naming it. */
    @Test
    void theAgentAgainstAHungEngineExitsWithinTheBoundNamingIt() throws Exception {
        Path dir = Files.createTempDirectory("mesh-docker-timeout");
        try (HungDockerd hung = HungDockerd.start(false);
             ChildJvm agent = ChildJvm.agent("agent", dir, List.of("run", "--host", "host-" + module, "--zk", "127.0.0.1:1",
                     "--docker-host", hung.uri(), "--docker-timeout", "2s", "--state-dir", dir.resolve("state").toString()))) {
            assertThat(agent.awaitExit(Duration.ofSeconds(30))).as(agent.output()).isEqualTo(3);
            assertThat(agent.output()).contains("Docker engine at " + hung.uri() + " does not answer")
                    .contains("did not answer a ping within 2s");
        }
    }

    /**
     * On the real engine, with the same short bound: a stop that takes its 4 s stop timeout and a 4 s wait for a
     * container's exit (what a window's step wait is) are not cut. Creates and starts go through the test engine (30 s
     * bound): on this loaded 2-core machine a start alone can take more than 2 s.
     */
    @Test
    void theLongWaitsOfARealEngineAreNotCutByTheShortBound() throws Exception {
        ModuleSpec spec = new ManifestParser().parse("module: " + module + "\nhosts: [h]\ncontainers:\n"
                + "  slow:\n    image: " + BUSYBOX + "\n    command: [sh, -c, \"while true; do sleep 1; done\"]\n"
                + "    network: none\n    stop-timeout: 4s\n"
                + "  job:\n    image: " + BUSYBOX + "\n    command: [sh, -c, \"sleep 4; exit 7\"]\n    network: none\n").get(0);
        DockerEngine normal = TestDocker.engine();
        try (DockerEngine engine = new DockerEngine(null, BOUND)) {
            String slow = normal.create(module + "-slow", spec.containers().get("slow"), Map.of(Labels.MODULE, module));
            normal.start(slow);
            long t0 = System.nanoTime();
            engine.stop(slow, 4); // sh as PID 1 ignores SIGTERM: dockerd answers after the 4 s stop timeout
            assertThat((System.nanoTime() - t0) / 1_000_000).isGreaterThan(3_500);
            assertThat(normal.isRunning(slow)).isFalse();

            String job = normal.create(module + "-job", spec.containers().get("job"), Map.of(Labels.MODULE, module));
            normal.start(job);
            assertThat(engine.awaitExit(job, Duration.ofSeconds(60))).isEqualTo(7);
        }
    }
}
