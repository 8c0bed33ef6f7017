package io.mesh.bench;

import io.mesh.curator.MeshZk;
import io.mesh.section.ModuleLock;
import io.mesh.wire.LockHolder;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * B3: module-lock acquire+release per second, 1 and 8 contending clients (each its own ZooKeeper session), mesh's
 * {@link ModuleLock} (Curator InterProcessMutex) against the raw ZooKeeper operations a lock needs (create
 * ephemeral-sequential, getChildren, a watch on the predecessor when not first, delete) with the plain ZooKeeper
 * client, on the same 3-server ensemble; client i talks to server i mod 3 on both sides. Phases alternate raw/mesh.
 *
 * <p>Args: --zk-file FILE --results FILE [--seconds 5] [--phases 2]
 */
public final class LockBench {
    public static void main(String[] argv) throws Exception {
        Map<String, String> a = Bench.args(argv);
        Properties zk = ZkEnsemble.read(a.get("zk-file"));
        Path results = Path.of(a.get("results"));
        int seconds = Integer.parseInt(a.getOrDefault("seconds", "5"));
        int phases = Integer.parseInt(a.getOrDefault("phases", "2"));
        String tag = String.format("%06x", ThreadLocalRandom.current().nextInt(1 << 24));
        ZkPaths paths = new ZkPaths("/bench-lock-" + tag);
        Map<String, Object> out = new LinkedHashMap<>();
        for (int clients : new int[] {1, 8}) {
            long rawOps = 0, meshOps = 0;
            double rawSecs = 0, meshSecs = 0;
            for (int p = 0; p < phases; p++) {
                long[] r = raw(zk, clients, seconds, "/bench-rawlock-" + tag + "-" + clients);
                rawOps += r[0];
                rawSecs += r[1] / 1e9;
                long[] m = mesh(zk, clients, seconds, paths, "bench-lock-" + clients);
                meshOps += m[0];
                meshSecs += m[1] / 1e9;
                Bench.log("B3", clients + " client(s), phase " + (p + 1) + ": raw " + Bench.f(r[0] / (r[1] / 1e9)) + "/s, mesh "
                        + Bench.f(m[0] / (m[1] / 1e9)) + "/s");
            }
            double rawRate = rawOps / rawSecs, meshRate = meshOps / meshSecs;
            out.put("b3.c" + clients + ".raw_per_s", rawRate);
            out.put("b3.c" + clients + ".mesh_per_s", meshRate);
            out.put("b3.c" + clients + ".ratio", meshRate / rawRate);
        }
        out.put("b3.seconds_per_phase", seconds);
        out.put("b3.phases", phases);
        Bench.result(results, out);
    }

    private static String server(Properties zk, int i) { return zk.getProperty("s" + (i % 3)); }

    /** @return {acquisitions, elapsed nanos} */
    private static long[] mesh(Properties zk, int clients, int seconds, ZkPaths paths, String module) throws Exception {
        List<CuratorFramework> cs = new ArrayList<>();
        try {
            for (int i = 0; i < clients; i++) cs.add(MeshZk.connect(server(zk, i), Duration.ofSeconds(30)));
            ProcessRef me = ProcessRef.current("mesh bench");
            return loop(clients, seconds, i -> {
                ModuleLock lock = new ModuleLock(cs.get(i), paths, module, "bench-host", me, LockHolder.APPLY);
                if (!lock.acquire(Duration.ofSeconds(30))) throw new IllegalStateException("lock not acquired in 30s");
                lock.release();
            });
        } finally {
            cs.forEach(CuratorFramework::close);
        }
    }

    /** @return {acquisitions, elapsed nanos} */
    private static long[] raw(Properties zk, int clients, int seconds, String lockPath) throws Exception {
        List<ZooKeeper> zs = new ArrayList<>();
        try {
            for (int i = 0; i < clients; i++) {
                CountDownLatch up = new CountDownLatch(1);
                ZooKeeper z = new ZooKeeper(server(zk, i), (int) MeshZk.SESSION_TIMEOUT.toMillis(), e -> {
                    if (e.getState() == Watcher.Event.KeeperState.SyncConnected) up.countDown();
                });
                if (!up.await(30, TimeUnit.SECONDS)) throw new IllegalStateException("no ZooKeeper session");
                zs.add(z);
            }
            try {
                zs.get(0).create(lockPath, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            } catch (KeeperException.NodeExistsException ignored) {
                // made by an earlier phase
            }
            byte[] data = "{\"host\":\"bench-host\",\"purpose\":\"apply\"}".getBytes(StandardCharsets.UTF_8);
            return loop(clients, seconds, i -> {
                ZooKeeper z = zs.get(i);
                String mine = z.create(lockPath + "/lock-", data, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL_SEQUENTIAL);
                String myName = mine.substring(lockPath.length() + 1);
                while (true) {
                    List<String> children = z.getChildren(lockPath, false);
                    Collections.sort(children);
                    int at = children.indexOf(myName);
                    if (at == 0) break;
                    CountDownLatch gone = new CountDownLatch(1);
                    if (z.exists(lockPath + "/" + children.get(at - 1), e -> gone.countDown()) != null) {
                        if (!gone.await(30, TimeUnit.SECONDS)) throw new IllegalStateException("raw lock not acquired in 30s");
                    }
                }
                z.delete(mine, -1);
            });
        } finally {
            for (ZooKeeper z : zs) z.close();
        }
    }

    interface Step { void run(int client) throws Exception; }

    private static long[] loop(int clients, int seconds, Step step) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong count = new AtomicLong();
        AtomicBoolean measuring = new AtomicBoolean();
        List<Thread> ts = new ArrayList<>();
        List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
        for (int i = 0; i < clients; i++) {
            final int c = i;
            Thread t = new Thread(() -> {
                try {
                    while (!stop.get()) {
                        step.run(c);
                        if (measuring.get()) count.incrementAndGet();
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
            }, "lock-bench-" + i);
            ts.add(t);
            t.start();
        }
        Thread.sleep(1000); // warm-up
        long c0 = count.get();
        measuring.set(true);
        long t0 = System.nanoTime();
        Thread.sleep(seconds * 1000L);
        long n = count.get() - c0;
        long el = System.nanoTime() - t0;
        stop.set(true);
        for (Thread t : ts) t.join(60_000);
        if (!errors.isEmpty()) throw new IllegalStateException("lock bench failed", errors.get(0));
        return new long[] {n, el};
    }
}
