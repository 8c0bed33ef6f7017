package io.mesh.fleet;

import com.github.dockerjava.api.model.Container;
import io.mesh.docker.Labels;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;

/**
 * The fleet history's nemesis: faults at random moments (seeded), each bounded and healed, on the real fleet of
 * {@code deploy/dev/fleet.sh}, in four lanes that run at once so that faults overlap each other and the operations:
 *
 * <ul>
 *   <li><b>signals</b>: SIGSTOP of an agent ({@code pause-agent}, at most two at once) or of a {@code mesh-agent window}
 *       process ({@code pause-window}) for longer than the ZooKeeper session (15 s, {@code MeshZk.SESSION_TIMEOUT}; there
 *       is no flag for it, so the pause is 18-21 s and the other lanes go on meanwhile), then SIGCONT; kill -9 of a window
 *       process ({@code kill-window}); three times in four the window process hit is one whose window is open (its held
 *       node published, or its step running), else any, maybe still starting or waiting for the lock;</li>
 *   <li><b>zookeeper</b>: one server killed with SIGKILL, the leader half of the time ({@code srvr}), started again
 *       after 2-5 s ({@code kill-zk}); or two killed, the quorum lost for 4-9 s and until the first is started again,
 *       then the second ({@code quorum-loss});</li>
 *   <li><b>agents</b>: kill -9 of an agent, {@code fleet.sh start-agent} after 1-4 s ({@code kill-agent}); once a
 *       run, started again with its clock five minutes ahead for the rest of the run ({@code kill-agent-clock});</li>
 *   <li><b>infra</b>: {@code fleet.sh restart-engine} ({@code restart-engine}: dockerd stopped, its containers with it,
 *       and started again, Docker's restart policies applying); kill -9 of a coordinator, started again after 2-4 s
 *       ({@code kill-coordinator}).</li>
 * </ul>
 *
 * <p>A host's agent has at most one fault at a time. A process is signalled only while its command line still names
 * its fleet role (as fleet.sh does), so a reused pid is never hit. Parts that need ZooKeeper to come back (an agent
 * waits for its node; a coordinator for its client) are not started while a quorum loss is under way, and a quorum
 * loss waits for those starts: fleet.sh runs one command at a time, and a start waiting for ZooKeeper while the
 * start of a ZooKeeper server waits for it would stall both.
 */
final class Nemesis {
    /** How long a pause lasts at least: past the 15 s ZooKeeper session of every mesh process. */
    static final long PAUSE_MIN_MS = 18_000;

    /** One fault, from injection to heal (epoch milliseconds). */
    static final class Fault {
        final int id;
        final String kind;
        final String target;
        final int host;          // 1..N for host faults, 0 otherwise
        final long pid;          // the process hit (0: none)
        final long from;
        volatile long to;
        /** for a quorum loss: when a quorum served again (the first server started again answered); else {@link #to} */
        volatile long back;
        volatile String note = "";

        Fault(int id, String kind, String target, int host, long pid, long from) {
            this.id = id;
            this.kind = kind;
            this.target = target;
            this.host = host;
            this.pid = pid;
            this.from = from;
            this.to = from;
        }

        boolean overlaps(long a, long b) { return from <= b && to >= a; }

        long millis() { return Math.max(0, to - from); }

        long back() { return back > 0 ? back : to; }

        @Override
        public String toString() {
            return String.format("#%d %s %s%s %s .. %s (%.1f s)%s", id, kind, target, pid > 0 ? " pid " + pid : "",
                    Instant.ofEpochMilli(from), Instant.ofEpochMilli(to), millis() / 1000.0, note.isEmpty() ? "" : ": " + note);
        }
    }

    /** A {@code mesh-agent window} process the workload started, as the nemesis sees it. */
    interface WindowProcess {
        long pid();
        int host();
        String module();
        boolean alive();
        /** marks it paused or not: the workload does not wait on a paused process */
        void paused(boolean p);
        boolean paused();
    }

    private final Fleet fleet;
    private final long seed;
    private final Supplier<List<? extends WindowProcess>> windows;
    private final int hosts;
    private final List<Fault> faults = new ArrayList<>();
    private final boolean[] agentBusy;
    private final ReentrantReadWriteLock zkGate = new ReentrantReadWriteLock(true);
    private final ScheduledExecutorService continuer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "nemesis-sigcont");
        t.setDaemon(true);
        return t;
    });
    private final List<Thread> lanes = new ArrayList<>();
    /** Whether an agent was started with its clock off in this run (once a run: {@code kill-agent-clock}). */
    private volatile boolean skewed;
    private final List<String> errors = new ArrayList<>();
    /** A process paused now: its pid, its host when it is a fleet agent (else 0), its fault, its window process. */
    private record Paused(long pid, int agentHost, Fault fault, WindowProcess window) {}

    private final List<Paused> paused = new ArrayList<>();
    private volatile long until;

    /**
     * @param fleet   the fleet
     * @param seed    the run's seed (each lane draws from its own Random made from it)
     * @param windows the window processes running now
     */
    Nemesis(Fleet fleet, long seed, Supplier<List<? extends WindowProcess>> windows) {
        this.fleet = fleet;
        this.seed = seed;
        this.windows = windows;
        this.hosts = fleet.hosts().size();
        this.agentBusy = new boolean[hosts + 1];
    }

    /** Starts the three lanes; they make faults until {@link #stop()} or {@code untilMillis}. */
    void start(long untilMillis) {
        this.until = untilMillis;
        lane("signals", 0x51, this::signalsFault);
        lane("zookeeper", 0x2c, this::zkFault);
        lane("agents", 0x3a, this::agentFault);
        lane("infra", 0x1f, this::infraFault);
    }

    /** Moves the end of injection (the run goes on until enough faults and operations were made). */
    void extend(long untilMillis) { this.until = untilMillis; }

    /** @return the faults so far (a copy) */
    List<Fault> faults() {
        synchronized (faults) {
            return List.copyOf(faults);
        }
    }

    /** @return faults by kind */
    Map<String, Integer> byKind() {
        Map<String, Integer> m = new TreeMap<>();
        for (Fault f : faults()) m.merge(f.kind, 1, Integer::sum);
        return m;
    }

    /** @return what went wrong in the nemesis itself (a fleet.sh command that failed), for the report */
    List<String> errors() {
        synchronized (errors) {
            return List.copyOf(errors);
        }
    }

    /**
     * Stops making faults: each lane finishes (and heals) the fault it is in, bounded; then every paused process is
     * continued. The caller heals the rest ({@link #healAll()}).
     */
    void stop() throws InterruptedException {
        until = 0;
        for (Thread t : lanes) t.join(TimeUnit.MINUTES.toMillis(4));
        for (Thread t : lanes) {
            if (t.isAlive()) {
                t.interrupt();
                t.join(10_000);
            }
        }
        continuer.shutdownNow();
        continueAll();
    }

    /** Heals whatever is still broken: every paused process continued, then {@code fleet.sh up 3} starts what is missing. */
    void healAll() throws IOException, InterruptedException {
        continueAll();
        if (!whole()) fleet.up();
    }

    /** @return true when every part of the fleet runs and answers (then {@code fleet.sh up} has nothing to do) */
    boolean whole() {
        for (int h = 1; h <= hosts; h++) {
            if (!cmdline(agentPid(h)).contains(agentMarker(h))) return false;
            try {
                fleet.docker("fleet-" + h).pingCmd().exec();
            } catch (RuntimeException e) {
                return false;
            }
        }
        if (!allServing()) return false;
        for (java.net.URI c : fleet.coordinators()) {
            try {
                java.net.HttpURLConnection u = (java.net.HttpURLConnection) c.resolve("/healthz").toURL().openConnection();
                u.setConnectTimeout(2_000);
                u.setReadTimeout(5_000);
                if (u.getResponseCode() != 200) return false;
            } catch (IOException e) {
                return false;
            }
        }
        return true;
    }

    // -----------------------------------------------------------------------------------------------------------

    private interface FaultMaker {
        void make(Random random) throws Exception;
    }

    private void lane(String name, long salt, FaultMaker maker) {
        Random random = new Random(seed * 31 + salt);
        Thread t = new Thread(() -> {
            while (System.currentTimeMillis() < until && !Thread.currentThread().isInterrupted()) {
                try {
                    Thread.sleep(1_500 + random.nextInt(3_000));
                    if (System.currentTimeMillis() >= until) break;
                    maker.make(random);
                } catch (InterruptedException e) {
                    return;
                } catch (Exception e) {
                    synchronized (errors) {
                        errors.add(name + " lane at " + Instant.now() + ": " + e);
                    }
                }
            }
        }, "nemesis-" + name);
        t.setDaemon(true);
        lanes.add(t);
        t.start();
    }

    private Fault begin(String kind, String target, int host, long pid) {
        synchronized (faults) {
            Fault f = new Fault(faults.size() + 1, kind, target, host, pid, System.currentTimeMillis());
            faults.add(f);
            return f;
        }
    }

    private static void end(Fault f) { f.to = System.currentTimeMillis(); }

    // ---- signals lane -------------------------------------------------------------------------------------------

    private void signalsFault(Random random) throws Exception {
        int dice = random.nextInt(100);
        long pauseMs = PAUSE_MIN_MS + random.nextInt(3_000);
        if (dice < 35) {
            if (pausedAgents() >= 2) return;
            int h = pickHost(random);
            if (h == 0) return;
            long pid = agentPid(h);
            Fault f = begin("pause-agent", "fleet-" + h + " agent", h, pid);
            if (!signal(pid, "STOP", agentMarker(h))) {
                f.note = "gone before the signal";
                end(f);
                release(h);
                return;
            }
            Paused p = new Paused(pid, h, f, null);
            synchronized (paused) {
                paused.add(p);
            }
            continuer.schedule(() -> resume(p), pauseMs, TimeUnit.MILLISECONDS);
        } else {
            boolean pause = dice < 65;
            if (pause && pausedWindows() >= 1) return;
            WindowProcess w = pickWindow(random, random.nextInt(100) < 75);
            if (w == null) return;
            boolean midStep = stepRuns(w);
            boolean open = midStep || windowOpen(w);
            Fault f = begin(pause ? "pause-window" : "kill-window", "fleet-" + w.host() + " window of " + w.module(), w.host(), w.pid());
            f.note = midStep ? "while its step ran" : open ? "window open, step not running" : "window not open yet";
            if (pause) {
                w.paused(true);
                if (!signalChild(w.pid(), "STOP")) {
                    w.paused(false);
                    f.note += "; exited before the signal";
                    end(f);
                    return;
                }
                Paused p = new Paused(w.pid(), 0, f, w);
                synchronized (paused) {
                    paused.add(p);
                }
                continuer.schedule(() -> resume(p), pauseMs, TimeUnit.MILLISECONDS);
            } else {
                ProcessHandle.of(w.pid()).ifPresent(ProcessHandle::destroyForcibly);
                end(f);
            }
        }
    }

    /** SIGCONT of a paused process; ends its fault. Once only. */
    private void resume(Paused p) {
        synchronized (paused) {
            if (!paused.remove(p)) return;
        }
        if (p.agentHost() > 0) signal(p.pid(), "CONT", agentMarker(p.agentHost()));
        else signalChild(p.pid(), "CONT");
        if (p.window() != null) p.window().paused(false);
        end(p.fault());
        if (p.agentHost() > 0) release(p.agentHost());
    }

    private int pausedAgents() {
        synchronized (paused) {
            return (int) paused.stream().filter(p -> p.agentHost() > 0).count();
        }
    }

    private int pausedWindows() {
        synchronized (paused) {
            return (int) paused.stream().filter(p -> p.agentHost() == 0).count();
        }
    }

    /**
     * A live window process; when {@code open}, preferring (for up to 8 s) one whose window is open: its held node
     * published, or its step running. Otherwise any live one: a process still starting or waiting for the lock.
     */
    private WindowProcess pickWindow(Random random, boolean open) throws InterruptedException {
        long end = System.currentTimeMillis() + (open ? 8_000 : 0);
        do {
            List<WindowProcess> live = new ArrayList<>();
            for (WindowProcess w : windows.get()) if (w.alive() && !w.paused()) live.add(w);
            if (!open && !live.isEmpty()) return live.get(random.nextInt(live.size()));
            List<WindowProcess> opened = live.stream().filter(w -> windowOpen(w) || stepRuns(w)).toList();
            if (!opened.isEmpty()) return opened.get(random.nextInt(opened.size()));
            if (System.currentTimeMillis() >= end) return live.isEmpty() ? null : live.get(random.nextInt(live.size()));
            Thread.sleep(250);
        } while (true);
    }

    /** @return true when the process has published its held node (its window is open) */
    private boolean windowOpen(WindowProcess w) {
        try {
            String path = fleet.paths().held("fleet-" + w.host(), w.module() + "-store");
            byte[] data = fleet.zk().getData().forPath(path);
            HeldRecord r = Json.read(data, HeldRecord.class);
            return r.by() != null && r.by().pid() == w.pid();
        } catch (Exception e) {
            return false;
        }
    }

    private boolean stepRuns(WindowProcess w) {
        try {
            List<Container> cs = fleet.docker("fleet-" + w.host()).listContainersCmd()
                    .withLabelFilter(Map.of(Labels.MODULE, w.module())).withShowAll(false).exec();
            return cs.stream().anyMatch(c -> c.getLabels() != null && c.getLabels().containsKey(Labels.WINDOW));
        } catch (RuntimeException e) {
            return false;
        }
    }

    // ---- ZooKeeper lane -----------------------------------------------------------------------------------------

    private void zkFault(Random random) throws Exception {
        if (!allServing()) return;
        int leader = leader();
        boolean quorum = random.nextInt(100) < 35;
        int first = leader > 0 && random.nextBoolean() ? leader : 1 + random.nextInt(3);
        if (!quorum) {
            long pid = zkPid(first);
            Fault f = begin("kill-zk", "zk-" + first + (first == leader ? " (leader)" : " (follower)"), 0, pid);
            signal(pid, "KILL", zkMarker(first));
            Thread.sleep(2_000 + random.nextInt(3_000));
            fleetSh(f, "start-zk", String.valueOf(first));
            end(f);
            return;
        }
        int second = first;
        while (second == first) second = 1 + random.nextInt(3);
        zkGate.writeLock().lockInterruptibly();
        try {
            long p1 = zkPid(first), p2 = zkPid(second);
            Fault f = begin("quorum-loss", "zk-" + first + (first == leader ? " (leader)" : "") + " and zk-" + second
                    + (second == leader ? " (leader)" : ""), 0, p1);
            signal(p1, "KILL", zkMarker(first));
            signal(p2, "KILL", zkMarker(second));
            Thread.sleep(4_000 + random.nextInt(5_000));
            fleetSh(f, "start-zk", String.valueOf(first));
            f.back = System.currentTimeMillis();
            fleetSh(f, "start-zk", String.valueOf(second));
            end(f);
        } finally {
            zkGate.writeLock().unlock();
        }
    }

    // ---- infra lane ---------------------------------------------------------------------------------------------

    private void agentFault(Random random) throws Exception {
        int h = pickHost(random);
        if (h == 0) return;
        try {
            long pid = agentPid(h);
            if (pid <= 0) return;
            // Once a run, the agent comes back with its clock five minutes ahead (a host whose time sync failed), and
            // stays so: holds, freezes and slot claims must be judged by ZooKeeper's clock, not the host's.
            boolean skew = !skewed && random.nextInt(100) < 30;
            if (skew) skewed = true;
            Fault f = begin(skew ? "kill-agent-clock" : "kill-agent", "fleet-" + h + " agent" + (skew ? " (clock +5m from now on)" : ""), h, pid);
            signal(pid, "KILL", agentMarker(h));
            Thread.sleep(1_000 + random.nextInt(3_000));
            zkGate.readLock().lockInterruptibly();
            try {
                if (skew) fleetSh(f, "start-agent", String.valueOf(h), "--clock", "+5m");
                else fleetSh(f, "start-agent", String.valueOf(h));
            } finally {
                zkGate.readLock().unlock();
            }
            end(f);
        } finally {
            release(h);
        }
    }

    private void infraFault(Random random) throws Exception {
        if (random.nextInt(100) < 60) {
            int h = 1 + random.nextInt(hosts);
            Fault f = begin("restart-engine", "fleet-" + h + " dockerd", h, readPid(Fleet.dockerdPidFile(h)));
            fleetSh(f, "restart-engine", String.valueOf(h));
            end(f);
        } else {
            int k = 1 + random.nextInt(2);
            long pid = readPid(Fleet.coordinatorPidFile(k));
            if (pid <= 0) return;
            Fault f = begin("kill-coordinator", "coordinator-" + k, 0, pid);
            signal(pid, "KILL", " --state-dir " + Fleet.RUN.resolve("coordinator-" + k).resolve("state") + " ");
            Thread.sleep(2_000 + random.nextInt(2_000));
            zkGate.readLock().lockInterruptibly();
            try {
                fleetSh(f, "start-coordinator", String.valueOf(k));
            } finally {
                zkGate.readLock().unlock();
            }
            end(f);
        }
    }

    // ---- helpers ------------------------------------------------------------------------------------------------

    /** Picks a host whose agent has no fault now and marks it busy; 0 when none. */
    private int pickHost(Random random) {
        int start = random.nextInt(hosts);
        synchronized (agentBusy) {
            for (int n = 0; n < hosts; n++) {
                int h = 1 + (start + n) % hosts;
                if (!agentBusy[h]) {
                    agentBusy[h] = true;
                    return h;
                }
            }
        }
        return 0;
    }

    private void release(int h) {
        synchronized (agentBusy) {
            agentBusy[h] = false;
        }
    }

    private void fleetSh(Fault f, String... args) throws IOException, InterruptedException {
        try {
            fleet.fleetSh(args);
        } catch (IOException e) {
            f.note += (f.note.isEmpty() ? "" : "; ") + "fleet.sh " + String.join(" ", args) + " failed";
            synchronized (errors) {
                errors.add("fault " + f.id + " (" + f.kind + "): " + e.getMessage().lines().findFirst().orElse(""));
            }
        }
    }

    private void continueAll() {
        List<Paused> all;
        synchronized (paused) {
            all = new ArrayList<>(paused);
        }
        for (Paused p : all) resume(p);
        for (WindowProcess w : windows.get()) {
            if (w.paused()) {
                signalChild(w.pid(), "CONT");
                w.paused(false);
            }
        }
    }

    static String agentMarker(int h) { return " --state-dir " + Fleet.RUN.resolve("fleet-" + h).resolve("agent") + " "; }

    static String zkMarker(int j) { return " " + Fleet.RUN.resolve("zk-" + j).resolve("zoo.cfg") + " "; }

    static long agentPid(int h) { return readPid(Fleet.agentPidFile(h)); }

    static long zkPid(int j) { return readPid(Fleet.zkPidFile(j)); }

    static long readPid(Path file) {
        try {
            return Fleet.pid(file);
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
    }

    /** @return the process's command line with a space around each argument, or "" when it is gone */
    static String cmdline(long pid) {
        try {
            return " " + new String(Files.readAllBytes(Path.of("/proc/" + pid + "/cmdline")), StandardCharsets.UTF_8).replace('\0', ' ');
        } catch (IOException e) {
            return "";
        }
    }

    /** Signals a fleet process, only while its command line still names its role. */
    static boolean signal(long pid, String sig, String marker) {
        if (pid <= 0 || !cmdline(pid).contains(marker)) return false;
        return kill(pid, sig);
    }

    /** Signals a process this JVM started (a window process), while it lives. */
    static boolean signalChild(long pid, String sig) {
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false) && kill(pid, sig);
    }

    private static boolean kill(long pid, String sig) {
        try {
            Process k = new ProcessBuilder("kill", "-" + sig, String.valueOf(pid)).redirectErrorStream(true).start();
            return k.waitFor(10, TimeUnit.SECONDS) && k.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** @return server j's mode from {@code srvr} ({@code leader}, {@code follower}), or null when it does not serve */
    static String zkMode(int j) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", 2280 + j), 1_000);
            s.setSoTimeout(2_000);
            OutputStream out = s.getOutputStream();
            out.write("srvr".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            for (String line : text.split("\n")) if (line.startsWith("Mode: ")) return line.substring(6).strip();
            return null;
        } catch (IOException e) {
            return null;
        }
    }

    /** @return the leader (1..3), or 0 */
    static int leader() {
        for (int j = 1; j <= 3; j++) if ("leader".equals(zkMode(j))) return j;
        return 0;
    }

    static boolean allServing() {
        for (int j = 1; j <= 3; j++) {
            String m = zkMode(j);
            if (!"leader".equals(m) && !"follower".equals(m)) return false;
        }
        return true;
    }
}
