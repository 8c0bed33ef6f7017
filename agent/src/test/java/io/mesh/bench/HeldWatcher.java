package io.mesh.bench;

import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.time.Instant;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * B4's watcher, in its own JVM: a plain ZooKeeper client on one server. On "arm PATH" (stdin) it sets an exists
 * watch on PATH and answers "armed"; when the node is created it prints "seen EPOCH_MICROS". Ends when stdin closes.
 */
public final class HeldWatcher {
    public static void main(String[] args) throws Exception {
        PrintStream out = System.out;
        CountDownLatch up = new CountDownLatch(1);
        ZooKeeper z = new ZooKeeper(args[0], 15_000, e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) up.countDown();
        });
        if (!up.await(30, TimeUnit.SECONDS)) throw new IllegalStateException("no ZooKeeper session");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            if (!line.startsWith("arm ")) continue;
            String path = line.substring(4);
            Object stat = z.exists(path, e -> {
                if (e.getType() == Watcher.Event.EventType.NodeCreated) {
                    Instant now = Instant.now();
                    synchronized (out) {
                        out.println("seen " + (now.getEpochSecond() * 1_000_000L + now.getNano() / 1000));
                        out.flush();
                    }
                }
            });
            synchronized (out) {
                out.println(stat == null ? "armed" : "exists");
                out.flush();
            }
        }
        z.close();
    }
}
