package io.mesh.freeze;

import io.mesh.curator.MultiRead;
import io.mesh.wire.FreezeRecord;
import io.mesh.wire.Json;
import io.mesh.zk.MeshStore;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Whether a module is frozen (SPEC.md, "Freezes"; docs/decisions/0014-freezes.md): asked by the apply holding the
 * module lock, at the point where the rollout gate is asked. A frozen module's apply makes no Docker call and reports
 * {@code deferred} with the freeze; the newest revision lands when the freeze ends (thawed, or past {@code until} by
 * ZooKeeper's clock at its earliest, decision 27), when {@link FreezeWakes} asks for the apply again. A recurring
 * freeze's span starts when ZooKeeper's clock at its latest reaches it ({@link FreezeRecord#inForce}).
 */
public final class FreezeGate {
    private static final Logger log = LoggerFactory.getLogger(FreezeGate.class);
    private final MeshStore store;
    private final Clock earliest;
    private final Clock latest;

    /**
     * @param store    ZooKeeper access
     * @param earliest decides whether an end has passed: ZooKeeper's clock at its earliest
     * @param latest   decides whether a recurring freeze's start has come: ZooKeeper's clock at its latest
     */
    public FreezeGate(MeshStore store, Clock earliest, Clock latest) {
        this.store = store;
        this.earliest = earliest;
        this.latest = latest;
    }

    /**
     * @param store ZooKeeper access
     * @param clock decides both starts and ends (a test's clock)
     */
    public FreezeGate(MeshStore store, Clock clock) {
        this(store, clock, clock);
    }

    /**
     * Reads {@code /mesh/freezes/<module>} and {@code /mesh/freezes/_all} from ZooKeeper (not a cache: a thaw just
     * answered must be seen by the apply it triggers), both in one round trip: ZooKeeper's {@code multi} of reads, in
     * which a node that is not there answers an error result, not an exception (docs/benchmark-notes.md, B5: two reads and two
     * {@code NoNodeException}s per apply before). Reads in a {@code multi} need ZooKeeper 3.6 or later on the servers.
     *
     * @param module module name
     * @return the freeze in force on the module, or empty
     * @throws Exception from ZooKeeper, as Curator's retry loop gives it up
     */
    public Optional<FreezeRecord> frozen(String module) throws Exception {
        return frozen(module, MultiRead.of(store.client(), reads(module)));
    }

    /**
     * @param module module name
     * @return the reads {@link #frozen(String)} makes, for a caller that puts them in a {@code multi} of its own
     *         ({@code LockedRead}): the module's freeze node, then the one of every module
     */
    public List<Op> reads(String module) {
        return List.of(Op.getData(store.paths().freeze(module)), Op.getData(store.paths().freezeAll()));
    }

    /**
     * @param module  module name
     * @param results the results of {@link #reads}, in their order
     * @return the freeze in force on the module, or empty
     * @throws KeeperException a read that failed other than by the node's absence
     */
    public Optional<FreezeRecord> frozen(String module, List<OpResult> results) throws KeeperException {
        return decide(record(store.paths().freeze(module), results.get(0)), record(store.paths().freezeAll(), results.get(1)),
                earliest.instant(), latest.instant());
    }

    /**
     * The rule, without ZooKeeper: a freeze holds while {@link FreezeRecord#inForce} says so; of two in force, the one
     * that ends later is named (it is the one that keeps the module frozen).
     *
     * @param module   the module's own freeze, or {@code null}
     * @param all      the freeze of every module, or {@code null}
     * @param earliest ZooKeeper's clock at its earliest (ends)
     * @param latest   ZooKeeper's clock at its latest (a recurring freeze's starts)
     * @return the freeze in force (a recurring freeze's span in force), or empty
     */
    public static Optional<FreezeRecord> decide(FreezeRecord module, FreezeRecord all, Instant earliest, Instant latest) {
        FreezeRecord m = module == null ? null : module.inForce(earliest, latest).orElse(null);
        FreezeRecord a = all == null ? null : all.inForce(earliest, latest).orElse(null);
        if (m == null || a == null) return Optional.ofNullable(m != null ? m : a);
        if (m.until() == null) return Optional.of(m);
        if (a.until() == null) return Optional.of(a);
        return Optional.of(a.until().isAfter(m.until()) ? a : m);
    }

    /**
     * @param now one reading for starts and ends (tests of the rule)
     * @return {@link #decide(FreezeRecord, FreezeRecord, Instant, Instant)} with {@code now} as both
     */
    public static Optional<FreezeRecord> decide(FreezeRecord module, FreezeRecord all, Instant now) {
        return decide(module, all, now, now);
    }

    /** @return the freeze node's record; {@link FreezeRecord#unreadable()} for data that does not parse; null when none */
    private static FreezeRecord record(String path, OpResult result) throws KeeperException {
        if (MultiRead.missing(result, path)) return null;
        FreezeRecord r = Json.readOrNull(((OpResult.GetDataResult) result).getData(), FreezeRecord.class);
        if (r == null) {
            // Fail safe, as an unreadable held node is: a reader that cannot tell applies nothing.
            log.warn("{} does not hold a freeze record; the module is treated as frozen until it is deleted (mesh thaw)", path);
            return FreezeRecord.unreadable();
        }
        return r;
    }
}
