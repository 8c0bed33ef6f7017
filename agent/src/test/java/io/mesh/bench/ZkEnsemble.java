package io.mesh.bench;

import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Collectors;

/**
 * A real 3-server ZooKeeper ensemble (Curator's TestingCluster: three QuorumPeers on loopback) in its own JVM, for
 * the benches (no limit of connections per client address: every simulated host connects from 127.0.0.1). Writes "all=host:port,..." and "s0=".."s2=" to the file given, and runs until its stdin closes.
 */
public final class ZkEnsemble {
    public static void main(String[] args) throws Exception {
        Path out = Path.of(args[0]);
        // Every bench client connects from 127.0.0.1: lift ZooKeeper's default of 60 connections per address.
        java.util.List<InstanceSpec> specs = new java.util.ArrayList<>();
        for (int id = 1; id <= 3; id++) specs.add(new InstanceSpec(null, -1, -1, -1, true, id, -1, 0));
        try (TestingCluster cluster = new TestingCluster(specs)) {
            cluster.start();
            StringBuilder sb = new StringBuilder("all=" + cluster.getConnectString() + "\n");
            int i = 0;
            for (InstanceSpec s : cluster.getInstances()) sb.append("s").append(i++).append("=").append(s.getConnectString()).append('\n');
            Path tmp = Path.of(out + ".tmp");
            Files.writeString(tmp, sb.toString());
            Files.move(tmp, out, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            System.err.println("[ensemble] " + cluster.getInstances().stream().map(InstanceSpec::getConnectString).collect(Collectors.joining(",")));
            while (System.in.read() >= 0) { /* until stdin closes */ }
        }
    }

    /** Reads a connect file written by {@link #main}. */
    public static java.util.Properties read(String file) throws Exception {
        java.util.Properties p = new java.util.Properties();
        try (var r = Files.newBufferedReader(Path.of(file))) { p.load(r); }
        return p;
    }
}
