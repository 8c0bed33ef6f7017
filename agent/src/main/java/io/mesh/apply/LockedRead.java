package io.mesh.apply;

import io.mesh.curator.HeldRegistry;
import io.mesh.curator.MultiRead;
import io.mesh.freeze.FreezeGate;
import io.mesh.wire.FreezeRecord;
import io.mesh.wire.DrainRecord;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.WindowRecord;
import io.mesh.zk.MeshStore;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What an apply reads from ZooKeeper holding the module lock, before the fence, in one round trip (ZooKeeper's
 * {@code multi} of reads): the host's held nodes (a window adds its own holding its module's lock, an operator's hold
 * needs none), the module's freezes ({@link FreezeGate}, decision 14) and the module's window node on this host, for
 * the report. Never a cache: a release or a thaw just answered must be seen by the apply it asks for. A held node's
 * data is a second round trip, only when the host has held nodes.
 *
 * <p>docs/benchmark-notes.md, B5: these were three round trips in a row per apply (held children, freezes, window node), and a
 * read per held node; the floor an apply is measured against has none of them.
 *
 * <p>The freezes are judged when asked ({@link #frozen}), so that an apply with no desired node (a deleted module's)
 * is not failed by a freeze node it never looks at.
 */
public final class LockedRead {
    private final Map<String, HeldRecord> held;
    private final WindowRecord window;
    private final FreezeGate freezes;
    private final String module;
    private final List<OpResult> freezeReads;
    private final DrainRecord drain;
    private final int drainVersion;

    private LockedRead(Map<String, HeldRecord> held, WindowRecord window, FreezeGate freezes, String module, List<OpResult> freezeReads,
                       DrainRecord drain, int drainVersion) {
        this.drain = drain;
        this.drainVersion = drainVersion;
        this.held = held;
        this.window = window;
        this.freezes = freezes;
        this.module = module;
        this.freezeReads = freezeReads;
    }

    /**
     * @param store   ZooKeeper access
     * @param freezes the freeze rule
     * @param host    this host
     * @param module  module name
     * @param now     the time to judge an operator hold's expiry at
     * @return what was read
     * @throws Exception from ZooKeeper, as Curator's retry loop gives it up
     */
    public static LockedRead read(MeshStore store, FreezeGate freezes, String host, String module, Instant now) throws Exception {
        List<Op> reads = new ArrayList<>();
        reads.add(Op.getChildren(store.paths().held(host)));
        reads.add(Op.getData(store.paths().window(host, module)));
        reads.addAll(freezes.reads(module));
        reads.add(Op.getData(store.paths().drain(host)));
        List<OpResult> results = MultiRead.of(store.client(), reads);
        List<String> names = MultiRead.missing(results.get(0), reads.get(0).getPath()) ? List.of()
                : ((OpResult.GetChildrenResult) results.get(0)).getChildren();
        Map<String, HeldRecord> held = names.isEmpty() ? new LinkedHashMap<>() : HeldRegistry.read(store.client(), store.paths(), host, names);
        WindowRecord window = MultiRead.missing(results.get(1), reads.get(1).getPath()) ? null
                : Json.readOrNull(((OpResult.GetDataResult) results.get(1)).getData(), WindowRecord.class);
        DrainRecord drain = null;
        int drainVersion = -1;
        if (!MultiRead.missing(results.get(4), reads.get(4).getPath())) {
            OpResult.GetDataResult d = (OpResult.GetDataResult) results.get(4);
            drainVersion = d.getStat().getVersion();
            drain = Json.readOrNull(d.getData(), DrainRecord.class);
            // A drain node that cannot be read drains: a reader that cannot tell holds (decision 37).
            if (drain == null) drain = DrainRecord.unreadable();
            if (!drain.inForceAt(now)) drain = null;
        }
        return new LockedRead(HeldRegistry.inForce(held, now), window, freezes, module, results.subList(2, 4), drain, drainVersion);
    }

    /** @return the version of the drain node read ({@link #drain}), which a hold placed from it checks; -1 when none */
    public int drainVersion() { return drainVersion; }

    /** @return the host's drain in force as read under the lock, or {@code null} (decision 37) */
    public DrainRecord drain() { return drain; }

    /** @return the held nodes in force on this host, by Docker name ({@link HeldRegistry#inForce}) */
    public Map<String, HeldRecord> held() { return held; }

    /** @return the module's window node on this host as read under the lock, or {@code null} */
    public WindowRecord window() { return window; }

    /**
     * @return the freeze in force on the module, or empty ({@link FreezeGate#frozen(String, List)})
     * @throws KeeperException a freeze node's read failed other than by its absence
     */
    public Optional<FreezeRecord> frozen() throws KeeperException {
        return freezes.frozen(module, freezeReads);
    }
}
