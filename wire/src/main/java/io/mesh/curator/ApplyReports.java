package io.mesh.curator;

import io.mesh.wire.ApplyReport;
import io.mesh.wire.Json;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.KeeperException;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/** Reads of the agents' reports ({@code /mesh/reports/<host>/<module>}) across hosts. */
public final class ApplyReports {
    private ApplyReports() {}

    /** How long the reads may take together before the caller is told ZooKeeper did not answer. */
    static final java.time.Duration WITHIN = java.time.Duration.ofSeconds(15);
    /**
     * Every host's last report of each of {@code modules}, read in parallel on the one connection
     * ({@link PipelinedReads}: one multi of many reports could pass ZooKeeper's {@code jute.maxbuffer}): what the one
     * disruption budget reads for failed applies ({@link io.mesh.wire.GroupDowntime}).
     *
     * @param client  a started Curator client
     * @param paths   the layout
     * @param modules the modules asked about
     * @return the reports found, by host then module; a report whose data names another host or module than its path, or
     *         that cannot be read, is left out (a host cannot speak for another)
     * @throws Exception from ZooKeeper, or a timeout after {@link #WITHIN}
     */
    public static List<ApplyReport> readAll(CuratorFramework client, ZkPaths paths, Collection<String> modules) throws Exception {
        if (modules.isEmpty()) return List.of();
        List<String> hosts;
        try {
            hosts = client.getChildren().forPath(paths.reports()).stream().sorted().toList();
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
        List<String> at = new ArrayList<>();
        for (String host : hosts) for (String module : modules.stream().sorted().toList()) at.add(paths.report(host, module));
        List<CuratorEvent> answers = PipelinedReads.data(client, at, WITHIN);
        List<ApplyReport> out = new ArrayList<>();
        for (int i = 0; i < answers.size(); i++) {
            CuratorEvent e = answers.get(i);
            if (PipelinedReads.missing(e, at.get(i))) continue;
            ApplyReport r = Json.readOrNull(e.getData(), ApplyReport.class);
            if (r != null && at.get(i).equals(paths.report(String.valueOf(r.host()), String.valueOf(r.module())))) out.add(r);
        }
        return out;
    }
}
