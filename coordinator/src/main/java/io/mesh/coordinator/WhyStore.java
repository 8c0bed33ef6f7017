package io.mesh.coordinator;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.AuditReport;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.RolloutRecord;
import io.mesh.wire.RolloutState;
import io.mesh.wire.SlotRecord;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * {@code mesh why HOST CONTAINER} ({@code GET /v1/why/{host}/{container}}; SPEC.md "Audit"): why a container is as it
 * is now, as a chain of reasons read from ZooKeeper (its held node, the module's report on the host, its rollout, the
 * freezes, the slot queues) and from the host's ledger (today's audit violations on it, asked with the audit transport,
 * {@link AuditStore}, waiting {@link #AUDIT_TIMEOUT}).
 *
 * @param client     a started Curator client
 * @param paths      the layout
 * @param audits     the audit transport
 * @param freezes    the freezes
 * @param rollouts   the rollouts, as their hosts' children say
 * @param fleet      the slots
 */
public record WhyStore(CuratorFramework client, ZkPaths paths, AuditStore audits, FreezeStore freezes, RolloutStore rollouts,
                       FleetStatus fleet) {
    /** How long {@code mesh why} waits for the host's ledger. */
    public static final Duration AUDIT_TIMEOUT = Duration.ofSeconds(5);

    /**
     * One reason.
     *
     * @param reason what kind of reason
     * @param since  since when it holds, or when it happened; {@code null} when unknown
     * @param detail what it is, in a sentence
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Line(WhyReason reason, Instant since, String detail) {}

    /**
     * The chain.
     *
     * @param host      the host
     * @param container the Docker name
     * @param module    its module
     * @param state     the container's state as mesh knows it, in a few words (held, deferred, the last apply's action)
     * @param chain     the reasons, strongest first: holds, deferrals, rollout, freezes, slots, the last apply, the audit
     */
    public record Why(String host, String container, String module, String state, List<Line> chain) {}

    /**
     * @param host      a host id
     * @param container a Docker name, {@code <module>-<name>}
     * @param by        who asks, for the audit request's record
     * @return the chain
     * @throws Refusal          404 when the host is not known, or the container is in none of its reports, held nodes or
     *                          the desired modules that name it
     * @throws Exception        ZooKeeper errors
     */
    public Why why(String host, String container, ProcessRef by) throws Exception {
        if (!audits.knownHosts().contains(host)) {
            throw Refusal.notFound("host", "no host " + host + " is known (no " + paths.agent(host) + " and no " + paths.reports(host)
                    + "): check the name (mesh status lists the hosts)");
        }
        HeldRecord held = ZkReads.read(client, paths.held(host, container), HeldRecord.class);
        String module = moduleOf(host, container, held);
        if (module == null) {
            throw Refusal.notFound("container", "no container " + container + " on host " + host + " (in none of its reports, held nodes"
                    + " or the desired modules that name it): give its Docker name, <module>-<name> (mesh status " + "shows each host's modules)");
        }
        Instant now = audits.clock().instant();
        List<Line> chain = new ArrayList<>();
        String state = null;

        if (held != null) {
            if (held.operatorHold()) {
                HeldRecord.OperatorHold h = held.hold();
                chain.add(new Line(WhyReason.HELD_BY_OPERATOR, h.since(), "held by operator " + h.by() + ": " + h.reason()
                        + (h.until() == null ? ", until released" : ", until " + h.until() + (h.expiredAt(now) ? " (expired: its agent ends it)" : ""))
                        + (h.confirmed() == null ? "; not yet confirmed by the host's agent (not in force yet)" : "; confirmed " + h.confirmed())
                        + (h.stops() ? (h.stoppedAt() == null ? "; to be stopped" : "; stopped " + h.stoppedAt()) : "")));
                state = "held by operator" + (h.stops() ? " (stopped)" : "");
            } else {
                chain.add(new Line(WhyReason.HELD_BY_WINDOW, held.since(), "held by window " + held.window() + " of schedule "
                        + held.schedule() + (held.by() == null ? "" : " (" + held.by().process() + ", pid " + held.by().pid() + ")")));
                state = "held by window " + held.schedule();
            }
        }

        ApplyReport report = ZkReads.read(client, paths.report(host, module), ApplyReport.class);
        if (report != null && report.outcome() == ApplyOutcome.DEFERRED) {
            StringBuilder d = new StringBuilder("push " + report.push() + " (revision " + report.revision() + ") deferred");
            if (report.window() != null) {
                d.append(" behind window ").append(report.window().window()).append(" of schedule ").append(report.window().schedule())
                        .append(", open since ").append(report.window().since());
            }
            if (report.freeze() != null) d.append(" by the freeze of ").append(report.freeze().by()).append(": ").append(report.freeze().reason())
                    .append(", until ").append(report.freeze().until());
            if (report.rollout() != null) d.append("; rollout: ").append(report.rollout());
            chain.add(new Line(WhyReason.DEFERRED, report.finishedAt(), d.toString()));
            if (state == null) state = "deferred";
        }

        Optional<RolloutRecord> rollout = rollouts.read(module);
        if (rollout.isPresent()) {
            RolloutRecord r = rollout.get();
            String where = r.waiting().contains(host) ? "waits for its wave" + (r.canary().isEmpty() || r.canary().contains(host) ? ""
                    : " (canaries " + String.join(",", r.canary()) + " go first)") + (r.maxParallel() == null ? "" : " (max-parallel " + r.maxParallel() + ")")
                    : r.applying().contains(host) ? "is applying it"
                    : r.failed().contains(host) ? "failed it and keeps the previous revision"
                    : r.done().contains(host) ? "is done" : "is not in it";
            if (r.state() != RolloutState.DONE || !r.done().contains(host)) {
                chain.add(new Line(WhyReason.ROLLOUT, r.since(), "rollout of push " + r.push() + " is " + r.state() + "; this host " + where
                        + (r.note() == null ? "" : " (" + r.note() + ")")));
            }
        }

        for (FreezeStore.Freeze f : freezes.list()) {
            if (!f.active() || !(f.all() || module.equals(f.module()))) continue;
            chain.add(new Line(WhyReason.FREEZE, f.since(), (f.all() ? "every module" : "module " + module) + " frozen by " + f.by()
                    + ": " + f.reason() + ", until " + f.endsAt() + (f.cron() == null ? "" : " (" + f.rule() + ")")));
        }

        for (FleetStatus.Slot s : fleet.slots()) {
            for (int i = 0; i < s.queue().size(); i++) {
                SlotRecord q = s.queue().get(i).record();
                if (host.equals(q.host()) && module.equals(q.module())) {
                    chain.add(new Line(WhyReason.SLOT, q.since(), "window " + q.window() + " of schedule " + q.schedule() + " waits for slot "
                            + s.key() + ": position " + (i + 1) + " of " + s.queue().size() + " in its queue, " + s.running().size() + " of "
                            + s.limit() + " running"));
                }
            }
        }

        if (report != null && report.lastWindow() != null && report.lastWindow().gate() != null) {
            io.mesh.wire.WindowResult w = report.lastWindow();
            chain.add(new Line(WhyReason.GATE, w.startedAt(), "last window " + w.window() + " of schedule " + w.schedule() + " ("
                    + w.outcome() + "): its gate " + w.gate()));
        }

        if (report != null) {
            ApplyReport.ContainerResult mine = (report.containers() == null ? List.<ApplyReport.ContainerResult>of() : report.containers()).stream().filter(c -> container.equals(c.container())).findFirst().orElse(null);
            String d = "last apply of push " + report.push() + " (revision " + report.revision() + "): " + report.outcome()
                    + (report.error() == null ? "" : " (" + report.error() + ")")
                    + (mine == null ? "; the report names no " + container
                    : "; " + container + " " + mine.action() + (mine.reasons() == null || mine.reasons().isEmpty() ? "" : ": " + String.join("; ", mine.reasons())));
            chain.add(new Line(WhyReason.LAST_APPLY, report.finishedAt(), d));
            if (state == null) state = mine != null ? String.valueOf(mine.action()) : String.valueOf(report.outcome());
        }

        Instant midnight = now.truncatedTo(ChronoUnit.DAYS);
        AuditReport a = audits.audit(midnight, now, List.of(host), Set.of(module), AUDIT_TIMEOUT, by).hosts().get(0);
        if (a.error() != null) {
            chain.add(new Line(WhyReason.AUDIT, midnight, "the host's ledger was not read: " + a.error()));
        } else {
            int n = 0;
            for (AuditReport.Violation v : a.violations()) {
                if (!container.equals(v.container())) continue;
                n++;
                chain.add(new Line(WhyReason.AUDIT_VIOLATION, v.at(), v.kind() + ": " + v.message()));
            }
            if (n == 0) chain.add(new Line(WhyReason.AUDIT, midnight, "no audit violation on " + container + " since 00:00 UTC"));
        }
        if (state == null) state = report == null ? "no report from " + host + " for module " + module + " yet" : "unknown";
        return new Why(host, container, module, state, List.copyOf(chain));
    }

    /** @return the module of the container on that host: its held node's, a report's that names it, else a desired module's */
    private String moduleOf(String host, String container, HeldRecord held) throws Exception {
        if (held != null && held.module() != null) return held.module();
        for (String m : ZkReads.children(client, paths.reports(host))) {
            ApplyReport r = ZkReads.read(client, paths.report(host, m), ApplyReport.class);
            if (r != null && r.containers() != null && r.containers().stream().anyMatch(c -> container.equals(c.container()))) return m;
        }
        for (String m : ZkReads.children(client, paths.desired())) {
            if (!container.startsWith(m + "-")) continue;
            DesiredRecord d = ZkReads.read(client, paths.desired(m), DesiredRecord.class);
            if (d == null || d.spec() == null || d.spec().containers() == null) continue;
            boolean named = d.spec().containers().containsKey(container.substring(m.length() + 1));
            boolean here = d.spec().hosts().contains(host) || d.spec().hosts().contains(io.mesh.manifest.ModuleSpec.ALL_HOSTS);
            if (named && here) return m;
        }
        return null;
    }
}
