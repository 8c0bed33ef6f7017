package io.mesh.coordinator;

import io.mesh.manifest.ModuleName;
import io.mesh.manifest.ModuleSpec;
import io.mesh.manifest.Printable;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.Times;
import io.mesh.wire.WindowRequest;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;

import java.util.regex.Pattern;

/**
 * The coordinator's side of window requests ({@code mesh window run}): creates
 * {@code /mesh/requests/<host>/window-<seq>} (persistent sequential, {@link WindowRequest} in state
 * {@code requested}) for the agent of that host to run, reads it back, and deletes it (docs/design.md,
 * "Window requests").
 */
public final class WindowRequestStore {
    /** Request node names: {@code window-} and ten digits. */
    public static final Pattern NAME = Pattern.compile(Pattern.quote(ZkPaths.WINDOW_REQUEST_PREFIX) + "\\d{10}");

    private final CuratorFramework client;
    private final ZkPaths paths;

    /**
     * @param client a started Curator client
     * @param paths  the layout
     */
    public WindowRequestStore(CuratorFramework client, ZkPaths paths) {
        this.client = client;
        this.paths = paths;
    }

    /**
     * Checks the request against the desired state and the agents, then creates its node.
     *
     * @param host     host id
     * @param module   module name
     * @param schedule schedule name
     * @param by       who asks
     * @return the request node's name, such as {@code window-0000000003}
     * @throws Refusal          400 when the module, schedule or host does not fit, 409 when the host has no agent running
     * @throws Exception        ZooKeeper errors
     */
    public String create(String host, String module, String schedule, ProcessRef by) throws Exception {
        try {
            ZkPaths.checkHost(host);
        } catch (IllegalArgumentException e) {
            throw Refusal.badRequest(null, e.getMessage());
        }
        if (module == null || module.isBlank() || schedule == null || schedule.isBlank()) {
            throw Refusal.badRequest(null, "give a module and a schedule: {\"module\":\"store\",\"schedule\":\"garbage-collect\"}");
        }
        if (!ModuleName.matches(module)) throw Refusal.badRequest(null, "no module '" + Printable.cut(module) + "'");
        DesiredRecord d = ZkReads.read(client, paths.desired(module), DesiredRecord.class);
        if (d != null && d.tombstone()) throw Refusal.badRequest(null, "module " + module + " is deleted (by " + d.push() + ")");
        if (d == null || d.spec() == null) throw Refusal.badRequest(null, "no module '" + module + "' has been pushed");
        ModuleSpec spec = d.spec();
        if (!spec.runsOn(host)) throw Refusal.badRequest(null, "module " + module + " does not run on host " + host + " (its hosts: " + spec.hosts() + ")");
        if (!spec.schedules().containsKey(schedule)) {
            throw Refusal.badRequest(null, "module " + module + " has no schedule '" + Printable.cut(schedule) + "'; "
                    + (spec.schedules().isEmpty() ? "it has no schedules (add one under schedules: in its manifest)" : "it has " + String.join(", ", spec.schedules().keySet())));
        }
        if (client.checkExists().forPath(paths.agent(host)) == null) {
            throw Refusal.conflict(null, "host " + host + " has no running agent (" + paths.agent(host) + " is missing): start mesh-agent run --host " + host);
        }
        String path = client.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT_SEQUENTIAL)
                .forPath(paths.windowRequestPrefix(host), Json.bytes(WindowRequest.of(module, schedule, Times.now(), by)));
        return ZKPaths.getNodeFromPath(path);
    }

    /**
     * @param host    host id
     * @param request request node name
     * @return the request, or {@code null} when there is none (finished and deleted, or never made)
     * @throws Exception ZooKeeper errors
     */
    public WindowRequest read(String host, String request) throws Exception {
        if (!valid(host, request)) return null;
        return ZkReads.read(client, paths.request(host, request), WindowRequest.class);
    }

    /**
     * Deletes a request: once read when done; before it runs, this cancels it.
     *
     * @param host    host id
     * @param request request node name
     * @return false when there was none
     * @throws Exception ZooKeeper errors
     */
    public boolean delete(String host, String request) throws Exception {
        if (!valid(host, request)) return false;
        try {
            client.delete().forPath(paths.request(host, request));
            return true;
        } catch (KeeperException.NoNodeException e) {
            return false;
        }
    }

    private static boolean valid(String host, String request) {
        try {
            ZkPaths.checkHost(host);
        } catch (IllegalArgumentException e) {
            return false;
        }
        return request != null && NAME.matcher(request).matches();
    }

}
