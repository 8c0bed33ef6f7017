package io.mesh.window;

import io.mesh.curator.ZkClock;
import io.mesh.manifest.ModuleSpec;
import io.mesh.manifest.ScheduleSpec;
import io.mesh.wire.GroupDowntime;
import io.mesh.wire.Json;
import io.mesh.wire.SlotRecord;
import io.mesh.wire.SlotState;
import io.mesh.wire.Times;
import io.mesh.wire.ZkPaths;
import io.mesh.zk.MeshStore;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A window's fleet-wide slot (SPEC.md, "Fleet-wide windows"; docs/decisions/0016-window-slots.md): one lease of the
 * Curator {@code InterProcessSemaphoreV2} at {@code /mesh/slots/<key>}, taken before the module lock and the held nodes
 * and given back once the window's containers are ready again. Three kinds of node, each a {@link SlotRecord}:
 * <ul>
 *   <li>{@code queue/q-<seq>} (ephemeral sequential): the window waits; the V2 recipe's own waiters carry no data, so
 *       this is what shows who waits, in order;</li>
 *   <li>{@code leases/...} (the recipe's, ephemeral): the window runs;</li>
 *   <li>{@code claims/<host>--<module>--<window>} (persistent): the window runs, and stays counted if its session goes
 *       while its containers are still stopped, until it gives the claim back or the claim's {@code until} passes. A
 *       lease alone would vanish with the session and let a second window past the limit.</li>
 * </ul>
 * States move LATENT → WAITING → HELD → CLOSED (or WAITING → CLOSED: skipped or cancelled) by compare-and-set.
 */
public final class WindowSlot implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(WindowSlot.class);
    /** How long a window with a lease waits before looking again at claims of windows whose session went. */
    static final Duration ORPHAN_RECHECK = Duration.ofSeconds(1);

    /** Where a window stands with its slot. */
    public enum State { LATENT, WAITING, HELD, CLOSED }

    /**
     * The hosts of the slot's group down for a cause other than a window (decision 37, the one disruption budget):
     * asked each time the window has a lease, as the claims are.
     */
    @FunctionalInterface
    public interface OtherCauses {
        /** No cause but windows: a schedule's own slot, or a test's. */
        OtherCauses NONE = () -> List.of();

        /**
         * @return the causes now, one per host ({@link GroupDowntime#causes})
         * @throws Exception from ZooKeeper
         */
        List<GroupDowntime.Cause> now() throws Exception;
    }

    /**
     * The slot a schedule's windows take.
     *
     * @param key   the slot's name under {@code /mesh/slots}, such as {@code group-registries}
     * @param path  its ZooKeeper path
     * @param limit how many windows may hold it at once
     */
    public record Limit(String key, String path, int limit) {}

    /**
     * The slot of a schedule, by SPEC's rule: a schedule naming a group takes the group's slot, whose limit is the
     * smallest {@code max-concurrent} among the schedules naming it in every module's desired state (default 1);
     * else a schedule with {@code max-concurrent} takes its own slot; else none.
     *
     * @param paths    the layout
     * @param module   the window's module
     * @param schedule the window's schedule name
     * @param s        its schedule
     * @param all      every module's desired spec (the window's own among them or not: {@code s} counts either way)
     * @return the slot, or empty when the schedule has no fleet-wide limit
     */
    public static Optional<Limit> limit(ZkPaths paths, String module, String schedule, ScheduleSpec s, Collection<ModuleSpec> all) {
        if (s.group() != null) {
            // every module's schedules, the window's own module's among them (two schedules of one module may name it)
            int limit = GroupDowntime.limitOf(s.group(), all, s.maxConcurrent());
            String path = paths.groupSlots(s.group());
            return Optional.of(new Limit(ZKPaths.getNodeFromPath(path), path, limit));
        }
        if (s.maxConcurrent() == null) return Optional.empty();
        String path = paths.windowSlots(module, schedule);
        return Optional.of(new Limit(ZKPaths.getNodeFromPath(path), path, s.maxConcurrent()));
    }

    private final CuratorFramework client;
    private final Limit limit;
    private final SlotRecord waiting;
    private final Duration claimFor;
    private final OtherCauses others;
    private final AtomicReference<State> state = new AtomicReference<>(State.LATENT);
    private volatile Thread waiter;
    private volatile boolean cancelled;
    private String queueNode;
    private Lease lease;
    private String claimNode;
    /** What the last look found ahead of this window: the skip's why. */
    private volatile String ahead = "";

    /**
     * @param store    ZooKeeper access
     * @param limit    the slot
     * @param waiting  the window's record, state {@link SlotState#WAITING}
     * @param claimFor how long a claim counts if never given back: the window's journal deadline and readiness wait
     */
    public WindowSlot(MeshStore store, Limit limit, SlotRecord waiting, Duration claimFor) {
        this(store, limit, waiting, claimFor, OtherCauses.NONE);
    }

    /**
     * @param others the group's hosts down for another cause, which take places of its limit too
     */
    public WindowSlot(MeshStore store, Limit limit, SlotRecord waiting, Duration claimFor, OtherCauses others) {
        this.client = store.client();
        this.limit = limit;
        this.waiting = waiting;
        this.claimFor = claimFor;
        this.others = others;
    }

    /**
     * Gives back the claim a window left (its process died holding the slot), once its containers run again: called by
     * {@link WindowRecovery}. Best effort: a claim not found counts no longer than its {@code until} anyway.
     *
     * @param store  ZooKeeper access
     * @param host   the window's host
     * @param module its module
     * @param window its id
     */
    public static void forget(MeshStore store, String host, String module, String window) {
        String name = host + "--" + module + "--" + window;
        try {
            for (String slot : store.client().getChildren().forPath(store.paths().slots())) {
                String claim = ZKPaths.makePath(ZkPaths.slotClaims(ZKPaths.makePath(store.paths().slots(), slot)), name);
                try {
                    store.client().delete().forPath(claim);
                    log.info("slot {}: the claim of window {} on {} ({}) given back after its recovery", slot, window, host, module);
                } catch (KeeperException.NoNodeException e) {
                    // not of this slot
                }
            }
        } catch (KeeperException.NoNodeException e) {
            // no slots at all
        } catch (Exception e) {
            log.warn("window {}: its slot's claim was not looked for ({}); it counts until its until", window, e.toString());
        }
    }

    /** @return where this window stands */
    public State state() { return state.get(); }

    /** @return the slot */
    public Limit limit() { return limit; }

    /**
     * Waits in the slot's queue for a lease until {@code deadline}; with one, counts the claims of running windows
     * whose lease went with their session, and waits on while the limit is reached with them.
     *
     * @param deadline the window's start-by: not held by then, it gives up
     * @return true when held; false when the deadline passed or {@link #cancel} was called (nothing held then)
     * @throws Exception from ZooKeeper; nothing is held then
     */
    public boolean acquire(Instant deadline) throws Exception {
        if (!state.compareAndSet(State.LATENT, State.WAITING)) throw new IllegalStateException("slot " + limit.key() + " is " + state.get());
        waiter = Thread.currentThread();
        boolean held = false;
        try {
            queueNode = client.create().creatingParentContainersIfNeeded().withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                    .forPath(ZKPaths.makePath(ZkPaths.slotQueue(limit.path()), "q-"), Json.bytes(waiting));
            InterProcessSemaphoreV2 semaphore = new InterProcessSemaphoreV2(client, limit.path(), limit.limit());
            semaphore.setNodeData(Json.bytes(waiting));
            while (state.get() == State.WAITING) {
                long left = Duration.between(Times.now(), deadline).toMillis();
                if (left <= 0) return false;
                Lease l = semaphore.acquire(left, TimeUnit.MILLISECONDS);
                if (l == null) return false;
                SlotRecord running = waiting.running(ZkClock.now(), ZkClock.now().plus(claimFor)); // read by every host: ZooKeeper's clock
                List<SlotRecord> orphans, holders;
                List<GroupDowntime.Cause> down;
                try {
                    orphans = orphans(l);
                    holders = otherHolders(l);
                    down = othersDown(holders, orphans);
                } catch (Exception e) {
                    // The lease is this look's alone until the window holds it: given back, or it would keep a place
                    // of the limit for the rest of the agent's session
                    semaphore.returnLease(l);
                    throw e;
                }
                if ((orphans.isEmpty() && down.isEmpty()) || holders.size() + 1 + orphans.size() + down.size() <= limit.limit()) {
                    lease = l;
                    // Out of the queue first, so that no reader sees it both waiting and running (a test saw three
                    // queued beside a claim); then the lease reads running before the claim exists: a claim always has
                    // a running lease or none.
                    deleteQuietly(queueNode);
                    queueNode = null;
                    setQuietly(ZKPaths.makePath(ZkPaths.slotLeases(limit.path()), l.getNodeName()), running);
                    claimNode = ZKPaths.makePath(ZkPaths.slotClaims(limit.path()), waiting.host() + "--" + waiting.module() + "--" + waiting.window());
                    client.create().orSetData().creatingParentContainersIfNeeded().withMode(CreateMode.PERSISTENT)
                            .forPath(claimNode, Json.bytes(running));
                    held = state.compareAndSet(State.WAITING, State.HELD);
                    return held;
                }
                // A window whose session went still counts until its containers are ready again (its claim), and a host of
                // the group down for another cause counts while it is: wait.
                ahead = "waiting for " + (orphans.isEmpty() ? "" : describe(orphans) + ", whose session went while it ran")
                        + (orphans.isEmpty() || down.isEmpty() ? "" : ", and ")
                        + (down.isEmpty() ? "" : "hosts of the group down for another cause: "
                        + String.join("; ", down.stream().map(GroupDowntime.Cause::describe).toList()));
                semaphore.returnLease(l);
                // Jittered: two windows that gave their leases back together must not take them back together for ever.
                long again = ORPHAN_RECHECK.toMillis() / 2 + java.util.concurrent.ThreadLocalRandom.current().nextLong(ORPHAN_RECHECK.toMillis());
                Thread.sleep(Math.max(1, Math.min(again, Duration.between(Times.now(), deadline).toMillis())));
            }
            return false;
        } catch (InterruptedException e) {
            if (state.get() != State.CLOSED) throw e; // not a cancel: the caller's interrupt
            return false;
        } finally {
            waiter = null;
            if (cancelled) Thread.interrupted(); // the cancel's interrupt is spent here, not on the caller's next wait
            if (!held) {
                ahead = ahead.isEmpty() ? describeHolders() : ahead;
                giveBack();
                state.set(State.CLOSED);
            }
        }
    }

    /** @return who held the slot at the last look, for a window that gave up waiting */
    public String ahead() { return ahead; }

    /** A window still waiting stops waiting ({@link #acquire} returns false); one holding the slot is not affected. */
    public void cancel() {
        if (state.compareAndSet(State.WAITING, State.CLOSED)) {
            cancelled = true;
            Thread t = waiter;
            if (t != null) t.interrupt();
        }
    }

    /** Gives the slot back (the claim, then the lease); once, whatever the state. */
    @Override
    public void close() {
        State was = state.getAndSet(State.CLOSED);
        if (was == State.HELD) giveBack();
    }

    private void giveBack() {
        deleteQuietly(queueNode);
        queueNode = null;
        deleteQuietly(claimNode); // a claim left by a ZooKeeper outage counts until its until, then is ignored
        claimNode = null;
        if (lease != null) {
            try {
                lease.close();
            } catch (Exception e) {
                log.warn("slot {}: could not give the lease back ({}); it goes with this session", limit.key(), e.toString());
            }
            lease = null;
        }
    }

    /**
     * @return the hosts of the group down for another cause that no running window's lease or claim counts already,
     *         this window's own host left out (it is down for this window anyway)
     */
    private List<GroupDowntime.Cause> othersDown(List<SlotRecord> holders, List<SlotRecord> orphans) throws Exception {
        List<GroupDowntime.Cause> all = others.now();
        if (all.isEmpty()) return all;
        java.util.Set<String> counted = new java.util.HashSet<>();
        counted.add(waiting.host());
        for (SlotRecord r : holders) if (r != null) counted.add(r.host());
        for (SlotRecord r : orphans) counted.add(r.host());
        return all.stream().filter(c -> !counted.contains(c.host())).toList();
    }

    /**
     * The other windows that hold a lease now, whatever their lease's data says yet: the recipe lets a window past only
     * while the lease nodes are at most the limit, so the holders are the oldest {@code limit} nodes, and a newer one is
     * the head waiter's. By position, not by data: two windows that took their leases together each count the other
     * before either has marked its lease running (a reviewer saw both run past a group's limit beside a host down).
     *
     * @return their records, {@code null} for one whose data cannot be read (still a holder)
     */
    private List<SlotRecord> otherHolders(Lease mine) throws Exception {
        List<String> all = new ArrayList<>(children(ZkPaths.slotLeases(limit.path())));
        all.sort(java.util.Comparator.comparingLong(WindowSlot::sequence));
        List<SlotRecord> out = new ArrayList<>();
        for (String child : all.subList(0, Math.min(limit.limit(), all.size()))) {
            if (!child.equals(mine.getNodeName())) out.add(read(ZKPaths.makePath(ZkPaths.slotLeases(limit.path()), child), null));
        }
        return out;
    }

    /** @return a lease node's sequence: the digits after its last {@code -} (the recipe's protected sequential name) */
    private static long sequence(String node) {
        try {
            return Long.parseLong(node.substring(node.lastIndexOf('-') + 1));
        } catch (NumberFormatException e) {
            return Long.MAX_VALUE; // not the recipe's: last
        }
    }

    private List<SlotRecord> leaseRecords(Lease mine) throws Exception {
        List<SlotRecord> out = new ArrayList<>();
        for (String child : children(ZkPaths.slotLeases(limit.path()))) {
            if (child.equals(mine.getNodeName())) continue;
            SlotRecord r = read(ZKPaths.makePath(ZkPaths.slotLeases(limit.path()), child), null);
            if (r != null) out.add(r);
        }
        return out;
    }

    /**
     * @return the claims of windows that hold no lease (their session went) and whose {@code until} has not passed;
     *         claims past their {@code until} are deleted on the way
     */
    private List<SlotRecord> orphans(Lease mine) throws Exception {
        List<SlotRecord> running = leaseRecords(mine);
        List<SlotRecord> orphans = new ArrayList<>();
        Instant now = ZkClock.now(); // claims' ends were written by ZooKeeper's clock, by any host
        for (String child : children(ZkPaths.slotClaims(limit.path()))) {
            String path = ZKPaths.makePath(ZkPaths.slotClaims(limit.path()), child);
            Stat stat = new Stat();
            SlotRecord c = read(path, stat);
            if (c == null) continue;
            if (c.sameWindow(waiting)) continue;
            if (c.until() != null && c.until().isBefore(now)) {
                log.warn("slot {}: the claim of window {} on {} ({}) passed its until {} without being given back; not counted",
                        limit.key(), c.window(), c.host(), c.module(), c.until());
                try {
                    client.delete().withVersion(stat.getVersion()).forPath(path);
                } catch (KeeperException.NoNodeException | KeeperException.BadVersionException e) {
                    // given back or renewed meanwhile
                }
                continue;
            }
            if (running.stream().noneMatch(c::sameWindow)) orphans.add(c);
        }
        return orphans;
    }

    private String describeHolders() {
        try {
            List<SlotRecord> held = new ArrayList<>();
            for (String child : children(ZkPaths.slotClaims(limit.path()))) {
                SlotRecord r = read(ZKPaths.makePath(ZkPaths.slotClaims(limit.path()), child), null);
                if (r != null && !r.sameWindow(waiting)) held.add(r);
            }
            return held.isEmpty() ? "" : "held by " + describe(held);
        } catch (Exception e) {
            return "";
        }
    }

    private static String describe(List<SlotRecord> rs) {
        List<String> out = new ArrayList<>();
        for (SlotRecord r : rs) out.add(r.module() + "/" + r.schedule() + " on " + r.host() + " since " + r.since());
        return String.join(", ", out);
    }

    private List<String> children(String path) throws Exception {
        try {
            return client.getChildren().forPath(path);
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
    }

    private SlotRecord read(String path, Stat stat) throws Exception {
        try {
            byte[] data = stat == null ? client.getData().forPath(path) : client.getData().storingStatIn(stat).forPath(path);
            return Json.readOrNull(data, SlotRecord.class);
        } catch (KeeperException.NoNodeException e) {
            return null;
        } catch (RuntimeException e) {
            return null; // not a slot record (a node written by hand): not counted
        }
    }

    private void setQuietly(String path, SlotRecord r) {
        try {
            client.setData().forPath(path, Json.bytes(r));
        } catch (Exception e) {
            log.debug("slot {}: lease data not updated: {}", limit.key(), e.toString());
        }
    }

    private void deleteQuietly(String path) {
        if (path == null) return;
        try {
            client.delete().guaranteed().forPath(path);
        } catch (KeeperException.NoNodeException e) {
            // gone already
        } catch (Exception e) {
            log.warn("slot {}: could not delete {} ({}); Curator keeps trying", limit.key(), path, e.toString());
        }
    }
}
