package io.mesh.hold;

import io.mesh.curator.HeldRegistry;
import io.mesh.curator.ZkClock;
import io.mesh.section.ModuleSection;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.LedgerEntry;
import io.mesh.wire.LedgerKind;
import io.mesh.wire.Times;
import io.mesh.zk.MeshStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The host's confirmation of operator holds (SPEC.md "Operator holds"; docs/decisions/0025-hold-confirmation.md): a
 * hold the coordinator recorded is in force from the moment its host's agent writes {@code hold.confirmed}, and that
 * write is made only here, inside the module's critical section with the lock intact and the fence held. Every Docker
 * call of every mesh process on the module's containers is made inside such a section, so none that began before the
 * confirmation is still under way, and every one after it reads the hold under its lock first.
 */
public final class HoldConfirmation {
    private static final Logger log = LoggerFactory.getLogger(HoldConfirmation.class);

    private HoldConfirmation() {}

    /**
     * Confirms every operator hold of {@code module} in {@code held} not yet confirmed (and not expired).
     *
     * @param store   ZooKeeper access
     * @param section the caller's section of {@code module}, fenced, before its first Docker call on what it read
     * @param host    this host
     * @param held    the host's held nodes as read under the lock
     * @return {@code held} with the confirmed holds' records; a hold that changed meanwhile is kept as read (it still
     *         holds: released or replaced, it is read again by the next section)
     * @throws io.mesh.zk.SessionGuard.SessionLostException when the lock is not intact: nothing is confirmed then
     * @throws Exception from ZooKeeper
     */
    public static Map<String, HeldRecord> confirm(MeshStore store, ModuleSection section, String host, Map<String, HeldRecord> held)
            throws Exception {
        Map<String, HeldRecord> out = null;
        for (HeldRecord h : held.values()) {
            if (!pending(h, section.module())) continue;
            section.checkLock(); // a section whose lock lapsed confirms nothing: another process may hold the lock now
            HeldRecord confirmed = HeldRegistry.confirm(store.client(), store.paths(), h, Times.now());
            if (confirmed == null) continue;
            // In force from now: the ledger's held interval opens with the confirmation (decision 28).
            section.ledger().write(LedgerEntry.held(LedgerKind.HELD_OPEN, section.ledger().now(), h.module(), h.container(), h.containerId(),
                    LedgerEntry.OPERATOR, null, null, h.hold().by(), h.hold().reason(), h.hold().until()));
            log.info("operator hold host={} container={} confirmed (by {}: {}, until {}{}): in force from now", host, h.container(),
                    h.hold().by(), h.hold().reason(), h.hold().until() == null ? "released" : h.hold().until(),
                    h.hold().stops() ? "; its agent stops it" : "");
            if (out == null) out = new LinkedHashMap<>(held);
            out.put(h.container(), confirmed);
        }
        return out == null ? held : out;
    }

    /**
     * @param h      a held node
     * @param module module name
     * @return true for an operator hold of {@code module} that is recorded, not confirmed and not expired
     */
    public static boolean pending(HeldRecord h, String module) {
        return h.operatorHold() && module.equals(h.module()) && !h.hold().isConfirmed() && !h.expiredAt(ZkClock.earliest());
    }
}
