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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Reads of the agents' reports ({@code /mesh/reports/<host>/<module>}) across hosts. */
public final class ApplyReports {
    private ApplyReports() {}

    /** How long the reads may take together before the caller is told ZooKeeper did not answer. */
    static final java.time.Duration WITHIN = java.time.Duration.ofSeconds(15);
    /** Reads sent before their answers are awaited. */
    static final int IN_FLIGHT = 256;

    /**
     * Every host's last report of each of {@code modules}, read in parallel on the one connection (pipelined: each
     * answer is one node's, so no answer nears ZooKeeper's {@code jute.maxbuffer} as one multi of many reports could): what
     * the one disruption budget reads for failed applies ({@link io.mesh.wire.GroupDowntime}).
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
        // At most IN_FLIGHT reads at once, each batch awaited: a look that times out leaves a bounded number queued
        List<CuratorEvent> answers = new ArrayList<>();
        long deadline = System.nanoTime() + WITHIN.toNanos();
        for (int from = 0; from < at.size(); from += IN_FLIGHT) {
            List<CompletableFuture<CuratorEvent>> batch = new ArrayList<>();
            for (String path : at.subList(from, Math.min(at.size(), from + IN_FLIGHT))) {
                CompletableFuture<CuratorEvent> answer = new CompletableFuture<>();
                client.getData().inBackground((c, event) -> answer.complete(event)).forPath(path);
                batch.add(answer);
            }
            CompletableFuture.allOf(batch.toArray(CompletableFuture[]::new)).get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            for (CompletableFuture<CuratorEvent> a : batch) answers.add(a.join());
        }
        List<ApplyReport> out = new ArrayList<>();
        for (int i = 0; i < answers.size(); i++) {
            CuratorEvent e = answers.get(i);
            KeeperException.Code code = KeeperException.Code.get(e.getResultCode());
            if (code == KeeperException.Code.NONODE) continue;
            if (code != KeeperException.Code.OK) throw KeeperException.create(code == null ? KeeperException.Code.SYSTEMERROR : code, at.get(i));
            ApplyReport r = Json.readOrNull(e.getData(), ApplyReport.class);
            if (r != null && at.get(i).equals(paths.report(String.valueOf(r.host()), String.valueOf(r.module())))) out.add(r);
        }
        return out;
    }
}
