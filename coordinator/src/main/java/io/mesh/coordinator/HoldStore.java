package io.mesh.coordinator;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.curator.HeldRegistry;
import io.mesh.curator.ZkClock;
import io.mesh.manifest.ModuleName;
import io.mesh.manifest.ModuleSpec;
import io.mesh.manifest.Printable;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.Times;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The coordinator's side of operator holds ({@code mesh hold}, {@code mesh release}; SPEC.md "Operator holds",
 * docs/decisions/0015-operator-holds.md): checks a hold against the hosts and the desired state, then writes it through
 * {@link HeldRegistry#hold} (a persistent held node), or deletes it ({@link HeldRegistry#release}), or reads it back
 * for {@code mesh hold} to wait for its host's confirmation ({@link #view}); and removes a held node nothing owns
 * ({@link #releaseStale}, {@code mesh release --stale}). Nothing is written when a check fails.
 */
public final class HoldStore {
    /** A Docker name mesh makes: two manifest names joined by {@code -} (so also a safe znode name). */
    private static final Pattern DOCKER_NAME = Pattern.compile(ModuleName.REGEX + "-" + ModuleName.REGEX);

    /** The fields of {@code POST /v1/holds}. */
    private static final java.util.Set<String> HOLD_FIELDS = new java.util.TreeSet<>(java.util.List.of("host", "container", "reason", "for", "stop"));

    private final CuratorFramework client;
    private final ZkPaths paths;

    /**
     * @param client a started Curator client
     * @param paths  the layout
     */
    public HoldStore(CuratorFramework client, ZkPaths paths) {
        this.client = client;
        this.paths = paths;
    }

    /**
     * Places an operator hold from a {@code POST /v1/holds} body {@code {"host","container","reason","for"?,"stop"?}}
     * ({@code for}: above zero, at most {@link OperatorWords#MAX_LENGTH}, 366 days). It is recorded, not yet in force:
     * the host's agent confirms it ({@code hold.confirmed}, SPEC.md "Operator holds").
     *
     * @param body      the request's JSON object
     * @param by        who places it: the named token's name, the client's {@code X-Mesh-User} only a claim beside it
     * @param process   this coordinator, as the node's {@code by}
     * @return the record written
     * @throws Refusal          naming the field and the fix; nothing written
     * @throws Exception        ZooKeeper errors
     */
    public HeldRecord hold(JsonNode body, String by, ProcessRef process) throws Exception {
        for (java.util.Iterator<String> names = body.fieldNames(); names.hasNext(); ) {
            String f = names.next();
            if (!HOLD_FIELDS.contains(f)) {
                // a misspelled stop or an until the coordinator does not take must not leave a hold other than asked
                throw Refusal.badRequest(f, "unknown field '" + f + "': a hold takes " + HOLD_FIELDS + " (for a duration such as \"2h\", not until)");
            }
        }
        String host = text(body, "host", "host-a");
        String container = text(body, "container", "store-registry");
        String reason = OperatorWords.reason(body, "disk replacement, ticket OPS-12", null);
        Duration lasts = OperatorWords.lasts(body.get("for"), "hold", "hold until mesh release");
        JsonNode s = body.get("stop");
        if (s != null && !s.isNull() && !s.isBoolean()) throw Refusal.badRequest("stop", "stop must be true or false");
        boolean stop = s != null && s.asBoolean(false);
        try {
            ZkPaths.checkHost(host);
        } catch (IllegalArgumentException e) {
            throw Refusal.badRequest("host", "host: " + e.getMessage());
        }
        if (!DrainStore.known(client, paths, host)) {
            throw Refusal.notFound("host", "no host '" + host + "' is known (no agent node, no report, no manifest names it): check the name "
                    + "(mesh status lists the hosts)");
        }
        ModuleSpec spec = moduleOf(container);
        if (spec == null) {
            throw Refusal.notFound("container", "no module in the desired state has a container named '" + container
                    + "': give its Docker name, <module>-<name>, such as store-registry (mesh status lists modules)");
        }
        if (!spec.runsOn(host)) {
            throw Refusal.notFound("container", "container " + container + " of module " + spec.module() + " does not run on host "
                    + host + " (its hosts: " + spec.hosts() + "): pick one of those hosts");
        }
        Instant since = ZkClock.now(); // measured by ZooKeeper's clock, as every reader judges its end
        HeldRecord.OperatorHold hold = new HeldRecord.OperatorHold(by, reason, since, lasts == null ? null : since.plus(lasts),
                stop ? Boolean.TRUE : null, null);
        HeldRecord record = HeldRecord.operator(host, spec.module(), container, null, process, hold);
        try {
            HeldRegistry.hold(client, paths, record);
        } catch (HeldRegistry.AlreadyHeldException e) {
            throw Refusal.conflict("container", e.getMessage()
                    + (e.existing() != null && e.existing().operatorHold() ? ": mesh release it first to change it" : ": hold it once the window ends"));
        }
        return record;
    }

    /**
     * Ends an operator hold ({@code DELETE /v1/holds/{host}/{container}}); the host's agent applies the module then.
     *
     * @return the hold deleted
     * @throws Refusal          404 when there is none, 409 when the node is a window's
     * @throws Exception        ZooKeeper errors
     */
    public HeldRecord release(String host, String container) throws Exception {
        try {
            ZkPaths.checkHost(host);
        } catch (IllegalArgumentException e) {
            throw Refusal.badRequest("host", "host: " + e.getMessage());
        }
        if (container == null || !DOCKER_NAME.matcher(container).matches()) {
            throw Refusal.notFound("container", "no hold on '" + container + "': give the Docker name, <module>-<name>");
        }
        HeldRecord there = HeldRegistry.read(client, paths, host, List.of(container)).get(container);
        if (there != null && there.operatorHold() && there.hold().ofDrain()) {
            // its agent places it again while the drain lasts (decision 37)
            throw Refusal.conflict("container", container + " on " + host + " is held by the drain of " + host + " (" + there.hold().reason()
                    + "): mesh undrain " + host + " ends it, with every hold of the drain");
        }
        HeldRecord gone;
        try {
            gone = HeldRegistry.release(client, paths, host, container);
        } catch (HeldRegistry.AlreadyHeldException e) {
            throw Refusal.conflict("container", e.getMessage() + " (a node no running window owns, made by hand or left "
                    + "behind, is removed by an admin with mesh release " + host + " " + container + " --stale)");
        }
        if (gone == null) {
            throw Refusal.notFound("container", "no operator hold on " + container + " on host " + host + " (mesh held lists them)");
        }
        return gone;
    }

    /**
     * Removes a held node that nothing owns ({@code DELETE /v1/holds/{host}/{container}?stale=true}, admin only: the
     * caller checks; SPEC.md "Operator holds"): neither an operator's hold nor a live session's node
     * ({@link HeldRegistry#releaseStale}).
     *
     * @return the node removed, as read ({@link HeldRecord#unreadable} when its data could not be read)
     * @throws Refusal          400 for a bad host, 404 when there is no held node, 409 naming what owns it (an
     *                          operator's hold: plain release; a live window: wait for it)
     * @throws Exception        ZooKeeper errors
     */
    public HeldRecord releaseStale(String host, String container) throws Exception {
        try {
            ZkPaths.checkHost(host);
        } catch (IllegalArgumentException e) {
            throw Refusal.badRequest("host", "host: " + e.getMessage());
        }
        if (container == null || !DOCKER_NAME.matcher(container).matches()) {
            throw Refusal.notFound("container", "no held node '" + Printable.cut(String.valueOf(container))
                    + "': give the Docker name, <module>-<name>");
        }
        HeldRecord gone;
        try {
            gone = HeldRegistry.releaseStale(client, paths, host, container);
        } catch (HeldRegistry.NotStaleException e) {
            throw Refusal.conflict("container", e.getMessage());
        }
        if (gone == null) {
            throw Refusal.notFound("container", "no held node of " + container + " on host " + host + " (mesh held lists them)");
        }
        return gone;
    }

    /**
     * An operator hold as {@code GET /v1/holds/{host}/{container}} shows it.
     *
     * @param held    the held node, as {@code POST /v1/holds} returned it ({@code hold.confirmed} once its host confirmed it)
     * @param agent   true when the host's agent node exists: its agent runs, and confirms the hold under the module's lock
     * @param expired true when its {@code until} has passed: it holds nothing, its agent deletes it
     */
    public record View(HeldRecord held, boolean agent, boolean expired) {}

    /**
     * Reads one operator hold, for {@code mesh hold} waiting for its host's confirmation (SPEC.md "Operator holds").
     *
     * @param host      host id
     * @param container the Docker name
     * @return the hold, whether the host's agent runs, whether it expired
     * @throws Refusal          400 for a host or container that is no name mesh makes, 404 when no operator hold is
     *                          there (none, or a window's)
     * @throws Exception        ZooKeeper errors
     */
    public View view(String host, String container) throws Exception {
        try {
            ZkPaths.checkHost(host);
        } catch (IllegalArgumentException e) {
            throw Refusal.badRequest("host", "host: " + e.getMessage());
        }
        if (container == null || !DOCKER_NAME.matcher(container).matches()) {
            throw Refusal.badRequest("container", "container: '" + Printable.cut(String.valueOf(container))
                    + "' is not a Docker name mesh makes: give <module>-<name>, such as store-registry");
        }
        HeldRecord h = HeldRegistry.read(client, paths, host, List.of(container)).get(container);
        if (h == null) {
            throw Refusal.notFound("container", "no operator hold on " + container + " on host " + host
                    + ": place one with mesh hold " + host + " " + container + " --reason TEXT (mesh held lists the holds)");
        }
        if (!h.operatorHold()) {
            throw Refusal.notFound("container", container + " on host " + host + " is " + h.reason()
                    + ", not by an operator: it ends with its window (mesh held lists the holds)");
        }
        return new View(h, client.checkExists().forPath(paths.agent(host)) != null, h.expiredAt(ZkClock.now()));
    }

    /** @return the module spec in the desired state naming {@code container} as its Docker name, else {@code null} */
    private ModuleSpec moduleOf(String container) throws Exception {
        if (!DOCKER_NAME.matcher(container).matches()) return null;
        for (String module : ZkReads.children(client, paths.desired())) {
            if (!container.startsWith(module + "-")) continue;
            DesiredRecord d = ZkReads.read(client, paths.desired(module), DesiredRecord.class);
            if (d == null || d.tombstone() || d.spec() == null) continue;
            if (d.spec().containers().containsKey(container.substring(module.length() + 1))) return d.spec();
        }
        return null;
    }

    private static String text(JsonNode body, String field, String example) throws Refusal {
        JsonNode n = body.get(field);
        if (n == null || n.isNull() || !n.isTextual() || n.asText().isBlank()) {
            throw Refusal.badRequest(field, field + " is required: give it as text, such as \"" + example + "\"");
        }
        return n.asText().strip();
    }
}
