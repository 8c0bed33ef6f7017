package io.mesh.curator;

import io.mesh.wire.ApplyReport;
import io.mesh.wire.Json;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/** Reads of the agents' reports ({@code /mesh/reports/<host>/<module>}) across hosts. */
public final class ApplyReports {
    private ApplyReports() {}

    /** Reads per round trip: 64 reports of at most ~10 KB each (failedPushes, containers) stay under 1 MB. */
    static final int BATCH = 64;

    /**
     * Every host's last report of each of {@code modules}, in a round trip per {@value #BATCH} after the list of hosts: what the one
     * disruption budget reads for failed applies ({@link io.mesh.wire.GroupDowntime}).
     *
     * @param client  a started Curator client
     * @param paths   the layout
     * @param modules the modules asked about
     * @return the reports found, by host then module; a report whose data names another host or module than its path, or
     *         that cannot be read, is left out (a host cannot speak for another)
     * @throws Exception from ZooKeeper
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
        List<Op> reads = new ArrayList<>();
        for (String host : hosts) {
            for (String module : modules.stream().sorted().toList()) {
                at.add(paths.report(host, module));
                reads.add(Op.getData(paths.report(host, module)));
            }
        }
        // In batches: a report is a few KB, and one answer must stay far below ZooKeeper's jute.maxbuffer (1 MB).
        List<OpResult> results = new ArrayList<>();
        for (int from = 0; from < reads.size(); from += BATCH) {
            results.addAll(MultiRead.of(client, reads.subList(from, Math.min(reads.size(), from + BATCH))));
        }
        List<ApplyReport> out = new ArrayList<>();
        for (int i = 0; i < results.size(); i++) {
            if (MultiRead.missing(results.get(i), at.get(i))) continue;
            ApplyReport r = Json.readOrNull(((OpResult.GetDataResult) results.get(i)).getData(), ApplyReport.class);
            String path = at.get(i);
            if (r != null && path.equals(paths.report(String.valueOf(r.host()), String.valueOf(r.module())))) out.add(r);
        }
        return out;
    }
}
