package io.mesh.section;

import io.mesh.testing.ChildJvm;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The host fence (a lapsed lock touches nothing) between real processes: a second JVM ({@link FenceHolder}, through
 * {@link ChildJvm}) holds or asks for the same module's fence under the same state directory, as a frozen daemon and a
 * window process of one host do.
 *
 * <ul>
 *   <li>held by one process, it is refused to another until released;</li>
 *   <li>a holder killed with {@code kill -9} frees it at once (the kernel drops the lock with the process);</li>
 *   <li>a holder frozen with SIGSTOP still holds it (a paused process must not lose it: that is the point);</li>
 *   <li>two threads of one JVM exclude each other (the JDK refuses a second {@code FileLock} in one JVM; the fence
 *       adds a semaphore);</li>
 *   <li>{@link HostFence#holder} reports the holder's text, and reading it does not drop the lock (POSIX
 *       {@code fcntl} locks drop when the holding process closes <em>any</em> descriptor of the file: the holder
 *       text lives in its own file).</li>
 * </ul>
 *
 * <p>On the code before commit 00dc6f7 there is no fence at all ({@code io.mesh.section.HostFence} does not exist):
 * this class does not compile there, and nothing kept a process whose ZooKeeper lock lapsed off the containers.
 */
class HostFenceTest {
    private Path dir;
    private HostFence fences;
    private final String module = "fence-" + Long.toHexString(System.nanoTime());
    private final List<ChildJvm> children = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        dir = Files.createTempDirectory("mesh-fence");
        fences = new HostFence(dir.resolve("state"));
    }

    @AfterEach
    void tearDown() {
        children.forEach(ChildJvm::close);
    }

    /** Starts a process that takes the fence and waits (bounded) until it says it holds it. */
    private ChildJvm holder(String name) throws Exception {
        ChildJvm c = ChildJvm.start(name, dir, "64m", FenceHolder.class.getName(),
                List.of(dir.resolve("state").toString(), module, "hold", dir.resolve(name + ".release").toString()));
        children.add(c);
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
                .until(() -> c.output().contains("HELD") || !c.isAlive());
        assertThat(c.output()).as("%s took the fence", name).contains("HELD");
        return c;
    }

    /** Runs a process that tries once to take the fence; @return true when it got it. */
    private boolean anotherProcessGets(String name, long waitMillis) throws Exception {
        ChildJvm c = ChildJvm.start(name, dir, "64m", FenceHolder.class.getName(),
                List.of(dir.resolve("state").toString(), module, "try", String.valueOf(waitMillis)));
        children.add(c);
        int code = c.awaitExit(Duration.ofSeconds(30));
        assertThat(c.output()).as("%s output", name).containsAnyOf("GOT", "REFUSED");
        return code == 0;
    }

    @Test
    void aFenceHeldByAProcessIsRefusedToAnotherUntilReleased() throws Exception {
        ChildJvm h = holder("holder");
        assertThat(fences.acquire(module, "test", Duration.ofMillis(300))).as("taken while another process holds it").isEmpty();
        assertThat(fences.holder(module)).isEqualTo("fence-holder pid " + h.pid());

        Files.createFile(dir.resolve("holder.release"));
        long t0 = System.nanoTime();
        Optional<HostFence.Held> mine = fences.acquire(module, "test", Duration.ofSeconds(20));
        assertThat(mine).as("taken once released").isPresent();
        assertThat(h.output()).contains("RELEASED");
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(10));
        assertThat(fences.holder(module)).isEqualTo("test");
        mine.get().close();
        assertThat(h.isAlive()).as("the holder gave it back and lives on").isTrue();
    }

    @Test
    void aHolderKilledWithSigkillFreesItAtOnce() throws Exception {
        ChildJvm h = holder("holder");
        assertThat(fences.acquire(module, "test", Duration.ZERO)).isEmpty();
        h.kill9();   // returns once the process is gone
        long t0 = System.nanoTime();
        Optional<HostFence.Held> mine = fences.acquire(module, "test", Duration.ofSeconds(5));
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertThat(mine).as("free after kill -9").isPresent();
        assertThat(ms).as("ms to take it after the holder died").isLessThan(500);
        mine.get().close();
    }

    @Test
    void aHolderFrozenWithSigstopStillHoldsIt() throws Exception {
        ChildJvm h = holder("holder");
        h.pause();
        try {
            assertThat(fences.acquire(module, "test", Duration.ofSeconds(2))).as("taken from a frozen holder").isEmpty();
            assertThat(anotherProcessGets("other", 1_000)).as("another process took it from a frozen holder").isFalse();
        } finally {
            h.resume();
        }
        assertThat(fences.acquire(module, "test", Duration.ofMillis(300))).as("taken from a resumed holder").isEmpty();
        Files.createFile(dir.resolve("holder.release"));
        Optional<HostFence.Held> mine = fences.acquire(module, "test", Duration.ofSeconds(20));
        assertThat(mine).isPresent();
        mine.get().close();
    }

    @Test
    void twoThreadsOfOneJvmExcludeEachOther() throws Exception {
        HostFence.Held first = fences.acquire(module, "thread one", Duration.ZERO).orElseThrow();
        // another thread, and another HostFence over the same state directory (as an apply and a window of one daemon)
        HostFence other = new HostFence(dir.resolve("state"));
        CompletableFuture<Optional<HostFence.Held>> refused = CompletableFuture.supplyAsync(() -> acquire(other, Duration.ofMillis(300)));
        assertThat(refused.get(10, TimeUnit.SECONDS)).as("taken by a second thread while the first holds it").isEmpty();

        CountDownLatch asking = new CountDownLatch(1);
        CompletableFuture<Optional<HostFence.Held>> waiting = CompletableFuture.supplyAsync(() -> {
            asking.countDown();
            return acquire(other, Duration.ofSeconds(20));
        });
        asking.await(10, TimeUnit.SECONDS);
        Thread.sleep(200);   // deliberate: the second thread is waiting; give it the chance to take what it must not
        assertThat(waiting).as("taken by a second thread while the first holds it").isNotDone();
        first.close();
        Optional<HostFence.Held> second = waiting.get(20, TimeUnit.SECONDS);
        assertThat(second).as("taken once the first thread released it").isPresent();
        assertThat(first.valid()).isFalse();
        assertThat(second.get().valid()).isTrue();
        // held by a thread of this JVM: refused to another process too
        assertThat(anotherProcessGets("other", 300)).isFalse();
        second.get().close();
        assertThat(anotherProcessGets("after", 2_000)).as("free once both threads released it").isTrue();
    }

    @Test
    void readingTheHolderReportsItAndDoesNotDropTheLock() throws Exception {
        HostFence.Held held = fences.acquire(module, "apply of " + module + " by test", Duration.ZERO).orElseThrow();
        // read who holds it, many times, from this (the holding) process and through another HostFence instance
        for (int i = 0; i < 20; i++) {
            assertThat(fences.holder(module)).isEqualTo("apply of " + module + " by test");
            assertThat(new HostFence(dir.resolve("state")).holder(module)).isEqualTo("apply of " + module + " by test");
        }
        assertThat(Files.exists(dir.resolve("state").resolve("fences").resolve(module + ".holder"))).isTrue();
        assertThat(held.valid()).isTrue();
        assertThat(anotherProcessGets("other", 300)).as("another process took it after the holder text was read").isFalse();
        held.close();
        assertThat(anotherProcessGets("after", 2_000)).isTrue();
        assertThat(fences.holder(module)).as("the last holder's text").startsWith("fence-holder pid ");
    }

    /**
     * {@link HostFence#free}, the daemon's probe of a journalled window (decision 26): it says whether another process
     * or a thread of this JVM holds the fence, and takes nothing from the holder (its kernel lock stays, the holder
     * text is not rewritten).
     */
    @Test
    void freeSaysWhetherAnyoneHoldsTheFenceAndTakesNothingFromItsHolder() throws Exception {
        assertThat(fences.free(module)).as("never taken").isTrue();
        ChildJvm h = holder("holder");
        for (int i = 0; i < 20; i++) assertThat(fences.free(module)).as("held by another process").isFalse();
        assertThat(fences.holder(module)).isEqualTo("fence-holder pid " + h.pid());
        h.kill9();
        assertThat(fences.free(module)).as("its holder killed with kill -9").isTrue();

        HostFence.Held mine = fences.acquire(module, "thread one", Duration.ZERO).orElseThrow();
        for (int i = 0; i < 20; i++) assertThat(new HostFence(dir.resolve("state")).free(module)).as("held by this JVM").isFalse();
        assertThat(mine.valid()).isTrue();
        assertThat(anotherProcessGets("other", 300)).as("another process took it after a probe").isFalse();
        assertThat(fences.holder(module)).isEqualTo("thread one");
        mine.close();
        assertThat(fences.free(module)).isTrue();
        assertThat(fences.holder(module)).as("a probe writes no holder").isEqualTo("thread one");
    }

    private Optional<HostFence.Held> acquire(HostFence f, Duration wait) {
        try {
            return f.acquire(module, "thread two", wait);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
