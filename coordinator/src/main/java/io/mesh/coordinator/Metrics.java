package io.mesh.coordinator;

import io.mesh.wire.PromText;
import io.mesh.wire.PushState;
import io.mesh.wire.WindowResult;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The coordinator's counters, rendered in the Prometheus text format (version 0.0.4) for {@code GET /metrics}.
 * Thread-safe.
 */
public final class Metrics {
    /** Reason label of a push refused because the manifest or revision was invalid (400). */
    public static final String INVALID = "invalid";
    /** Reason label of a push refused for missing credentials (401). */
    public static final String UNAUTHORIZED = "unauthorized";
    /** Reason label of a push refused for a wrong token or signature (403). */
    public static final String FORBIDDEN = "forbidden";
    /** Reason label of a push refused for its size (413). */
    public static final String TOO_LARGE = "too_large";
    /** Reason label of a push that could not be written (409, 5xx). */
    public static final String ERROR = "error";

    private final AtomicLong accepted = new AtomicLong();
    private final Map<String, AtomicLong> rejected = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> zkEvents = new ConcurrentHashMap<>();

    /** @param state a ZooKeeper connection state the coordinator's client entered, such as {@code SUSPENDED} */
    public void connectionEvent(String state) { zkEvents.computeIfAbsent(state, k -> new AtomicLong()).incrementAndGet(); }

    /** Counts one push written. */
    public void accepted() { accepted.incrementAndGet(); }

    /** @param reason one of {@link #INVALID}, {@link #UNAUTHORIZED}, {@link #TOO_LARGE}, {@link #ERROR} */
    public void rejected(String reason) { rejected.computeIfAbsent(reason, k -> new AtomicLong()).incrementAndGet(); }

    /** @return pushes written since start */
    public long acceptedCount() { return accepted.get(); }

    /** @return pushes refused for that reason since start */
    public long rejectedCount(String reason) { AtomicLong a = rejected.get(reason); return a == null ? 0 : a.get(); }

    /**
     * @param heldContainers number of held-container nodes, or a negative number when unknown (ZooKeeper unreachable):
     *                       the gauge is then left out
     * @param zkConnected    whether the coordinator's ZooKeeper client is connected
     * @return the exposition text, ending with a newline
     */
    public String render(int heldContainers, boolean zkConnected) {
        StringBuilder b = new StringBuilder();
        b.append("# HELP mesh_pushes_accepted_total Pushes validated and written to ZooKeeper.\n");
        b.append("# TYPE mesh_pushes_accepted_total counter\n");
        b.append("mesh_pushes_accepted_total ").append(accepted.get()).append('\n');
        b.append("# HELP mesh_pushes_rejected_total Pushes refused, by reason.\n");
        b.append("# TYPE mesh_pushes_rejected_total counter\n");
        for (String reason : new String[]{INVALID, UNAUTHORIZED, FORBIDDEN, TOO_LARGE, ERROR}) {
            b.append(String.format(Locale.ROOT, "mesh_pushes_rejected_total{reason=\"%s\"} %d%n", reason, rejectedCount(reason)));
        }
        if (heldContainers >= 0) {
            b.append("# HELP mesh_held_containers Containers held stopped by an open window, on every host.\n");
            b.append("# TYPE mesh_held_containers gauge\n");
            b.append("mesh_held_containers ").append(heldContainers).append('\n');
        }
        b.append("# HELP mesh_zookeeper_connected 1 when the coordinator's ZooKeeper client is connected.\n");
        b.append("# TYPE mesh_zookeeper_connected gauge\n");
        b.append("mesh_zookeeper_connected ").append(zkConnected ? 1 : 0).append('\n');
        b.append("# HELP mesh_zookeeper_connection_events_total ZooKeeper connection state changes seen by the coordinator, by new state.\n");
        b.append("# TYPE mesh_zookeeper_connection_events_total counter\n");
        new TreeMap<>(zkEvents).forEach((st, n) ->
                b.append("mesh_zookeeper_connection_events_total{state=\"").append(st).append("\"} ").append(n.get()).append('\n'));
        return b.toString();
    }

    /**
     * The fleet as the agents' reports and ZooKeeper's nodes show it, for {@code GET /metrics}: last outcomes, the
     * durations of each host's last apply and last window, report ages, open windows, agents, and the module locks'
     * waiters with the longest wait. (Each agent's own counters and histograms are on its {@code --metrics-listen}.)
     *
     * @param f     the fleet now
     * @param locks the module locks now
     * @return exposition text
     */
    public static String renderFleet(FleetStatus.Fleet f, List<FleetStatus.Lock> locks) {
        PromText out = new PromText();
        Map<String, Integer> outcomes = new TreeMap<>();
        for (PushState s : List.of(PushState.APPLIED, PushState.DEFERRED, PushState.WAITING, PushState.FAILED, PushState.PENDING)) outcomes.put(s.wire(), 0);
        int online = 0;
        for (FleetStatus.HostRow h : f.hosts()) {
            if (h.online()) online++;
            for (FleetStatus.Cell c : h.modules()) outcomes.merge(c.outcome().wire(), 1, Integer::sum);
        }
        out.family("mesh_fleet_modules", "gauge", "Host-modules by the outcome of their last report (pending: none yet for the desired push).");
        outcomes.forEach((o, n) -> out.sample("mesh_fleet_modules", PromText.label("outcome", o), n));
        out.family("mesh_agents_online", "gauge", "Hosts whose agent node exists.");
        out.sample("mesh_agents_online", "", online);
        out.family("mesh_open_windows", "gauge", "Open windows on every host (/mesh/windows).");
        out.sample("mesh_open_windows", "", f.windows().size());
        out.family("mesh_last_apply_duration_seconds", "gauge", "Duration of the last apply of each module on each host, from its report.");
        for (FleetStatus.HostRow h : f.hosts()) for (FleetStatus.Cell c : h.modules()) {
            if (c.applySeconds() != null) out.sample("mesh_last_apply_duration_seconds", labels(h, c) + "," + PromText.label("outcome", c.outcome().wire()), c.applySeconds());
        }
        out.family("mesh_last_window_duration_seconds", "gauge", "Duration of the last window of each module on each host, from its report.");
        for (FleetStatus.HostRow h : f.hosts()) for (FleetStatus.Cell c : h.modules()) {
            WindowResult w = c.lastWindow();
            if (w != null && w.startedAt() != null && w.finishedAt() != null) {
                out.sample("mesh_last_window_duration_seconds", labels(h, c) + "," + PromText.label("outcome", w.outcome() == null ? null : w.outcome().wire()),
                        Duration.between(w.startedAt(), w.finishedAt()).toMillis() / 1000.0);
            }
        }
        out.family("mesh_report_age_seconds", "gauge", "Seconds since the last report of each module on each host finished.");
        for (FleetStatus.HostRow h : f.hosts()) for (FleetStatus.Cell c : h.modules()) {
            if (c.finishedAt() != null) out.sample("mesh_report_age_seconds", labels(h, c), c.ageSeconds(f.at()));
        }
        out.family("mesh_lock_waiters", "gauge", "Processes waiting for each module lock on each host.");
        for (FleetStatus.Lock lock : locks) out.sample("mesh_lock_waiters", lockLabels(lock), lock.waiters().size());
        out.family("mesh_lock_longest_wait_seconds", "gauge", "How long the longest waiter of each module lock has waited.");
        for (FleetStatus.Lock lock : locks) {
            double longest = lock.waiters().stream().filter(w -> w.since() != null)
                    .mapToDouble(w -> Math.max(0, Duration.between(w.since(), f.at()).toMillis() / 1000.0)).max().orElse(0);
            out.sample("mesh_lock_longest_wait_seconds", lockLabels(lock), longest);
        }
        return out.toString();
    }

    private static String labels(FleetStatus.HostRow h, FleetStatus.Cell c) {
        return PromText.label("host", h.host()) + "," + PromText.label("module", c.module());
    }

    private static String lockLabels(FleetStatus.Lock lock) {
        return PromText.label("module", lock.module()) + "," + PromText.label("host", lock.host());
    }
}
