package io.mesh.coordinator;

import io.mesh.wire.ZkClock;
import com.fasterxml.jackson.annotation.JsonInclude;
import io.mesh.wire.FreezeRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;

/**
 * The coordinator's side of {@code /mesh/freezes} (SPEC.md, "Freezes"; docs/decisions/0014-freezes.md): write a
 * freeze, delete it (a thaw), list them. The agents only read these nodes; a freeze past its {@code until} is left
 * in place (it no longer holds) until a thaw or a new freeze of the same name replaces it.
 *
 * @param client a started Curator client
 * @param paths  the layout
 * @param clock  for {@code since} and whether a freeze still holds
 */
public record FreezeStore(CuratorFramework client, ZkPaths paths, Clock clock) {
    /**
     * One freeze node, as {@code GET /v1/freezes} lists it.
     *
     * @param module the module frozen, or {@code null} for the freeze of every module
     * @param all    true for {@code /mesh/freezes/_all}
     * @param by     who froze it
     * @param reason why
     * @param since  when
     * @param until  when it ends by itself
     * @param active false once {@code until} has passed on the coordinator's clock (the node is still there)
     */
    public record Freeze(@JsonInclude(JsonInclude.Include.NON_NULL) String module, boolean all, String by, String reason,
                         Instant since, Instant until, boolean active) {}

    /** @return the store's clock, to the millisecond: a request's {@code for} counts from it, and it is the freeze's {@code since} */
    public Instant now() { return clock.instant().truncatedTo(ChronoUnit.MILLIS); }

    /**
     * Freezes a module or every module; a freeze of the same name is replaced (a new reason or end).
     *
     * @param request the checked request
     * @param by      who asked
     * @param since   when the request was checked ({@link #now()})
     * @return the freeze as written
     * @throws Exception ZooKeeper errors
     */
    public Freeze freeze(FreezeRequest request, String by, Instant since) throws Exception {
        FreezeRecord r = request.record(by, since);
        String path = paths.freeze(request.target());
        byte[] data = Json.bytes(r);
        ensureParent();
        long before = System.currentTimeMillis();
        org.apache.zookeeper.data.Stat st = new org.apache.zookeeper.data.Stat();
        try {
            client.create().storingStatIn(st).withMode(CreateMode.PERSISTENT).forPath(path, data);
            ZkClock.observeCreate(st, before);
        } catch (KeeperException.NodeExistsException e) {
            ZkClock.observe(client.setData().forPath(path, data).getMtime(), before, System.currentTimeMillis());
        }
        return view(request.target(), r);
    }

    /**
     * @param target a module name, or {@link FreezeRecord#ALL}
     * @return true when its freeze node was there and is gone
     * @throws Exception ZooKeeper errors
     */
    public boolean thaw(String target) throws Exception {
        try {
            client.delete().forPath(paths.freeze(target));
            return true;
        } catch (KeeperException.NoNodeException e) {
            return false;
        }
    }

    /**
     * @return every freeze node, {@code _all} first, then by module
     * @throws Exception ZooKeeper errors
     */
    public List<Freeze> list() throws Exception {
        List<Freeze> out = new ArrayList<>();
        List<String> names = new ArrayList<>(ZkReads.children(client, paths.freezes()));
        names.sort((a, b) -> a.equals(FreezeRecord.ALL) ? -1 : b.equals(FreezeRecord.ALL) ? 1 : a.compareTo(b));
        for (String n : names) {
            byte[] data;
            try {
                data = client.getData().forPath(paths.freeze(n));
            } catch (KeeperException.NoNodeException e) {
                continue;
            }
            FreezeRecord r = Json.readOrNull(data, FreezeRecord.class);
            out.add(view(n, r == null ? FreezeRecord.unreadable() : r));
        }
        return out;
    }

    private Freeze view(String name, FreezeRecord r) {
        boolean all = FreezeRecord.ALL.equals(name);
        return new Freeze(all ? null : name, all, r.by(), r.reason(), r.since(), r.until(), r.activeAt(clock.instant()));
    }

    /** Creates {root}/freezes with data {@code {}} when missing (as the push's parents are made). */
    private void ensureParent() throws Exception {
        if (client.checkExists().forPath(paths.freezes()) != null) return;
        try {
            client.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT).forPath(paths.freezes(), "{}".getBytes(StandardCharsets.UTF_8));
        } catch (KeeperException.NodeExistsException ignored) {
            // another coordinator made it
        }
    }
}
