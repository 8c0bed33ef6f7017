package io.mesh.coordinator;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.curator.LockNodes;
import io.mesh.curator.ZkClock;
import io.mesh.wire.FreezeRecord;
import io.mesh.wire.Json;
import io.mesh.wire.LockHolder;
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
     * @param until  when it ends by itself; for a recurring freeze, when the recurrence ends ({@code null}: at a thaw)
     * @param active whether it is in force now on the coordinator's clock (false once {@code until} has passed, or
     *               between a recurring freeze's spans; the node is still there)
     * @param cron      a recurring freeze's starts, or {@code null}
     * @param timezone  the zone they are read in ({@code null}: UTC)
     * @param lasts     each span's length (JSON {@code for})
     * @param spanUntil when the span in force ends, for a recurring freeze in force
     * @param next      a recurring freeze's next start, or {@code null} (none to come)
     */
    public record Freeze(@JsonInclude(JsonInclude.Include.NON_NULL) String module, boolean all, String by, String reason,
                         Instant since, Instant until, boolean active,
                         @JsonInclude(JsonInclude.Include.NON_NULL) String cron,
                         @JsonInclude(JsonInclude.Include.NON_NULL) String timezone,
                         @JsonInclude(JsonInclude.Include.NON_NULL) @com.fasterxml.jackson.annotation.JsonProperty("for") String lasts,
                         @JsonInclude(JsonInclude.Include.NON_NULL) Instant spanUntil,
                         @JsonInclude(JsonInclude.Include.NON_NULL) Instant next) {
        /** @return true while it is in force or will be again (a recurring freeze between spans): writing it again replaces it */
        public boolean current() { return active || next != null; }

        /** @return when the freeze in force now ends: the span's end for a recurring one, else {@code until} */
        public Instant endsAt() { return spanUntil != null ? spanUntil : until; }

        /** @return a recurring freeze's rule in words, such as {@code every '0 18 * * 5' for 14h}, or "" */
        public String rule() {
            return cron == null ? "" : "every '" + cron + "'" + (timezone == null ? "" : " " + timezone) + " for " + lasts;
        }
    }

    /** @return the store's clock, to the millisecond: a request's {@code for} counts from it, and it is the freeze's {@code since} */
    public Instant now() { return clock.instant().truncatedTo(ChronoUnit.MILLIS); }

    /**
     * A freeze written, as {@code POST /v1/freezes} answers it.
     *
     * @param freeze   the freeze as written
     * @param replaced the active freeze of the same name it replaced (a new reason or end is never silent), or
     *                 {@code null}
     * @param applying the applies that hold a lock of what it freezes now: the changes they have begun still land
     *                 (SPEC.md "Freezes": a freeze stops changes that begin after it; decision 14)
     */
    public record Frozen(Freeze freeze, Freeze replaced, List<Applying> applying) {}

    /**
     * An apply holding a module lock ({@link LockHolder#APPLY}, the lock's first child) when a freeze was written.
     *
     * @param since   when it asked for the lock
     * @param process the holder's short description
     */
    public record Applying(String module, String host, Instant since, String process) {}

    /**
     * Freezes a module or every module, the body checked whole first ({@link FreezeRequest#parse}); a freeze of the same
     * name is replaced (a new reason or end). {@code for} counts from {@link #now()}, which is also the freeze's
     * {@code since}.
     *
     * @param body the request's body as JSON, or {@code null} when it is not a JSON object
     * @param by   who asked, as a push's {@code by}
     * @return the freeze as written, the one it replaced, and the applies under way
     * @throws Refusal   400 naming the field and the fix; 404 for a module never pushed (a typo would leave the module
     *                   meant unfrozen); nothing written
     * @throws Exception ZooKeeper errors
     */
    public Frozen freeze(JsonNode body, String by) throws Exception {
        Instant now = now();
        FreezeRequest request = FreezeRequest.parse(body, now);
        String target = request.target();
        boolean all = target.equals(FreezeRecord.ALL);
        if (!all && client.checkExists().forPath(paths.desired(target)) == null) {
            throw Refusal.notFound("module", "module: no module '" + target + "' was pushed (mesh status lists the modules): "
                    + "freeze a module by its name, or every module with all");
        }
        Freeze replaced = list().stream().filter(f -> f.current() && (all ? f.all() : target.equals(f.module()))).findFirst().orElse(null);
        Freeze written = write(request, by, now);
        return new Frozen(written, replaced, applying(target));
    }

    /** Writes the freeze node of a checked request, or replaces it. */
    private Freeze write(FreezeRequest request, String by, Instant since) throws Exception {
        FreezeRecord r = request.record(by, since);
        String path = paths.freeze(request.target());
        byte[] data = Json.bytes(r);
        ensureParent();
        long before = System.currentTimeMillis();
        org.apache.zookeeper.data.Stat st = new org.apache.zookeeper.data.Stat();
        // Created, or replaced; a thaw between the two tries the create again (a thaw racing a freeze is no 500)
        for (int tries = 0; ; tries++) {
            try {
                client.create().storingStatIn(st).withMode(CreateMode.PERSISTENT).forPath(path, data);
                ZkClock.observeCreate(st, before);
                break;
            } catch (KeeperException.NodeExistsException e) {
                try {
                    ZkClock.observe(client.setData().forPath(path, data).getMtime(), before, System.currentTimeMillis());
                    break;
                } catch (KeeperException.NoNodeException thawed) {
                    if (tries >= 3) throw Refusal.conflict("module", "thawed and frozen by other requests meanwhile, again and again: freeze again");
                }
            }
        }
        return view(request.target(), r);
    }

    /**
     * @param target a module name, or {@link FreezeRecord#ALL}
     * @return the freeze its node held, now deleted ({@link FreezeRecord#unreadable} when its data could not be read), or
     *         {@code null} when there was none
     * @throws Exception ZooKeeper errors
     */
    public FreezeRecord thaw(String target) throws Exception {
        org.apache.zookeeper.data.Stat st = new org.apache.zookeeper.data.Stat();
        for (int tries = 0; tries < 3; tries++) {
            try {
                byte[] data = client.getData().storingStatIn(st).forPath(paths.freeze(target));
                client.delete().withVersion(st.getVersion()).forPath(paths.freeze(target));
                FreezeRecord f = Json.readOrNull(data, FreezeRecord.class);
                return f == null ? FreezeRecord.unreadable() : f;
            } catch (KeeperException.NoNodeException e) {
                return null;
            } catch (KeeperException.BadVersionException e) {
                // frozen again meanwhile: that freeze is the one thawed
            }
        }
        throw Refusal.conflict("module", "frozen again by other requests meanwhile, again and again: thaw again");
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

    /**
     * @param target a module name, or {@link FreezeRecord#ALL} for every module
     * @return the module locks an apply holds now, of that module (of any, for {@code _all}), by module then host
     */
    private List<Applying> applying(String target) throws Exception {
        List<Applying> out = new ArrayList<>();
        List<String> modules = target.equals(FreezeRecord.ALL) ? ZkReads.children(client, paths.locks()) : List.of(target);
        for (String module : modules) {
            for (String host : ZkReads.children(client, paths.locks() + "/" + module)) {
                List<LockHolder> holders = LockNodes.holders(client, paths, module, host);
                LockHolder holder = holders.isEmpty() ? null : holders.get(0);
                if (holder != null && LockHolder.APPLY.equals(holder.purpose())) {
                    out.add(new Applying(module, host, holder.since(), holder.process()));
                }
            }
        }
        return out;
    }

    private Freeze view(String name, FreezeRecord r) {
        boolean all = FreezeRecord.ALL.equals(name);
        Instant now = clock.instant();
        FreezeRecord span = r.inForce(now, now).orElse(null);
        return new Freeze(all ? null : name, all, r.by(), r.reason(), r.since(), r.until(), span != null, r.cron(), r.timezone(), r.lasts(),
                r.recurring() && span != null ? span.until() : null, r.nextStart(now).orElse(null));
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
