package io.mesh.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.mesh.curator.MeshZk;
import io.mesh.wire.ZkPaths;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * B5's floor, many hosts per JVM, laid out as {@link FanoutHosts}: each host a plain ZooKeeper client (its own
 * session) doing exactly the ZooKeeper operations an apply of a module needs and nothing else: a watch on the
 * desired nodes (one persistent recursive watch, as the agent's cache has), then per changed module the desired
 * node's read, the module lock (create ephemeral-sequential + getChildren; its parent persists, decision 5), and the
 * report written with the lock's delete in one transaction. Asynchronous calls: no thread waits on a round trip.
 * Prints "ready N" once every host watches; closes them all when stdin closes.
 *
 * <p>Args: --zk CONNECT --root /zk-root --from 0 --count 250 --modules 10
 */
public final class FloorHosts {
    private static final ObjectMapper JSON = new ObjectMapper();

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = Bench.args(argv);
        ZkPaths paths = new ZkPaths(a.get("root"));
        int from = Integer.parseInt(a.get("from")), count = Integer.parseInt(a.get("count"));
        int modules = Integer.parseInt(a.getOrDefault("modules", "10"));
        List<ZooKeeper> hosts = java.util.Collections.synchronizedList(new ArrayList<>());
        java.util.concurrent.ExecutorService starter = java.util.concurrent.Executors.newFixedThreadPool(8);
        List<java.util.concurrent.Future<?>> fs = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String host = String.format("floor-%04d", from + i);
            fs.add(starter.submit(() -> hosts.add(start(a.get("zk"), paths, host, modules))));
        }
        for (var f : fs) f.get(5, TimeUnit.MINUTES);
        starter.shutdown();
        System.out.println("ready " + hosts.size());
        System.out.flush();
        while (System.in.read() >= 0) { /* until stdin closes */ }
        for (ZooKeeper z : hosts) z.close(1000);
        System.exit(0);
    }

    /** One host: its session, its report and lock parents (set up, not measured), then its watch. */
    private static ZooKeeper start(String connect, ZkPaths paths, String host, int modules) throws Exception {
        CountDownLatch up = new CountDownLatch(1);
        ZooKeeper[] self = new ZooKeeper[1];
        ZooKeeper z = new ZooKeeper(connect, (int) MeshZk.SESSION_TIMEOUT.toMillis(), e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) up.countDown();
        });
        self[0] = z;
        if (!up.await(120, TimeUnit.SECONDS)) throw new IllegalStateException("no ZooKeeper session for " + host);
        for (int m = 0; m < modules; m++) {
            String module = "fan" + m;
            mkdirs(z, paths.report(host, module));
            mkdirs(z, paths.lock(module, host));
        }
        mkdirs(z, paths.desired());
        z.addWatch(paths.desired(), e -> changed(self[0], paths, host, e), AddWatchMode.PERSISTENT_RECURSIVE);
        return z;
    }

    private static void changed(ZooKeeper z, ZkPaths paths, String host, WatchedEvent e) {
        if (e.getType() != Watcher.Event.EventType.NodeDataChanged && e.getType() != Watcher.Event.EventType.NodeCreated) return;
        String path = e.getPath();
        String module = path.substring(path.lastIndexOf('/') + 1);
        String lockDir = paths.lock(module, host), report = paths.report(host, module);
        z.getData(path, false, (rc, p, ctx, data, stat) -> {
            if (rc != 0 || data == null) return;
            String push;
            try {
                JsonNode d = JSON.readTree(data);
                push = d.path("push").asText();
            } catch (Exception ex) {
                return;
            }
            z.create(lockDir + "/lock-", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL_SEQUENTIAL, (rc2, p2, c2, lock) -> {
                if (rc2 != 0) return;
                z.getChildren(lockDir, false, (rc3, p3, c3, children) -> {
                    if (rc3 != 0) return;
                    byte[] r = ("{\"host\":\"" + host + "\",\"module\":\"" + module + "\",\"push\":\"" + push + "\",\"outcome\":\"applied\"}")
                            .getBytes(StandardCharsets.UTF_8);
                    z.multi(List.of(Op.setData(report, r, -1), Op.delete(lock, -1)), (rc4, p4, c4, results) -> { }, null);
                }, null);
            }, null);
        }, null);
    }

    private static void mkdirs(ZooKeeper z, String path) throws Exception {
        StringBuilder p = new StringBuilder();
        for (String part : path.substring(1).split("/")) {
            p.append('/').append(part);
            try {
                z.create(p.toString(), new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            } catch (KeeperException.NodeExistsException ignored) {
                // made by another host
            }
        }
    }
}
