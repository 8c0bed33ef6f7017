package io.mesh.coordinator;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.Durations;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.HeldRegistry;
import io.mesh.wire.ModuleSpec;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.Times;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;

import java.time.Duration;
import java.time.Instant;
import java.util.regex.Pattern;

/**
 * The coordinator's side of operator holds ({@code mesh hold}, {@code mesh release}; SPEC.md "Operator holds",
 * docs/decisions/0015-operator-holds.md): checks a hold against the hosts and the desired state, then writes it through
 * {@link HeldRegistry#hold} (a persistent held node), or deletes it ({@link HeldRegistry#release}). Nothing is written
 * when a check fails.
 */
public final class HoldStore {
    /** A Docker name mesh makes: two manifest names joined by {@code -} (so also a safe znode name). */
    private static final Pattern DOCKER_NAME = Pattern.compile("[a-z0-9][a-z0-9-]{0,39}-[a-z0-9][a-z0-9-]{0,39}");

    private final CuratorFramework client;
    private final ZkPaths paths;

    /** A hold or release that cannot be done; nothing was written. */
    public static final class RefusedException extends Exception {
        /** HTTP status: 400 for a bad field, 404 for an unknown host or container, 409 for a container a window holds. */
        public final int status;
        /** The body field at fault ({@code host}, {@code container}, {@code reason}, {@code for}, {@code stop}). */
        public final String field;

        RefusedException(int status, String field, String message) {
            super(message);
            this.status = status;
            this.field = field;
        }
    }

    /**
     * @param client a started Curator client
     * @param paths  the layout
     */
    public HoldStore(CuratorFramework client, ZkPaths paths) {
        this.client = client;
        this.paths = paths;
    }

    /**
     * Places an operator hold from a {@code POST /v1/holds} body {@code {"host","container","reason","for"?,"stop"?}}.
     *
     * @param body      the request's JSON object
     * @param by        who places it (the operator's name as the request gives it)
     * @param process   this coordinator, as the node's {@code by}
     * @return the record written
     * @throws RefusedException naming the field and the fix; nothing written
     * @throws Exception        ZooKeeper errors
     */
    public HeldRecord hold(JsonNode body, String by, ProcessRef process) throws Exception {
        String host = text(body, "host", "host-a");
        String container = text(body, "container", "store-registry");
        String reason = text(body, "reason", "disk replacement, ticket OPS-12");
        if (reason.length() > 500 || reason.codePoints().anyMatch(Character::isISOControl)) {
            // one line: a newline or an escape would forge rows in mesh held and lines in the logs (a review's find)
            throw new RefusedException(400, "reason", "reason must be one line of at most 500 characters, with no control characters");
        }
        Duration lasts = null;
        JsonNode f = body.get("for");
        if (f != null && !f.isNull()) {
            if (!f.isTextual()) throw new RefusedException(400, "for", "for must be a duration such as \"2h\", \"30m\" or \"90s\"");
            try {
                lasts = Durations.parse(f.asText());
            } catch (IllegalArgumentException e) {
                throw new RefusedException(400, "for", "for: " + e.getMessage());
            }
        }
        JsonNode s = body.get("stop");
        if (s != null && !s.isNull() && !s.isBoolean()) throw new RefusedException(400, "stop", "stop must be true or false");
        boolean stop = s != null && s.asBoolean(false);
        try {
            ZkPaths.checkHost(host);
        } catch (IllegalArgumentException e) {
            throw new RefusedException(400, "host", "host: " + e.getMessage());
        }
        if (client.checkExists().forPath(paths.agent(host)) == null && client.checkExists().forPath(paths.reports(host)) == null) {
            throw new RefusedException(404, "host", "no host '" + host + "' is known (no agent node, no report): check the name (mesh status lists the hosts)");
        }
        ModuleSpec spec = moduleOf(container);
        if (spec == null) {
            throw new RefusedException(404, "container", "no module in the desired state has a container named '" + container
                    + "': give its Docker name, <module>-<name>, such as store-registry (mesh status lists modules)");
        }
        if (!spec.runsOn(host)) {
            throw new RefusedException(404, "container", "container " + container + " of module " + spec.module() + " does not run on host "
                    + host + " (its hosts: " + spec.hosts() + "): pick one of those hosts");
        }
        Instant since = Times.now();
        HeldRecord.OperatorHold hold = new HeldRecord.OperatorHold(by, reason, since, lasts == null ? null : since.plus(lasts),
                stop ? Boolean.TRUE : null, null);
        HeldRecord record = HeldRecord.operator(host, spec.module(), container, null, process, hold);
        try {
            HeldRegistry.hold(client, paths, record);
        } catch (HeldRegistry.AlreadyHeldException e) {
            throw new RefusedException(409, "container", e.getMessage()
                    + (e.existing() != null && e.existing().operatorHold() ? ": mesh release it first to change it" : ": hold it once the window ends"));
        }
        return record;
    }

    /**
     * Ends an operator hold ({@code DELETE /v1/holds/{host}/{container}}); the host's agent applies the module then.
     *
     * @return the hold deleted
     * @throws RefusedException 404 when there is none, 409 when the node is a window's
     * @throws Exception        ZooKeeper errors
     */
    public HeldRecord release(String host, String container) throws Exception {
        try {
            ZkPaths.checkHost(host);
        } catch (IllegalArgumentException e) {
            throw new RefusedException(400, "host", "host: " + e.getMessage());
        }
        if (container == null || !DOCKER_NAME.matcher(container).matches()) {
            throw new RefusedException(404, "container", "no hold on '" + container + "': give the Docker name, <module>-<name>");
        }
        HeldRecord gone;
        try {
            gone = HeldRegistry.release(client, paths, host, container);
        } catch (HeldRegistry.AlreadyHeldException e) {
            throw new RefusedException(409, "container", e.getMessage());
        }
        if (gone == null) {
            throw new RefusedException(404, "container", "no operator hold on " + container + " on host " + host + " (mesh held lists them)");
        }
        return gone;
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

    private static String text(JsonNode body, String field, String example) throws RefusedException {
        JsonNode n = body.get(field);
        if (n == null || n.isNull() || !n.isTextual() || n.asText().isBlank()) {
            throw new RefusedException(400, field, field + " is required: give it as text, such as \"" + example + "\"");
        }
        return n.asText().strip();
    }
}
