package io.mesh.wire;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

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
    /**
     * @param record the child's record
     * @param stat   its stat at the read
     */
    public record Child(RolloutHostRecord record, Stat stat) {}

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
        Map<String, Child> children = new TreeMap<>();
        for (String host : names) {
            ZkNode c = ZkNode.read(client, paths.rolloutHost(module, host));
            RolloutHostRecord r = c == null ? null : c.as(RolloutHostRecord.class);
            if (r != null && host.equals(r.host())) children.put(host, new Child(r, c.stat()));
        }
        return new RolloutNodes(node.as(RolloutRecord.class), node.stat(), Collections.unmodifiableMap(children));
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
