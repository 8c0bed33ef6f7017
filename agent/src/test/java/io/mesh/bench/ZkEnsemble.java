package io.mesh.bench;

import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A real 3-server ZooKeeper ensemble (Curator's TestingCluster: three QuorumPeers on loopback) in its own JVM, for
 * the benches (no limit of connections per client address: every simulated host connects from 127.0.0.1). Writes
 * "all=host:port,...", "s0=".."s2=" (each server's client address) and "d0=".."d2=" (each server's data directory,
 * whose {@code version-2} holds its transaction log and snapshots) to the file given, and runs until its stdin closes.
 * A line {@code kill I} or {@code restart I} on stdin stops or restarts server {@code sI}; it answers
 * {@code killed I} or {@code restarted I} on stdout once done (B11 times a follower's catch-up with them).
 */
public final class ZkEnsemble {
    public static void main(String[] args) throws Exception {
        Path out = Path.of(args[0]);
        // Every bench client connects from 127.0.0.1: lift ZooKeeper's default of 60 connections per address.
        java.util.List<InstanceSpec> specs = new java.util.ArrayList<>();
        for (int id = 1; id <= 3; id++) specs.add(new InstanceSpec(null, -1, -1, -1, true, id, -1, 0));
        try (TestingCluster cluster = new TestingCluster(specs)) {
            cluster.start();
            List<InstanceSpec> servers = List.copyOf(cluster.getInstances());
            StringBuilder sb = new StringBuilder("all=" + cluster.getConnectString() + "\n");
            for (int i = 0; i < servers.size(); i++) {
                sb.append("s").append(i).append("=").append(servers.get(i).getConnectString()).append('\n');
                sb.append("d").append(i).append("=").append(servers.get(i).getDataDirectory().getAbsolutePath()).append('\n');
            }
            Path tmp = Path.of(out + ".tmp");
            Files.writeString(tmp, sb.toString());
            Files.move(tmp, out, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            System.err.println("[ensemble] " + servers.stream().map(InstanceSpec::getConnectString).collect(Collectors.joining(",")));
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line; (line = in.readLine()) != null; ) { // until stdin closes
                String[] w = line.trim().split("\\s+");
                if (w.length != 2 || !w[1].matches("[0-2]")) continue;
                InstanceSpec s = servers.get(Integer.parseInt(w[1]));
                switch (w[0]) {
                    case "kill" -> { cluster.killServer(s); System.out.println("killed " + w[1]); }
                    case "restart" -> { cluster.restartServer(s); System.out.println("restarted " + w[1]); }
                    default -> { continue; }
                }
                System.out.flush();
            }
        }
    }

    /** Reads a connect file written by {@link #main}. */
    public static java.util.Properties read(String file) throws Exception {
        java.util.Properties p = new java.util.Properties();
        try (var r = Files.newBufferedReader(Path.of(file))) { p.load(r); }
        return p;
    }
}
