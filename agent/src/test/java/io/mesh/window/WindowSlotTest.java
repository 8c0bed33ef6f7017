package io.mesh.window;

import io.mesh.manifest.ContainerSpec;
import io.mesh.manifest.ModuleSpec;
import io.mesh.manifest.ScheduleSpec;
import io.mesh.manifest.StepSpec;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.SlotRecord;
import io.mesh.wire.SlotState;
import io.mesh.wire.Times;
import io.mesh.wire.ZkPaths;
import io.mesh.zk.MeshStore;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.utils.ZKPaths;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

/**
 * {@link WindowSlot} against a real ZooKeeper: the limit, the visible queue, start-by, and a window whose session goes
 * while it runs still counting (its claim) until it gives the slot back or its claim's {@code until} passes
 * (docs/decisions/0016-window-slots.md).
 */
@Tag("slow") // over 20 s of file or ZooKeeper waits: the full run, not --fast (which must stay under 2 min)
class WindowSlotTest {
    @RegisterExtension
    static final ZooKeeperExtension zk = new ZooKeeperExtension().resetBeforeEach();

    private static final StepSpec STEP = new StepSpec("mesh-demo/busybox:1", List.of("true"), null, null, null, null);

    static ScheduleSpec schedule(Integer max, String group) {
        return new ScheduleSpec("30 3 * * *", null, List.of(), STEP, "30m", max, group, null, null);
    }

    static ModuleSpec module(String name, ScheduleSpec s) {
        return new ModuleSpec(name, List.of("*"), Map.of(), Map.of("gc", s), null);
    }

    @Test
    void aGroupsLimitIsTheSmallestMaxConcurrentAmongTheSchedulesNamingItElseOne() {
        ZkPaths paths = new ZkPaths("/mesh");
        ScheduleSpec a = schedule(null, "registries");
        // no schedule of the group gives max-concurrent: one at a time
        assertThat(WindowSlot.limit(paths, "a", "gc", a, List.of(module("a", a), module("b", schedule(null, "registries")))))
                .contains(new WindowSlot.Limit("group-registries", "/mesh/slots/group-registries", 1));
        // set where the group is named, in another module: the smallest wins
        assertThat(WindowSlot.limit(paths, "a", "gc", schedule(3, "registries"),
                List.of(module("b", schedule(2, "registries")), module("c", schedule(5, "registries")), module("d", schedule(1, "other")))))
                .contains(new WindowSlot.Limit("group-registries", "/mesh/slots/group-registries", 2));
        // two schedules of one module in one group: the other one's max-concurrent counts too (a review found three
        // windows running in a group of limit 1 when it did not)
        ModuleSpec two = new ModuleSpec("a", List.of("*"), Map.of(), Map.of("s1", schedule(1, "g"), "s2", schedule(3, "g")), null);
        assertThat(WindowSlot.limit(paths, "a", "s2", two.schedules().get("s2"), List.of(two)))
                .contains(new WindowSlot.Limit("group-g", "/mesh/slots/group-g", 1));
        assertThat(WindowSlot.limit(paths, "store", "gc", schedule(2, null), List.of()))
                .contains(new WindowSlot.Limit("window-store-gc", "/mesh/slots/window-store-gc", 2));
        assertThat(WindowSlot.limit(paths, "store", "gc", schedule(null, null), List.of())).isEmpty();
    }

    private static WindowSlot slot(MeshStore store, String host, String window, Duration claimFor, Instant startBy) {
        WindowSlot.Limit limit = new WindowSlot.Limit("window-store-gc", store.paths().windowSlots("store", "gc"), 1);
        return new WindowSlot(store, limit, new SlotRecord(limit.key(), 1, host, "store", "gc", window, SlotState.WAITING,
                Times.now(), Times.now(), startBy, new ProcessRef(1, "test")), claimFor);
    }

    private static CuratorFramework client(int sessionMs) {
        CuratorFramework c = CuratorFrameworkFactory.newClient(zk.connect(), sessionMs, 5_000, new RetryOneTime(100));
        c.start();
        return c;
    }

    @Test
    void aSecondWindowWaitsVisiblyInTheQueueAndRunsWhenTheFirstGivesTheSlotBack() throws Exception {
        MeshStore store = new MeshStore(zk.client(), zk.paths());
        String slotPath = zk.paths().windowSlots("store", "gc");
        WindowSlot first = slot(store, "h1", "w-1", Duration.ofMinutes(5), Times.now().plusSeconds(30));
        assertThat(first.acquire(Times.now().plusSeconds(10))).isTrue();
        assertThat(first.state()).isEqualTo(WindowSlot.State.HELD);
        WindowSlot second = slot(store, "h2", "w-2", Duration.ofMinutes(5), Times.now().plusSeconds(30));
        CompletableFuture<Boolean> got = acquireAsync(second, 20);
        // zkCli's view: the running window's claim and lease, the waiting one in the queue, each as JSON
        await().atMost(Duration.ofSeconds(5)).until(() -> children(ZkPaths.slotQueue(slotPath)).size() == 1);
        List<SlotRecord> queue = records(ZkPaths.slotQueue(slotPath));
        assertThat(queue).extracting(SlotRecord::window, SlotRecord::state).containsExactly(tuple("w-2", SlotState.WAITING));
        List<SlotRecord> claims = records(ZkPaths.slotClaims(slotPath));
        assertThat(claims).extracting(SlotRecord::window, SlotRecord::state).containsExactly(tuple("w-1", SlotState.RUNNING));
        Thread.sleep(500); // deliberate: the second must still be waiting
        assertThat(got).isNotDone();
        first.close();
        assertThat(got.get(10, TimeUnit.SECONDS)).isTrue();
        assertThat(records(ZkPaths.slotClaims(slotPath))).extracting(SlotRecord::window).containsExactly("w-2");
        assertThat(records(ZkPaths.slotLeases(slotPath))).extracting(SlotRecord::window, SlotRecord::state)
                .containsExactly(tuple("w-2", SlotState.RUNNING));
        second.close();
        assertThat(children(ZkPaths.slotClaims(slotPath))).isEmpty();
        assertThat(children(ZkPaths.slotLeases(slotPath))).isEmpty();
    }

    /**
     * The one disruption budget (decision 37): a host of the group down for another cause takes a place of its limit,
     * unless it is the window's own host or a running window counts it already; the window takes the place once it is
     * up again.
     */
    @Test
    void aHostDownForAnotherCauseTakesAPlaceOfTheGroupsLimit() throws Exception {
        MeshStore store = new MeshStore(zk.client(), zk.paths());
        java.util.concurrent.atomic.AtomicReference<List<io.mesh.wire.GroupDowntime.Cause>> down = new java.util.concurrent.atomic.AtomicReference<>(
                List.of(new io.mesh.wire.GroupDowntime.Cause("h1", io.mesh.wire.GroupDowntime.Kind.HOLD, "store", "store-app", "ops", "disk swap", Times.now())));
        WindowSlot.Limit limit = new WindowSlot.Limit("group-g", store.paths().groupSlots("g"), 1);
        java.util.function.BiFunction<String, String, WindowSlot> slot = (host, window) -> new WindowSlot(store, limit,
                new SlotRecord(limit.key(), 1, host, "store", "gc", window, SlotState.WAITING, Times.now(), Times.now(), Times.now().plusSeconds(30),
                        new ProcessRef(1, "test")), Duration.ofMinutes(5), down::get);
        WindowSlot own = slot.apply("h1", "w-own");
        assertThat(own.acquire(Times.now().plusSeconds(5))).as("its own host's hold is not another place").isTrue();
        own.close();
        WindowSlot other = slot.apply("h2", "w-other");
        assertThat(other.acquire(Times.now().plusSeconds(1))).as("h1 is down: the one place is taken").isFalse();
        assertThat(other.ahead()).contains("down for another cause", "h1: store-app held --stop by ops (disk swap)");
        WindowSlot again = slot.apply("h2", "w-again");
        CompletableFuture<Boolean> got = acquireAsync(again, 20);
        Thread.sleep(1_500); // deliberate: it waits while h1 is down
        assertThat(got).isNotDone();
        down.set(List.of());
        assertThat(got.get(10, TimeUnit.SECONDS)).as("h1 up again").isTrue();
        again.close();
    }

    /**
     * Two windows of a group of limit 2 that take their leases together, beside a third host down: each counts the other
     * as a holder before either has marked its lease running, so one runs and the other waits (a reviewer's race, both
     * ran before: counted only leases already marked running).
     */
    @Test
    void twoWindowsTakingTheirLeasesTogetherBesideAHostDownDoNotBothRun() throws Exception {
        MeshStore store = new MeshStore(zk.client(), zk.paths());
        WindowSlot.Limit limit = new WindowSlot.Limit("group-race", store.paths().groupSlots("race"), 2);
        List<io.mesh.wire.GroupDowntime.Cause> down = List.of(new io.mesh.wire.GroupDowntime.Cause("h3", io.mesh.wire.GroupDowntime.Kind.HOLD,
                "store", "store-app", "ops", "disk", Times.now()));
        // both have their lease before either counts (every host's cron fires at 03:30); the barrier stands for the round
        // trips of reading every host's held nodes
        java.util.concurrent.CyclicBarrier together = new java.util.concurrent.CyclicBarrier(2);
        java.util.concurrent.atomic.AtomicInteger looks = new java.util.concurrent.atomic.AtomicInteger();
        WindowSlot.OtherCauses others = () -> {
            if (looks.incrementAndGet() <= 2) { // the first look of each: together; later looks as they come
                try {
                    together.await(2, TimeUnit.SECONDS);
                } catch (Exception e) {
                    // the other did not come
                }
            }
            return down;
        };
        java.util.function.Function<String, WindowSlot> slot = host -> new WindowSlot(store, limit, new SlotRecord(limit.key(), 2, host, "store",
                "gc", "w-" + host, SlotState.WAITING, Times.now(), Times.now(), Times.now().plusSeconds(10), new ProcessRef(1, "test")),
                Duration.ofMinutes(5), others);
        WindowSlot a = slot.apply("h1"), b = slot.apply("h2");
        CompletableFuture<Boolean> ga = acquireAsync(a, 3), gb = acquireAsync(b, 3);
        boolean ra = ga.get(20, TimeUnit.SECONDS), rb = gb.get(20, TimeUnit.SECONDS);
        assertThat(ra && rb).as("h1 %s, h2 %s: at most one beside h3 down (limit 2)", ra, rb).isFalse();
        assertThat(ra || rb).as("one of them runs").isTrue();
        a.close();
        b.close();
    }

    @Test
    void aWindowNotHeldByItsStartByGivesUpNamingWhoHoldsTheSlotAndLeavesNothing() throws Exception {
        MeshStore store = new MeshStore(zk.client(), zk.paths());
        String slotPath = zk.paths().windowSlots("store", "gc");
        WindowSlot first = slot(store, "h1", "w-1", Duration.ofMinutes(5), Times.now().plusSeconds(30));
        assertThat(first.acquire(Times.now().plusSeconds(10))).isTrue();
        WindowSlot late = slot(store, "h2", "w-2", Duration.ofMinutes(5), Times.now().plusSeconds(1));
        long t0 = System.nanoTime();
        assertThat(late.acquire(Times.now().plusSeconds(1))).isFalse();
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(5));
        assertThat(late.ahead()).contains("store/gc on h1");
        assertThat(late.state()).isEqualTo(WindowSlot.State.CLOSED);
        assertThat(children(ZkPaths.slotQueue(slotPath))).isEmpty();
        first.close();
    }

    @Test
    void aWindowWhoseSessionWentStillCountsUntilItGivesItsClaimBack() throws Exception {
        CuratorFramework lost = client(4_000);
        CuratorFramework other = client(15_000);
        try {
            String slotPath = zk.paths().windowSlots("store", "gc");
            WindowSlot first = slot(new MeshStore(lost, zk.paths()), "h1", "w-1", Duration.ofMinutes(5), Times.now().plusSeconds(30));
            assertThat(first.acquire(Times.now().plusSeconds(10))).isTrue();
            lost.getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();
            // its lease was ephemeral: gone with the session; a lease alone would let the next window run now
            await().atMost(Duration.ofSeconds(20)).until(() -> children(ZkPaths.slotLeases(slotPath)).isEmpty());
            WindowSlot second = slot(new MeshStore(other, zk.paths()), "h2", "w-2", Duration.ofMinutes(5), Times.now().plusSeconds(30));
            assertThat(second.acquire(Times.now().plusSeconds(3))).as("a second window while the first's containers may still be stopped").isFalse();
            assertThat(second.ahead()).contains("store/gc on h1", "session went");
            // the first window's containers run again: it gives the claim back once its client has a new session
            await().atMost(Duration.ofSeconds(20)).until(() -> answers(lost));
            first.close();
            await().atMost(Duration.ofSeconds(10)).until(() -> children(ZkPaths.slotClaims(slotPath)).isEmpty());
            WindowSlot third = slot(new MeshStore(other, zk.paths()), "h3", "w-3", Duration.ofMinutes(5), Times.now().plusSeconds(30));
            assertThat(third.acquire(Times.now().plusSeconds(5))).isTrue();
            third.close();
        } finally {
            lost.close();
            other.close();
        }
    }

    @Test
    void aClaimNeverGivenBackStopsCountingAtItsUntil() throws Exception {
        CuratorFramework lost = client(4_000);
        try {
            String slotPath = zk.paths().windowSlots("store", "gc");
            WindowSlot first = slot(new MeshStore(lost, zk.paths()), "h1", "w-1", Duration.ofSeconds(3), Times.now().plusSeconds(30));
            assertThat(first.acquire(Times.now().plusSeconds(10))).isTrue();
            lost.close(); // the process is gone: its lease with its session, its claim left behind
            await().atMost(Duration.ofSeconds(20)).until(() -> children(ZkPaths.slotLeases(slotPath)).isEmpty());
            assertThat(children(ZkPaths.slotClaims(slotPath))).hasSize(1);
            WindowSlot second = slot(new MeshStore(zk.client(), zk.paths()), "h2", "w-2", Duration.ofMinutes(5), Times.now().plusSeconds(30));
            long t0 = System.nanoTime();
            assertThat(second.acquire(Times.now().plusSeconds(15))).isTrue();
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("held once the claim's until passed, not before").isGreaterThan(Duration.ofMillis(500));
            assertThat(records(ZkPaths.slotClaims(slotPath))).extracting(SlotRecord::window).containsExactly("w-2");
            second.close();
        } finally {
            lost.close();
        }
    }

    @Test
    void aWaitingWindowIsCancelledAtOnceAndLeavesNothing() throws Exception {
        MeshStore store = new MeshStore(zk.client(), zk.paths());
        String slotPath = zk.paths().windowSlots("store", "gc");
        WindowSlot first = slot(store, "h1", "w-1", Duration.ofMinutes(5), Times.now().plusSeconds(30));
        assertThat(first.acquire(Times.now().plusSeconds(10))).isTrue();
        WindowSlot second = slot(store, "h2", "w-2", Duration.ofMinutes(5), Times.now().plusSeconds(60));
        CompletableFuture<Boolean> got = acquireAsync(second, 60);
        await().atMost(Duration.ofSeconds(5)).until(() -> children(ZkPaths.slotQueue(slotPath)).size() == 1);
        second.cancel();
        assertThat(got.get(5, TimeUnit.SECONDS)).isFalse();
        await().atMost(Duration.ofSeconds(5)).until(() -> children(ZkPaths.slotQueue(slotPath)).isEmpty());
        first.close();
    }

    /** @return {@link WindowSlot#acquire} on another thread, with a start-by that many seconds from now */
    private static CompletableFuture<Boolean> acquireAsync(WindowSlot slot, int seconds) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return slot.acquire(Times.now().plusSeconds(seconds));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
    }

    /**
     * Whether {@code client} answers a read now. After an expiry Curator opens the new session lazily, on the next
     * operation, so waiting on {@code isConnected()} alone can wait for ever.
     */
    private static boolean answers(CuratorFramework client) {
        try {
            client.checkExists().forPath("/");
            return true;
        } catch (Exception notYet) {
            return false;
        }
    }

    private static List<String> children(String path) throws Exception {
        if (zk.client().checkExists().forPath(path) == null) return List.of();
        return zk.client().getChildren().forPath(path).stream().sorted().toList();
    }

    private static List<SlotRecord> records(String path) throws Exception {
        return children(path).stream().map(c -> {
            try {
                return Json.read(zk.client().getData().forPath(ZKPaths.makePath(path, c)), SlotRecord.class);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }).toList();
    }
}
