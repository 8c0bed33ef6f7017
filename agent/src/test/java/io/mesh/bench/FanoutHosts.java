package io.mesh.bench;

import io.mesh.agent.AgentConfig;
import io.mesh.agent.AgentDaemon;
import io.mesh.curator.MeshZk;
import io.mesh.manifest.Durations;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * B5's SIMULATED hosts, many per JVM: each is the real {@link AgentDaemon} with its own Curator client (its own
 * ZooKeeper session, made by the product's {@link MeshZk}) and its own state dir, applying to a
 * {@link RecordingRuntime} instead of Docker. Prints "ready N" once every daemon started; closes them all when stdin
 * closes.
 *
 * <p>Args: --zk CONNECT --root /zk-root --from 0 --count 250 --state DIR [--reconcile 10m]
 */
public final class FanoutHosts {
    public static void main(String[] argv) {
        try {
            run(argv);
        } catch (Throwable e) {
            e.printStackTrace();
            System.exit(1);
        }
    }

    private static void run(String[] argv) throws Exception {
        Map<String, String> a = Bench.args(argv);
        String zk = a.get("zk");
        ZkPaths paths = new ZkPaths(a.get("root"));
        int from = Integer.parseInt(a.get("from")), count = Integer.parseInt(a.get("count"));
        Path state = Path.of(a.get("state"));
        Duration reconcile = Durations.parse(a.getOrDefault("reconcile", "10m"));
        List<CuratorFramework> clients = Collections.synchronizedList(new ArrayList<>());
        List<AgentDaemon> daemons = Collections.synchronizedList(new ArrayList<>());
        ExecutorService starter = Executors.newFixedThreadPool(4);
        List<Future<?>> fs = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String host = String.format("sim-%04d", from + i);
            fs.add(starter.submit(() -> {
                CuratorFramework c = MeshZk.connect(zk, Duration.ofSeconds(120));
                clients.add(c);
                Path dir = Files.createDirectories(state.resolve(host));
                AgentConfig config = new AgentConfig(host, paths, dir, reconcile, Duration.ofSeconds(2), Duration.ofMinutes(10),
                        io.mesh.testing.TestPolicy.HOST_NETWORK); // the manifest's containers take the default network, the host's
                AgentDaemon d = new AgentDaemon(config, c, new RecordingRuntime(), ProcessRef.current("mesh-agent run (simulated host)"));
                d.start();
                daemons.add(d);
                return null;
            }));
        }
        for (Future<?> f : fs) f.get(5, TimeUnit.MINUTES);
        starter.shutdown();
        System.out.println("ready " + daemons.size());
        System.out.flush();
        while (System.in.read() >= 0) { /* until stdin closes */ }
        ExecutorService stopper = Executors.newFixedThreadPool(8);
        for (int i = 0; i < daemons.size(); i++) {
            AgentDaemon d = daemons.get(i);
            CuratorFramework c = clients.get(i);
            stopper.submit(() -> {
                d.close();
                c.close();
            });
        }
        stopper.shutdown();
        stopper.awaitTermination(60, TimeUnit.SECONDS);
        System.exit(0);
    }
}
