package io.mesh.testing;

import org.apache.zookeeper.server.quorum.QuorumPeerMain;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A real 3-server ZooKeeper ensemble for fault tests: three {@link QuorumPeerMain} server <em>processes</em> (one JVM
 * each, from the test classpath) on free loopback ports, each with its own {@code zoo.cfg} and data directory in a
 * temporary directory. The tests can find the leader (the {@code srvr} four-letter word), {@code kill -9} a server,
 * freeze it with SIGSTOP, resume it with SIGCONT and start it again. Every wait is bounded; {@link #close()} stops
 * every server, and the servers halt by themselves if the test JVM dies ({@link Orphanless}).
 *
 * <p>{@link #shared()} is one ensemble for the whole test JVM (started on first use, stopped when the JVM exits):
 * tests that hurt it call {@link #heal()} afterwards.
 */
public final class ZkEnsemble implements AutoCloseable {
    /** Servers in the ensemble. */
    public static final int SIZE = 3;
    private static ZkEnsemble shared;

    private final Path dir;
    private final int[] clientPorts = new int[SIZE + 1];
    private final ChildJvm[] servers = new ChildJvm[SIZE + 1];
    private final boolean[] paused = new boolean[SIZE + 1];

    /**
     * Starts three servers and waits for a quorum.
     *
     * @throws IOException when a server cannot be started or no quorum forms within a minute
     */
    public ZkEnsemble() throws IOException {
        dir = Files.createTempDirectory("mesh-zk-ensemble");
        int[] quorum = new int[SIZE + 1];
        int[] election = new int[SIZE + 1];
        for (int i = 1; i <= SIZE; i++) {
            clientPorts[i] = freePort();
            quorum[i] = freePort();
            election[i] = freePort();
        }
        StringBuilder members = new StringBuilder();
        for (int i = 1; i <= SIZE; i++) members.append("server.").append(i).append("=127.0.0.1:").append(quorum[i]).append(':').append(election[i]).append('\n');
        for (int i = 1; i <= SIZE; i++) {
            Path data = dir.resolve("zk" + i);
            Files.createDirectories(data);
            Files.writeString(data.resolve("myid"), i + "\n");
            Files.writeString(dir.resolve("zoo" + i + ".cfg"), String.join("\n",
                    "tickTime=1000", "initLimit=10", "syncLimit=5",
                    "dataDir=" + data,
                    "clientPort=" + clientPorts[i], "clientPortAddress=127.0.0.1",
                    "maxClientCnxns=200",
                    "maxSessionTimeout=30000",
                    "admin.enableServer=false",
                    "4lw.commands.whitelist=srvr,ruok,mntr",
                    // a test fixture: the transaction log need not reach the disk before an answer
                    "forceSync=no",
                    members.toString()));
        }
        try {
            for (int i = 1; i <= SIZE; i++) start(i);
            awaitQuorum(Duration.ofSeconds(60));
        } catch (RuntimeException | IOException e) {
            close();
            throw e;
        }
    }

    /**
     * @return the ensemble shared by every test of this JVM, started on first use and stopped when the JVM exits
     * @throws IOException when it cannot be started
     */
    public static synchronized ZkEnsemble shared() throws IOException {
        if (shared == null) {
            shared = new ZkEnsemble();
            ZkEnsemble e = shared;
            Runtime.getRuntime().addShutdownHook(new Thread(e::close, "zk-ensemble-stop"));
        }
        return shared;
    }

    private static int freePort() throws IOException {
        return TestZk.freePort();
    }

    /** @return the connect string naming every server, such as {@code 127.0.0.1:41001,127.0.0.1:41002,127.0.0.1:41003} */
    public String connect() {
        List<String> all = new ArrayList<>();
        for (int i = 1; i <= SIZE; i++) all.add(connect(i));
        return String.join(",", all);
    }

    /**
     * @param server 1..3
     * @return the connect string of that server alone
     */
    public String connect(int server) { return "127.0.0.1:" + clientPorts[server]; }

    /** @return the directory holding the configuration, data and logs */
    public Path dir() { return dir; }

    /**
     * @param server 1..3
     * @return that server's data directory (its transaction log is under {@code version-2})
     */
    public Path dataDir(int server) { return dir.resolve("zk" + server); }

    /**
     * Starts a server that is not running (again, with its data).
     *
     * @param server 1..3
     * @throws IOException when the JVM cannot be started
     */
    public synchronized void start(int server) throws IOException {
        if (servers[server] != null && servers[server].isAlive()) return;
        servers[server] = ChildJvm.start("zk" + server, dir, "160m", QuorumPeerMain.class.getName(),
                List.of(dir.resolve("zoo" + server + ".cfg").toString()));
        paused[server] = false;
    }

    /**
     * {@code kill -9} of one server.
     *
     * @param server 1..3
     */
    public synchronized void kill(int server) {
        if (servers[server] != null) servers[server].kill9();
        paused[server] = false;
    }

    /**
     * SIGSTOP of one server: it keeps its sockets but answers nothing.
     *
     * @param server 1..3
     */
    public synchronized void pause(int server) {
        servers[server].pause();
        paused[server] = true;
    }

    /**
     * SIGCONT of a paused server.
     *
     * @param server 1..3
     */
    public synchronized void resume(int server) {
        servers[server].resume();
        paused[server] = false;
    }

    /** @return true when the server's process runs (paused or not) */
    public synchronized boolean alive(int server) { return servers[server] != null && servers[server].isAlive(); }

    /** @return the server's pid */
    public synchronized long pid(int server) { return servers[server].pid(); }

    /**
     * Asks a server for its mode with the {@code srvr} four-letter word (bounded: 2 s).
     *
     * @param server 1..3
     * @return {@code leader}, {@code follower}, or {@code null} when it does not serve
     */
    public String mode(int server) {
        String out = fourLetterWord(server, "srvr");
        for (String line : out.split("\n")) {
            if (line.startsWith("Mode: ")) return line.substring(6).strip();
        }
        return null;
    }

    /**
     * @param server 1..3
     * @param word   a whitelisted four-letter word ({@code srvr}, {@code ruok}, {@code mntr})
     * @return the answer, empty when the server does not answer within 2 s
     */
    public String fourLetterWord(int server, String word) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", clientPorts[server]), 1000);
            s.setSoTimeout(2000);
            OutputStream out = s.getOutputStream();
            out.write(word.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    /** @return the leader's number (1..3), or -1 when no server says it leads */
    public int leader() {
        for (int i = 1; i <= SIZE; i++) {
            if (alive(i) && !paused[i] && "leader".equals(mode(i))) return i;
        }
        return -1;
    }

    /**
     * @return a follower's number, or -1
     */
    public int follower() {
        for (int i = 1; i <= SIZE; i++) {
            if (alive(i) && !paused[i] && "follower".equals(mode(i))) return i;
        }
        return -1;
    }

    /**
     * Waits until every running, unpaused server serves and exactly one leads.
     *
     * @param within bound
     * @throws IllegalStateException naming each server's mode when that does not happen in time
     */
    public void awaitQuorum(Duration within) {
        long end = System.nanoTime() + within.toNanos();
        while (true) {
            int leaders = 0, serving = 0, expected = 0;
            StringBuilder modes = new StringBuilder();
            for (int i = 1; i <= SIZE; i++) {
                boolean running = alive(i) && !paused[i];
                String m = running ? mode(i) : null;
                if (running) expected++;
                if (m != null) serving++;
                if ("leader".equals(m)) leaders++;
                modes.append(" zk").append(i).append('=').append(!alive(i) ? "down" : paused[i] ? "paused" : m == null ? "not-serving" : m);
            }
            if (leaders == 1 && serving == expected && serving * 2 > SIZE) return;
            if (System.nanoTime() > end) {
                throw new IllegalStateException("no ZooKeeper quorum within " + within.toSeconds() + "s:" + modes + " (logs in " + dir + ")"
                        + lastWords());
            }
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }
    }

    /** @return each dead server's last error lines (its log is deleted with the directory), or empty */
    private synchronized String lastWords() {
        StringBuilder b = new StringBuilder();
        for (int i = 1; i <= SIZE; i++) {
            if (servers[i] == null || servers[i].isAlive()) continue;
            List<String> lines = servers[i].output().lines()
                    .filter(l -> l.contains("ERROR") || l.contains("Exception") || l.contains("xit")).collect(Collectors.toList());
            b.append("\nzk").append(i).append("'s last error lines:");
            lines.subList(Math.max(0, lines.size() - 8), lines.size()).forEach(l -> b.append("\n  ").append(l));
        }
        return b.toString();
    }

    /**
     * Resumes every paused server, starts every dead one and waits for the full ensemble to serve.
     *
     * @throws IOException when a server cannot be started
     */
    public void heal() throws IOException {
        for (int i = 1; i <= SIZE; i++) {
            if (alive(i) && paused[i]) resume(i);
            if (!alive(i)) start(i);
        }
        awaitQuorum(Duration.ofSeconds(60));
    }

    /** Stops every server (bounded) and deletes the directory. */
    @Override
    public synchronized void close() {
        for (int i = 1; i <= SIZE; i++) {
            if (servers[i] != null) servers[i].close();
        }
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).collect(Collectors.toList())) Files.deleteIfExists(p);
        } catch (IOException ignored) {
            // best effort: a temporary directory
        }
    }
}
