package io.mesh.coordinator;

import io.mesh.curator.PipelinedReads;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Takes and restores backups ({@code GET /v1/backup}, {@code POST /v1/restore}; SPEC.md "Running it for real"). What a
 * backup holds, the order of a restore's writes and why sequence numbers are moved on are
 * docs/decisions/0039-backups-and-an-empty-ensemble.md.
 */
final class BackupStore {
    private static final Logger LOG = LoggerFactory.getLogger(BackupStore.class);
    /** How long one batch of {@link PipelinedReads#IN_FLIGHT} reads may take before ZooKeeper is taken as not answering. */
    private static final long BATCH_WITHIN_S = 30;
    /** A restore's transactions stay under this many bytes of data and paths (ZooKeeper's request limit is 1 MB). */
    static final int TRANSACTION_BYTES = 512 * 1024;
    /** ... and this many operations. */
    static final int TRANSACTION_OPS = 1000;
    /** A child's name for moving a parent's {@code cversion} on: no prefix mesh's sequential names use. */
    private static final String BUMP = "restore-sequence";

    private final CuratorFramework client;
    private final ZkPaths paths;

    BackupStore(CuratorFramework client, ZkPaths paths) {
        this.client = client;
        this.paths = paths;
    }

    /** What a restore wrote. */
    record Restored(int created, int updated, int unchanged, int desired, int holds, Map<String, Long> sequences) {}

    /**
     * @return a backup of the tree now, parents before children, each subtree of {@link BackupDocument#SUBTREES} in
     *         that order
     * @throws Exception from ZooKeeper
     */
    BackupDocument take() throws Exception {
        List<BackupDocument.Node> nodes = new ArrayList<>();
        for (String subtree : BackupDocument.SUBTREES) walk(subtree, nodes);
        return BackupDocument.of(paths.root(), Instant.now().truncatedTo(ChronoUnit.MILLIS), nodes);
    }

    /** Reads a subtree level by level, pipelined, into {@code out}: persistent nodes only, and of held nodes the holds. */
    private void walk(String subtree, List<BackupDocument.Node> out) throws Exception {
        List<String> level = List.of(subtree);
        while (!level.isEmpty()) {
            List<String> next = new ArrayList<>(), at = level.stream().map(rel -> paths.root() + rel).toList();
            List<CuratorEvent> data = PipelinedReads.data(client, at, within(at.size()));
            List<CuratorEvent> children = PipelinedReads.children(client, at, within(at.size()));
            for (int i = 0; i < level.size(); i++) {
                String rel = level.get(i);
                CuratorEvent d = data.get(i), c = children.get(i);
                if (PipelinedReads.missing(d, at.get(i)) || PipelinedReads.missing(c, at.get(i))) continue; // deleted while the backup ran
                if (!kept(rel, d.getStat(), d.getData())) continue;
                out.add(new BackupDocument.Node(rel, d.getData() == null ? "" : new String(d.getData(), StandardCharsets.UTF_8)));
                c.getChildren().stream().sorted().forEach(child -> next.add(rel + "/" + child));
            }
            level = next;
        }
    }

    /** @return how long {@code n} reads may take: {@link #BATCH_WITHIN_S} per batch of {@link PipelinedReads#IN_FLIGHT} */
    private static Duration within(int n) {
        return Duration.ofSeconds(BATCH_WITHIN_S * Math.max(1, (n + PipelinedReads.IN_FLIGHT - 1) / PipelinedReads.IN_FLIGHT));
    }

    /** A window's held nodes and every ephemeral node belong to a live session: never backed up (decision 39 item 1). */
    private static boolean kept(String rel, Stat stat, byte[] data) {
        if (stat != null && stat.getEphemeralOwner() != 0) return false;
        if (depth(rel) == 3 && rel.startsWith("/held/")) {
            HeldRecord h = data == null ? null : Json.readOrNull(data, HeldRecord.class);
            return h != null && h.operatorHold();
        }
        return true;
    }

    private static int depth(String rel) { return (int) rel.chars().filter(ch -> ch == '/').count(); }

    /**
     * Restores a backup (decision 39 items 3 and 4): refused when the tree already holds nodes of a backup's subtrees
     * and {@code force} is not given; else everything but the desired nodes, then the sequences moved on, then the
     * desired nodes.
     *
     * @param doc   a document {@link BackupDocument#parse} checked
     * @param force write over what is there
     * @return what was written
     * @throws Refusal (409) naming what is there, nothing written
     * @throws Exception from ZooKeeper
     */
    Restored restore(BackupDocument doc, boolean force) throws Exception {
        if (!force) {
            List<String> there = new ArrayList<>();
            for (BackupDocument.Node n : take().nodes()) {
                if (depth(n.path()) >= 2 && !(n.path().startsWith("/held/") && depth(n.path()) == 2)) there.add(n.path());
            }
            there.sort(java.util.Comparator.comparing((String x) -> !x.startsWith("/desired/"))); // the desired state first: what matters most
            if (!there.isEmpty()) {
                throw Refusal.conflict("force", "the tree under " + paths.root() + " is not empty: " + there.size() + " node(s) a backup "
                        + "holds are there (" + String.join(", ", there.subList(0, Math.min(5, there.size()))) + (there.size() > 5 ? ", ..." : "")
                        + "); restore into an empty ensemble, or give --force to write the backup's nodes over those (the others stay)");
            }
        }
        for (String s : BackupDocument.SUBTREES) {
            try {
                client.create().creatingParentsIfNeeded().forPath(paths.root() + s, new byte[0]);
            } catch (KeeperException.NodeExistsException e) {
                // there already
            }
        }
        List<BackupDocument.Node> first = new ArrayList<>(), desired = new ArrayList<>();
        for (BackupDocument.Node n : doc.nodes()) (n.path().startsWith("/desired/") ? desired : first).add(n);
        int[] counts = new int[3]; // created, updated, unchanged
        List<Undo> done = new ArrayList<>();
        Map<String, Long> sequences;
        try {
            write(first, counts, done);
            sequences = moveSequencesOn(doc);
            write(desired, counts, done);
        } catch (Exception e) {
            String left = undo(done);
            throw new IllegalStateException("the restore failed (" + e + ") after writing " + done.size() + " node(s); "
                    + left + ": run mesh restore again once ZooKeeper answers (the tree is as before the restore, but for "
                    + "the sequence numbers moved on)", e);
        }
        int holds = (int) doc.nodes().stream().filter(n -> n.path().startsWith("/held/") && depth(n.path()) == 3).count();
        Restored r = new Restored(counts[0], counts[1], counts[2], desired.size(), holds, sequences);
        LOG.warn("restore of a backup taken {} (mesh {}, root {}) into {}: {} created, {} updated, {} unchanged; {} desired, {} holds{}",
                doc.takenAt(), doc.mesh(), doc.root(), paths.root(), r.created(), r.updated(), r.unchanged(), r.desired(), r.holds(),
                force ? " (--force)" : "");
        return r;
    }

    /** A node a restore wrote, and what it held before ({@code null}: it was not there). */
    private record Undo(String path, byte[] before) {}

    /**
     * Puts back what a failed restore wrote, newest first, best effort: a restore either writes the whole backup or
     * leaves the tree as it found it (a hold, freeze or drain left alone without the rest would restrain agents).
     *
     * @return what is said of it
     */
    private String undo(List<Undo> done) {
        int failed = 0;
        for (int i = done.size() - 1; i >= 0; i--) {
            Undo u = done.get(i);
            try {
                if (u.before() == null) client.delete().forPath(u.path());
                else client.setData().forPath(u.path(), u.before());
            } catch (KeeperException.NoNodeException gone) {
                // not there: nothing to undo
            } catch (Exception e) {
                failed++;
            }
        }
        LOG.warn("restore failed: {} node(s) it wrote put back as they were{}", done.size() - failed,
                failed == 0 ? "" : ", " + failed + " could not be");
        return failed == 0 ? "they were put back as they were" : failed + " of them could not be put back (ZooKeeper did not answer)";
    }

    /** Creates or sets each node, in transactions of at most {@link #TRANSACTION_BYTES} and {@link #TRANSACTION_OPS}. */
    private void write(List<BackupDocument.Node> nodes, int[] counts, List<Undo> done) throws Exception {
        Map<String, byte[]> now = readAll(nodes.stream().map(BackupDocument.Node::path).toList());
        List<CuratorOp> ops = new ArrayList<>();
        List<Undo> pending = new ArrayList<>();
        long bytes = 0;
        for (BackupDocument.Node n : nodes) {
            byte[] data = n.data().getBytes(StandardCharsets.UTF_8);
            String path = paths.root() + n.path();
            byte[] there = now.get(n.path());
            CuratorOp op;
            if (there == null) {
                op = client.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(path, data);
                counts[0]++;
            } else if (Arrays.equals(there, data)) {
                counts[2]++;
                continue;
            } else {
                op = client.transactionOp().setData().forPath(path, data);
                counts[1]++;
            }
            long size = data.length + path.length() + 64L;
            if (!ops.isEmpty() && (bytes + size > TRANSACTION_BYTES || ops.size() >= TRANSACTION_OPS)) {
                client.transaction().forOperations(ops);
                done.addAll(pending);
                ops = new ArrayList<>();
                pending = new ArrayList<>();
                bytes = 0;
            }
            ops.add(op);
            pending.add(new Undo(path, there));
            bytes += size;
        }
        if (!ops.isEmpty()) {
            client.transaction().forOperations(ops);
            done.addAll(pending);
        }
    }

    /** @return each node's data now, by its relative path; a node not there is absent from the map */
    private Map<String, byte[]> readAll(List<String> rels) throws Exception {
        List<String> at = rels.stream().map(rel -> paths.root() + rel).toList();
        List<CuratorEvent> answers = PipelinedReads.data(client, at, within(at.size()));
        Map<String, byte[]> out = new LinkedHashMap<>();
        for (int i = 0; i < rels.size(); i++) {
            CuratorEvent e = answers.get(i);
            if (!PipelinedReads.missing(e, at.get(i))) out.put(rels.get(i), e.getData() == null ? new byte[0] : e.getData());
        }
        return out;
    }

    /**
     * Moves each sequential parent's {@code cversion} past the highest number restored under it (a child made and
     * deleted, in transactions), so that no later push or history node takes a restored one's name (decision 39 item 4).
     *
     * @return by parent (relative path), the highest number restored under it
     */
    private Map<String, Long> moveSequencesOn(BackupDocument doc) throws Exception {
        Map<String, Long> highest = new TreeMap<>();
        for (BackupDocument.Node n : doc.nodes()) {
            String p = n.path();
            int cut = p.lastIndexOf('/');
            String parent = p.substring(0, cut), name = p.substring(cut + 1);
            long seq = -1;
            if (parent.equals("/pushes") && name.startsWith(ZkPaths.PUSH_PREFIX)) seq = ZkPaths.pushSeq(name);
            else if (parent.startsWith("/history/") && depth(parent) == 2 && name.startsWith(ZkPaths.HISTORY_PREFIX)) seq = ZkPaths.historySeq(name);
            if (seq >= 0) highest.merge(parent, seq, Math::max);
        }
        for (Map.Entry<String, Long> e : highest.entrySet()) {
            String parent = paths.root() + e.getKey(), bump = parent + "/" + BUMP;
            while (true) {
                Stat st = client.checkExists().forPath(parent);
                long missing = e.getValue() + 1 - st.getCversion();
                if (missing <= 0) break;
                List<CuratorOp> ops = new ArrayList<>();
                for (long i = 0; i < Math.min(TRANSACTION_OPS / 2, (missing + 1) / 2); i++) {
                    ops.add(client.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(bump, new byte[0]));
                    ops.add(client.transactionOp().delete().forPath(bump));
                }
                client.transaction().forOperations(ops);
            }
        }
        return highest;
    }
}
