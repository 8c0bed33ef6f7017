package io.mesh.curator;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.KeeperException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Reads of many nodes in parallel on one connection (pipelined, in the background), each answer one node's: unlike a
 * {@link MultiRead} of many nodes, no answer nears ZooKeeper's {@code jute.maxbuffer}. At most {@link #IN_FLIGHT} are
 * sent before their answers are awaited, so that a read that times out leaves a bounded number queued.
 */
public final class PipelinedReads {
    /** Reads sent before their answers are awaited. */
    public static final int IN_FLIGHT = 256;

    private PipelinedReads() {}

    /** One background read of a path, answering its event. */
    @FunctionalInterface
    private interface Read {
        void send(String path, CompletableFuture<CuratorEvent> answer) throws Exception;
    }

    /**
     * @param paths  absolute paths
     * @param within how long all the reads may take together
     * @return each node's {@code getData} answer (its data and stat, or its error code), in the order of {@code paths}
     * @throws Exception from ZooKeeper, or a timeout after {@code within}
     */
    public static List<CuratorEvent> data(CuratorFramework client, List<String> paths, Duration within) throws Exception {
        return read(paths, within, (p, a) -> client.getData().inBackground((c, e) -> a.complete(e)).forPath(p));
    }

    /**
     * @return each node's {@code getChildren} answer, in the order of {@code paths}
     * @see #data
     */
    public static List<CuratorEvent> children(CuratorFramework client, List<String> paths, Duration within) throws Exception {
        return read(paths, within, (p, a) -> client.getChildren().inBackground((c, e) -> a.complete(e)).forPath(p));
    }

    private static List<CuratorEvent> read(List<String> paths, Duration within, Read read) throws Exception {
        List<CuratorEvent> answers = new ArrayList<>();
        long deadline = System.nanoTime() + within.toNanos();
        for (int from = 0; from < paths.size(); from += IN_FLIGHT) {
            List<CompletableFuture<CuratorEvent>> batch = new ArrayList<>();
            for (String path : paths.subList(from, Math.min(paths.size(), from + IN_FLIGHT))) {
                CompletableFuture<CuratorEvent> answer = new CompletableFuture<>();
                read.send(path, answer);
                batch.add(answer);
            }
            CompletableFuture.allOf(batch.toArray(CompletableFuture[]::new)).get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            for (CompletableFuture<CuratorEvent> a : batch) answers.add(a.join());
        }
        return answers;
    }

    /**
     * @param answer one read's answer
     * @param path   the node read, for the exception
     * @return true when the read found no node there; false when it read the node
     * @throws KeeperException the read's error, when it failed for another reason
     */
    public static boolean missing(CuratorEvent answer, String path) throws KeeperException {
        KeeperException.Code code = KeeperException.Code.get(answer.getResultCode());
        if (code == KeeperException.Code.NONODE) return true;
        if (code != KeeperException.Code.OK) throw KeeperException.create(code == null ? KeeperException.Code.SYSTEMERROR : code, path);
        return false;
    }
}
