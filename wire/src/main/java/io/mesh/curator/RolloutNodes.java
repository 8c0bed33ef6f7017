package io.mesh.curator;

import io.mesh.wire.Json;
import io.mesh.wire.RolloutHostRecord;
import io.mesh.wire.RolloutRecord;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A module's rollout as read from ZooKeeper (docs/decisions/0013-rollouts.md): {@code /mesh/rollouts/<module>} and its
 * hosts' children, each with the stat it was read at (what a write at the version read starts from), and the
 * {@link RolloutRecord#view} derived from them. Every reader of a rollout's progress reads it through here, so that it is
 * right also while the parent's folded lists lag (no coordinator up).
 *
 * @param parent     the rollout node's record; {@code null} when its data is not a rollout record
 * @param parentStat its stat
 * @param children   by host, each child's record (a child that does not parse is left out) and stat
 */
public record RolloutNodes(RolloutRecord parent, Stat parentStat, Map<String, Child> children) {
    /** How long the reads of a rollout's host nodes may take together before {@link #read} gives up. */
    static final Duration READ_TIMEOUT = Duration.ofSeconds(30);

    /**
     * @param record the child's record
     * @param stat   its stat at the read
     */
    public record Child(RolloutHostRecord record, Stat stat) {}

    /**
     * The one rule for which hosts' nodes a rollout is derived from: a host's node counts only when its record parses and
     * names the host it is the node of (a node whose record names another host is ignored, so a host cannot speak for
     * another by writing the other's name into its own node; decision 13). Every reader applies it: {@link #read}, the
     * agents' cached copy, the coordinators' push status.
     *
     * @param host   the host the node is the child of ({@code /mesh/rollouts/<module>/<host>})
     * @param record its parsed record, {@code null} when it did not parse
     * @return whether the node takes part in the rollout's view
     */
    public static boolean counts(String host, RolloutHostRecord record) {
        return record != null && host.equals(record.host());
    }

    /**
     * Reads the rollout node, then its children (a child deleted between the two reads is left out).
     *
     * @param client a started Curator client
     * @param paths  the layout
     * @param module module name
     * @return the nodes; {@code null} when the module has no rollout node
     * @throws Exception from ZooKeeper, other than a node's absence
     */
    public static RolloutNodes read(CuratorFramework client, ZkPaths paths, String module) throws Exception {
        ZkNode node = ZkNode.read(client, paths.rollout(module));
        if (node == null) return null;
        List<String> names;
        try {
            names = client.getChildren().forPath(paths.rollout(module));
        } catch (KeeperException.NoNodeException e) {
            return null;
        }
        // All children at once (asynchronous reads, answered in order on one connection): a move checked at the versions
        // read fails when any of them changed meanwhile, so the time the reads take is the time a wave's moves collide in.
        Map<String, Child> children = new ConcurrentSkipListMap<>();
        CountDownLatch answered = new CountDownLatch(names.size());
        AtomicReference<KeeperException> failed = new AtomicReference<>();
        for (String host : names) {
            client.getData().inBackground((c, event) -> {
                try {
                    KeeperException.Code code = KeeperException.Code.get(event.getResultCode());
                    if (code == KeeperException.Code.OK) {
                        RolloutHostRecord r = Json.readOrNull(event.getData(), RolloutHostRecord.class);
                        if (counts(host, r)) children.put(host, new Child(r, event.getStat()));
                    } else if (code != KeeperException.Code.NONODE) {
                        failed.compareAndSet(null, KeeperException.create(code, event.getPath()));
                    }
                } finally {
                    answered.countDown();
                }
            }).forPath(paths.rolloutHost(module, host));
        }
        if (!answered.await(READ_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new KeeperException.OperationTimeoutException();
        }
        if (failed.get() != null) throw failed.get();
        return new RolloutNodes(node.as(RolloutRecord.class), node.stat(), Collections.unmodifiableMap(new TreeMap<>(children)));
    }

    /**
     * @param client a started Curator client
     * @param paths  the layout
     * @param module module name
     * @return the module's rollout as derived from its nodes; {@code null} when it has none (or its node does not parse)
     * @throws Exception from ZooKeeper
     */
    public static RolloutRecord readView(CuratorFramework client, ZkPaths paths, String module) throws Exception {
        RolloutNodes n = read(client, paths, module);
        return n == null ? null : n.view();
    }

    /** @return the derived rollout; {@code null} when the parent does not parse */
    public RolloutRecord view() {
        return parent == null ? null : parent.view(children.values().stream().map(Child::record).toList());
    }
}
