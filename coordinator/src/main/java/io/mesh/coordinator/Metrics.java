package io.mesh.coordinator;

import java.util.Locale;
import java.util.Map;
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
        return b.toString();
    }
}
