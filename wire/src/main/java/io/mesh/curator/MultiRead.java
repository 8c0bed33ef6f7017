package io.mesh.curator;

import io.mesh.wire.ZkPaths;
import org.apache.curator.CuratorZookeeperClient;
import org.apache.curator.RetryLoop;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;

import java.util.List;

/**
 * Reads of several nodes in one round trip: ZooKeeper's {@code multi} of reads (3.6 or later on the servers), in which
 * a node that is not there answers an error result, not an exception. Made through Curator's retry loop, as Curator's
 * own reads are; paths are absolute (mesh uses no Curator namespace, {@link ZkPaths}).
 */
public final class MultiRead {
    private MultiRead() {}

    /**
     * @param client a started Curator client
     * @param reads  {@link Op#getData} and {@link Op#getChildren} operations
     * @return one result per read, in their order
     * @throws Exception from ZooKeeper, as Curator's retry loop gives it up
     */
    public static List<OpResult> of(CuratorFramework client, List<Op> reads) throws Exception {
        CuratorZookeeperClient zk = client.getZookeeperClient();
        return RetryLoop.callWithRetry(zk, () -> zk.getZooKeeper().multi(reads));
    }

    /**
     * @param result one read's result
     * @param path   the node read, for the exception
     * @return true when the read found no node there; false when it read the node
     * @throws KeeperException the read's error, when it failed for another reason
     */
    public static boolean missing(OpResult result, String path) throws KeeperException {
        if (!(result instanceof OpResult.ErrorResult e)) return false;
        if (e.getErr() == KeeperException.Code.NONODE.intValue()) return true;
        KeeperException.Code code = KeeperException.Code.get(e.getErr());
        throw KeeperException.create(code == null ? KeeperException.Code.SYSTEMERROR : code, path);
    }
}
