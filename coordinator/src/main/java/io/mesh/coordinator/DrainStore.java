package io.mesh.coordinator;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.curator.HeldRegistry;
import io.mesh.curator.PersistentParents;
import io.mesh.curator.ZkClock;
import io.mesh.manifest.Printable;
import io.mesh.wire.DrainRecord;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The coordinator's side of drains ({@code mesh drain HOST}, {@code mesh undrain HOST}; SPEC.md "The rest of the
 * operator's stack"; docs/decisions/0037-recurring-freezes-drains-and-one-budget.md): writes
 * {@code /mesh/drains/<host>}, whose host's agent then holds every container of its modules
 * ({@code io.mesh.hold.HostDrains}); deletes it with the holds it placed; lists them. Nothing is written when a check
 * fails.
 *
 * @param client a started Curator client
 * @param paths  the layout
 */
public record DrainStore(CuratorFramework client, ZkPaths paths) {
    private static final Set<String> FIELDS = new TreeSet<>(List.of("host", "reason", "for", "stop"));
    private static final String EXAMPLE = "{\"host\":\"host-a\",\"reason\":\"kernel upgrade OPS-7\",\"for\":\"2h\",\"stop\":true}";

    /**
     * One drain, as {@code GET /v1/drains} lists it.
     *
     * @param host   the host drained
     * @param drain  the node's data
     * @param ended  true once its {@code until} has passed (its agent has released its holds; the node stays until
     *               {@code mesh undrain})
     * @param agentDown as written: true when the host has no agent node, so no hold is placed until it is back
     */
    public record Drain(String host, DrainRecord drain, boolean ended, @com.fasterxml.jackson.annotation.JsonInclude(
            com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL) Boolean agentDown) {
        /** A drain as listed. */
        public Drain(String host, DrainRecord drain, boolean ended) { this(host, drain, ended, null); }
    }

    /**
     * Drains a host from a {@code POST /v1/drains} body {@code {"host","reason","for"?,"stop"?}}. A host drained already
     * is refused (409): its holds were placed from that drain, and a new one would change none of them; a drain past its
     * {@code until} is replaced.
     *
     * @param body the request's JSON object, or {@code null}
     * @param by   who asks, as a push's {@code by}
     * @return the drain as written
     * @throws Refusal   naming the field and the fix (400), an unknown host (404), a host drained already (409); nothing
     *                   written
     * @throws Exception ZooKeeper errors
     */
    public Drain drain(JsonNode body, String by) throws Exception {
        if (body == null || !body.isObject()) throw Refusal.badRequest("body", "the body must be a JSON object such as " + EXAMPLE);
        for (Iterator<String> names = body.fieldNames(); names.hasNext(); ) {
            String f = names.next();
            if (!FIELDS.contains(f)) throw Refusal.badRequest(f, "unknown field '" + Printable.cut(f) + "': a drain takes " + FIELDS + ", such as " + EXAMPLE);
        }
        JsonNode h = body.get("host"), r = body.get("reason"), f = body.get("for"), s = body.get("stop");
        if (h == null || !h.isTextual() || h.asText().isBlank()) throw Refusal.badRequest("host", "host: missing: name the host to drain, such as " + EXAMPLE);
        String host = h.asText().strip();
        try {
            ZkPaths.checkHost(host);
        } catch (IllegalArgumentException e) {
            throw Refusal.badRequest("host", "host: " + e.getMessage());
        }
        String reason = OperatorWords.reason(body, "kernel upgrade OPS-7", null);
        Duration lasts = OperatorWords.lasts(f, "drain", "drain until mesh undrain");
        if (s != null && !s.isNull() && !s.isBoolean()) throw Refusal.badRequest("stop", "stop: must be true or false");
        boolean stop = s != null && s.asBoolean(false);
        if (!known(client, paths, host)) {
            throw Refusal.notFound("host", "host: no host '" + host + "' is known (no agent node, no report, no manifest names it): "
                    + "check the name (mesh status lists the hosts)");
        }
        // Read with its version: two drains of a host at once are one drain and one refusal, never the last one winning
        org.apache.zookeeper.data.Stat stat = new org.apache.zookeeper.data.Stat();
        DrainRecord was = null;
        try {
            byte[] there = client.getData().storingStatIn(stat).forPath(paths.drain(host));
            was = Json.readOrNull(there, DrainRecord.class);
            if (was == null) was = DrainRecord.unreadable();
        } catch (KeeperException.NoNodeException e) {
            stat = null;
        }
        if (was != null && was.inForceAt(ZkClock.now())) {
            // Its holds were placed from that drain (their stop, until and reason): a new one would change none of them.
            throw Refusal.conflict("host", "host " + host + " is drained already, by " + was.by() + ": " + was.reason()
                    + (was.stops() ? " (--stop)" : "") + (was.until() == null ? "" : ", until " + was.until())
                    + ": mesh undrain " + host + " first, then drain it again");
        }
        Instant since = ZkClock.now(); // by ZooKeeper's clock, as every reader judges its end
        DrainRecord d = new DrainRecord(by, reason, since, lasts == null ? null : since.plus(lasts), stop ? Boolean.TRUE : null);
        PersistentParents.ensure(client, paths.drains());
        byte[] data = Json.bytes(d);
        try {
            if (stat == null) client.create().withMode(CreateMode.PERSISTENT).forPath(paths.drain(host), data);
            else client.setData().withVersion(stat.getVersion()).forPath(paths.drain(host), data); // a drain past its until
        } catch (KeeperException.NodeExistsException | KeeperException.BadVersionException | KeeperException.NoNodeException e) {
            throw Refusal.conflict("host", "host " + host + " was drained or undrained by another request meanwhile: mesh held shows "
                    + "its drain; drain it again if need be");
        }
        return new Drain(host, d, false, client.checkExists().forPath(paths.agent(host)) == null ? Boolean.TRUE : null);
    }

    /**
     * @return true when {@code host} has an agent node or reports, or a desired state names it (a host whose agent has
     *         not started yet can be drained or held ahead of it)
     * @throws Exception ZooKeeper errors
     */
    static boolean known(CuratorFramework client, ZkPaths paths, String host) throws Exception {
        if (client.checkExists().forPath(paths.agent(host)) != null || client.checkExists().forPath(paths.reports(host)) != null) return true;
        for (String m : ZkReads.children(client, paths.desired())) {
            io.mesh.wire.DesiredRecord d = ZkReads.read(client, paths.desired(m), io.mesh.wire.DesiredRecord.class);
            if (d != null && !d.tombstone() && d.spec() != null && d.spec().hosts().contains(host)) return true;
        }
        return false;
    }

    /**
     * Ends a host's drain ({@code DELETE /v1/drains/{host}}): the node and the holds it placed go in one transaction,
     * so that the host's containers are released also while its agent is down (the agent deletes any it places after).
     *
     * @return the drain ended, and the containers released
     * @throws Refusal   400 for a bad host, 404 when the host is not drained
     * @throws Exception ZooKeeper errors
     */
    public Undrained undrain(String host) throws Exception {
        try {
            ZkPaths.checkHost(host);
        } catch (IllegalArgumentException e) {
            throw Refusal.badRequest("host", "host: " + e.getMessage());
        }
        byte[] data;
        org.apache.zookeeper.data.Stat stat = new org.apache.zookeeper.data.Stat();
        try {
            data = client.getData().storingStatIn(stat).forPath(paths.drain(host));
        } catch (KeeperException.NoNodeException e) {
            throw Refusal.notFound("host", "host " + host + " is not drained (GET /v1/drains lists the drains)");
        }
        List<org.apache.curator.framework.api.transaction.CuratorOp> ops = new ArrayList<>();
        // At the version read: a drain placed again in between is not ended by this undrain
        ops.add(client.transactionOp().delete().withVersion(stat.getVersion()).forPath(paths.drain(host)));
        List<String> released = new ArrayList<>();
        for (HeldRecord h : HeldRegistry.read(client, paths, host).values()) {
            if (h.operatorHold() && h.hold().ofDrain()) {
                ops.add(client.transactionOp().delete().forPath(paths.held(host, h.container())));
                released.add(h.container());
            }
        }
        try {
            client.transaction().forOperations(ops);
        } catch (KeeperException.BadVersionException e) {
            throw Refusal.conflict("host", "host " + host + " was drained again meanwhile: mesh held shows its drain; undrain it again if need be");
        } catch (KeeperException.NoNodeException e) {
            // A hold went meanwhile (released by hand, or expired and deleted by its agent): the drain alone, then its agent
            // releases the rest.
            try {
                client.delete().withVersion(stat.getVersion()).forPath(paths.drain(host));
            } catch (KeeperException.NoNodeException gone) {
                throw Refusal.notFound("host", "host " + host + " is not drained (undrained meanwhile)");
            } catch (KeeperException.BadVersionException again) {
                throw Refusal.conflict("host", "host " + host + " was drained again meanwhile: mesh held shows its drain; undrain it again if need be");
            }
            released.clear();
        }
        DrainRecord d = Json.readOrNull(data, DrainRecord.class);
        return new Undrained(host, d, released);
    }

    /**
     * @param host     the host
     * @param drain    the drain ended, as read ({@code null} when its data could not be read)
     * @param released the drain's holds deleted with it (its agent releases any others)
     */
    public record Undrained(String host, DrainRecord drain, List<String> released) {}

    /**
     * @return every drain, by host
     * @throws Exception ZooKeeper errors
     */
    public List<Drain> list() throws Exception {
        List<Drain> out = new ArrayList<>();
        Instant now = ZkClock.now();
        for (String host : new TreeSet<>(ZkReads.children(client, paths.drains()))) {
            DrainRecord d = ZkReads.read(client, paths.drain(host), DrainRecord.class);
            if (d == null) d = DrainRecord.unreadable();
            out.add(new Drain(host, d, !d.inForceAt(now)));
        }
        return out;
    }
}
