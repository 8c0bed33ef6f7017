package io.mesh.apply;

import io.mesh.wire.ApplyReport.ContainerResult;
import io.mesh.section.ModuleSection;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.ContainerAction;
import io.mesh.zk.MeshStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Objects;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * The apply report's write and its log line: with the module lock, in one ZooKeeper transaction with the lock's
 * release (decision 5). Remembers the last {@code applied} report this process wrote per module, which the
 * {@link NoOpReconcile} compares with.
 */
final class ReportWriter {
    /** The apply's logger, which operators grep: its classes log under the one name. */
    static final String APPLY_LOGGER = "io.mesh.apply.Applier";
    private static final Logger log = LoggerFactory.getLogger(APPLY_LOGGER);
    private final MeshStore store;
    private final Map<String, ApplyReport> confirmed = new ConcurrentHashMap<>();

    /** Where the host keeps events ZooKeeper did not take (decision 34). */
    private final java.nio.file.Path spool;

    /**
     * @param store ZooKeeper access
     * @param spool the host's event spool ({@code EventOutbox#spoolOf} its state dir)
     */
    ReportWriter(MeshStore store, java.nio.file.Path spool) {
        this.store = store;
        this.spool = spool;
    }

    /** By host, its outbox for webhooks (decision 34): one per host this process reports for, made on first use. */
    private final Map<String, io.mesh.curator.EventOutbox> outboxes = new ConcurrentHashMap<>();

    /** @return the last {@code applied} report this process wrote of the module and has not overwritten since, or null */
    ApplyReport lastApplied(String module) { return confirmed.get(module); }

    /** The last report this process wrote of each module, whatever its outcome. */
    private final Map<String, ApplyReport> last = new ConcurrentHashMap<>();

    /**
     * @return true when this process's last report of the module reads as {@code r} does, times aside: same push,
     *         revision, outcome, error, rollout, freeze, and each container's action and id
     */
    boolean sameAsLast(ApplyReport r) {
        ApplyReport l = last.get(r.module());
        if (l == null || l.outcome() != r.outcome() || !Objects.equals(l.push(), r.push()) || !Objects.equals(l.revision(), r.revision())
                || !Objects.equals(l.error(), r.error()) || !Objects.equals(l.rollout(), r.rollout())
                || !Objects.equals(l.freeze(), r.freeze())
                || l.containers().size() != r.containers().size()) {
            return false;
        }
        for (int i = 0; i < r.containers().size(); i++) {
            ContainerResult a = l.containers().get(i), b = r.containers().get(i);
            if (a.action() != b.action() || !Objects.equals(a.id(), b.id()) || !Objects.equals(a.container(), b.container())) return false;
        }
        return true;
    }

    /**
     * Writes a report without the lock.
     *
     * @throws Exception from ZooKeeper
     */
    void write(ApplyReport r) throws Exception {
        write(r, null);
    }

    /**
     * Writes a report; with the module lock, releases it in the same transaction when the store knows the report
     * node's version (decision 5: one quorum write instead of two), else writes first and leaves the
     * lock to the caller's release.
     *
     * @throws Exception from ZooKeeper
     */
    void write(ApplyReport r, ModuleSection releasing) throws Exception {
        confirmed.remove(r.module());
        MeshStore.ReportWrite w = releasing != null && releasing.lockHeld() ? store.prepareReport(r) : null;
        var committed = w == null ? null : releasing.releaseWith(w.op());
        if (committed != null) {
            store.committed(w, committed.get(0));
        } else if (w == null || !store.landed(w)) {
            store.writeReport(r);
        }
        if (r.outcome() == ApplyOutcome.APPLIED) confirmed.put(r.module(), r);
        ApplyReport before = last.put(r.module(), r);
        if (r.outcome() == ApplyOutcome.FAILED && r.push() != null
                && (before == null || before.outcome() != ApplyOutcome.FAILED || !Objects.equals(before.push(), r.push()))) {
            failed(r); // the push's first failed report here: its retries with back-off say nothing new
        }
        String summary = summary(r);
        String window = r.window() == null ? "-" : r.window().schedule() + "/" + r.window().window();
        if (r.outcome() == ApplyOutcome.FAILED) {
            log.warn("apply host={} module={} push={} revision={} outcome={} window={} containers={} error=\"{}\"",
                    r.host(), r.module(), r.push(), r.revision(), r.outcome(), window, summary, r.error());
        } else {
            log.info("apply host={} module={} push={} revision={} outcome={} window={} containers={}{}{}",
                    r.host(), r.module(), r.push(), r.revision(), r.outcome(), window, summary, changes(r),
                    r.freeze() == null ? "" : " freeze=\"" + r.freeze().describe() + "\"");
        }
    }

    /**
     * {@code push.failed}, and {@code push.reverted} for each container reverted, into the host's outbox: written by the
     * process where the failure happens, as a window's events are (decision 34); posted, never waited for.
     */
    private void failed(ApplyReport r) {
        io.mesh.curator.EventOutbox outbox = outboxes.computeIfAbsent(r.host(),
                h -> new io.mesh.curator.EventOutbox(store.client(), store.paths(), h).spoolIn(spool));
        java.time.Instant at = r.finishedAt() == null ? io.mesh.wire.Times.now() : r.finishedAt();
        outbox.post(io.mesh.wire.MeshEvent.of(io.mesh.wire.EventType.PUSH_FAILED, at, r.host(), r.module()).withPush(r.push())
                .withBy(null, r.error() != null ? r.error() : r.containers().stream().filter(c -> c.action().failed())
                        .map(c -> c.container() + " " + c.action() + ": " + String.join(", ", c.reasons())).collect(Collectors.joining("; "))));
        for (ContainerResult c : r.containers()) {
            if (c.action() != ContainerAction.REVERTED) continue;
            outbox.post(io.mesh.wire.MeshEvent.of(io.mesh.wire.EventType.PUSH_REVERTED, at, r.host(), r.module()).withPush(r.push())
                    .withContainer(c.container()).withBy(null, String.join("; ", c.reasons())));
        }
    }

    private static String summary(ApplyReport r) {
        String s = r.containers().stream()
                .collect(Collectors.groupingBy(c -> c.action().wire(), TreeMap::new, Collectors.counting()))
                .entrySet().stream().map(e -> e.getKey() + ":" + e.getValue()).collect(Collectors.joining(","));
        return s.isEmpty() ? "none" : s;
    }

    /** @return {@code  changes="store-registry recreated: image: a -> b; ..."} for containers that changed, else empty */
    private static String changes(ApplyReport r) {
        String c = r.containers().stream()
                .filter(x -> x.action() != ContainerAction.UNCHANGED && !x.reasons().isEmpty())
                .map(x -> x.container() + " " + x.action() + ": " + String.join(", ", x.reasons()))
                .collect(Collectors.joining("; "));
        return c.isEmpty() ? "" : " changes=\"" + c + "\"";
    }
}
