package io.mesh.coordinator;

import io.mesh.curator.HeldRegistry;
import io.mesh.wire.AgentRecord;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.WindowRecord;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * What the fleet looks like in ZooKeeper right now: held containers, open windows, agents and their last reports.
 * Read at each call from its {@link NodeSource} (held nodes from ZooKeeper); nodes that vanish while being read are
 * left out.
 *
 * @param client a started Curator client (held nodes are read from ZooKeeper)
 * @param paths  the layout under the configured root
 * @param source where agents, reports and windows are read from
 */
public record FleetView(CuratorFramework client, ZkPaths paths, NodeSource source) {
    /**
     * One host as {@code GET /v1/hosts} shows it.
     *
     * @param host    host id
     * @param online  true when its agent node {@code {root}/agents/<host>} exists
     * @param agent   the agent node's record, {@code null} when offline
     * @param modules the last report of each module on that host, by module name order
     */
    public record Host(String host, boolean online, AgentRecord agent, List<ApplyReport> modules) {}

    /**
     * @return every held container on every host ({@link HeldRegistry#readAll})
     * @throws Exception ZooKeeper errors
     */
    public List<HeldRecord> held() throws Exception {
        return HeldRegistry.readAll(client, paths);
    }

    /**
     * @return the number of held-container nodes, counted without reading their data
     * @throws Exception ZooKeeper errors
     */
    public int heldCount() throws Exception {
        return HeldRegistry.count(client, paths);
    }

    /**
     * @return every open window, from {@code {root}/windows/<host>/<module>}, sorted by host then module; a record
     *         naming another host or module than its path is shown as its path's (under per-host identities a host
     *         writes only under its own path, so the path is the truth: docs/decisions/0019-host-identities.md)
     * @throws Exception ZooKeeper errors
     */
    public List<WindowRecord> windows() throws Exception {
        List<WindowRecord> out = new ArrayList<>();
        for (String host : source.children(paths.windows())) {
            for (String module : source.children(paths.windows(host))) {
                WindowRecord r = source.read(paths.window(host, module), WindowRecord.class);
                if (r == null) continue;
                if (!host.equals(r.host()) || !module.equals(r.module())) {
                    r = new WindowRecord(host, module, r.schedule(), r.window(), r.since(), r.held(), r.by());
                }
                out.add(r);
            }
        }
        return out;
    }

    /**
     * @return every host that has an agent node or a report, sorted, with its agent and its modules' last reports
     * @throws Exception ZooKeeper errors
     */
    public List<Host> hosts() throws Exception {
        Set<String> agents = new HashSet<>(source.children(paths.agents()));
        TreeSet<String> hosts = new TreeSet<>(agents);
        hosts.addAll(source.children(paths.reports()));
        List<Host> out = new ArrayList<>();
        for (String host : hosts) {
            // online by the node's presence: an agent node whose data does not parse still means a live agent
            boolean online = agents.contains(host);
            AgentRecord agent = online ? source.read(paths.agent(host), AgentRecord.class) : null;
            List<ApplyReport> reports = new ArrayList<>();
            for (String module : source.children(paths.reports(host))) {
                ApplyReport r = source.read(paths.report(host, module), ApplyReport.class);
                if (r != null) reports.add(r);
            }
            out.add(new Host(host, online, agent, reports));
        }
        return out;
    }
}
