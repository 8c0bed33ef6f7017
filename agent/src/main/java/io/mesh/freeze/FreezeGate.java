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
 * ZooKeeper's clock at its earliest, decision 27), when {@link FreezeWakes} asks for the apply again.
 */
public final class FreezeGate {
    private static final Logger log = LoggerFactory.getLogger(FreezeGate.class);
    private final MeshStore store;
    private final Clock clock;

    /**
     * @param store ZooKeeper access
     * @param clock decides whether {@code until} has passed
     */
    public FreezeGate(MeshStore store, Clock clock) {
        this.store = store;
        this.clock = clock;
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
        return decide(record(store.paths().freeze(module), results.get(0)), record(store.paths().freezeAll(), results.get(1)), clock.instant());
    }

    /**
     * The rule, without ZooKeeper: a freeze holds until its {@code until}; of two in force, the one that ends later is
     * named (it is the one that keeps the module frozen).
     *
     * @param module the module's own freeze, or {@code null}
     * @param all    the freeze of every module, or {@code null}
     * @param now    this host's clock
     * @return the freeze in force, or empty
     */
    public static Optional<FreezeRecord> decide(FreezeRecord module, FreezeRecord all, Instant now) {
        FreezeRecord m = module != null && module.activeAt(now) ? module : null;
        FreezeRecord a = all != null && all.activeAt(now) ? all : null;
        if (m == null || a == null) return Optional.ofNullable(m != null ? m : a);
        if (m.until() == null) return Optional.of(m);
        if (a.until() == null) return Optional.of(a);
        return Optional.of(a.until().isAfter(m.until()) ? a : m);
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
