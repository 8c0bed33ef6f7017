package io.mesh.apply;

import io.mesh.docker.ContainerRuntime;
import io.mesh.manifest.ContainerSpec;
import io.mesh.secrets.SecretsDir;
import io.mesh.window.HostContext;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.ApplyReport.ContainerResult;
import io.mesh.wire.ContainerAction;
import io.mesh.wire.DesiredRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The no-op reconcile (docs/decisions/0004-no-op-reconcile.md): tells, without the module lock and without writing,
 * that an apply would change nothing and report nothing new.
 */
final class NoOpReconcile {
    private static final Logger log = LoggerFactory.getLogger(ReportWriter.APPLY_LOGGER);
    private final HostContext context;
    private final ReportWriter reports;

    NoOpReconcile(HostContext context, ReportWriter reports) {
        this.context = context;
        this.reports = reports;
    }

    /**
     * Returns this process's last report of the module when it still says all there is to say, so that the apply
     * takes no lock and writes nothing: the conditions are docs/design.md's "No-op reconcile" (one look at Docker,
     * {@link ContainerRuntime#moduleView}, and two facts from ZooKeeper).
     *
     * @return the last report, or {@code null} when the module goes the locked way
     */
    ApplyReport unchangedSinceLastReport(String module, DesiredRecord desired) {
        ApplyReport last = reports.lastApplied(module);
        if (last == null || desired == null || last.window() != null
                || !Objects.equals(last.push(), desired.push())
                || !Objects.equals(last.revision(), desired.revision())) {
            return null;
        }
        ContainerRuntime.ModuleView view = context.docker().moduleView(module);
        if (!view.steps().isEmpty()) return null;
        Map<String, ContainerSpec> want = desired.spec().runsOn(context.host()) ? desired.spec().containersAsRun() : Map.of();
        List<ContainerResult> there = new ArrayList<>(); // what the report left running, in plan order
        for (ContainerResult r : last.containers()) {
            if (r.action() == ContainerAction.REMOVED) continue;
            if (r.action() != ContainerAction.UNCHANGED && r.action() != ContainerAction.CREATED
                    && r.action() != ContainerAction.RECREATED) {
                return null; // held or failed: the next apply has something to say
            }
            there.add(r);
        }
        // Secret files are read at every reconcile (decision 18): a rotated one changes its container's hash, and one
        // that can no longer be read goes the locked way, which reports it.
        Map<String, SecretsDir.Resolved> read = ApplyExecution.resolve(context.secrets(), want);
        if (read.values().stream().anyMatch(r -> !r.complete())) return null;
        // A module's networks drift apart from its containers (a change a foreign container held up, a container
        // disconnected by hand): looked at where the module has networks here, at a network inspect each (decision 31).
        if (!desired.spec().ownedNetworksOn(context.host()).isEmpty()
                && !new ModuleNetworks(context.docker()).asSpecSays(desired.spec(), context.host(), view.containers())) {
            return null;
        }
        List<PlannedAction> plan = ApplyPlanner.plan(module, want, view.containers(), Map.of(), ApplyExecution.digests(read), Map.of());
        if (plan.size() != there.size()) return null;
        for (int i = 0; i < plan.size(); i++) {
            PlannedAction a = plan.get(i);
            ContainerResult r = there.get(i);
            if (a.action() != PlannedAction.Kind.UNCHANGED || !a.dockerName().equals(r.container())
                    || !Objects.equals(a.existingId(), r.id())) {
                return null;
            }
        }
        // Two ZooKeeper reads, after Docker (on 2 cores, reads sent before the list waited for it anyway): is the
        // report still the one this process wrote, is any container of the module held.
        try {
            if (!context.store().reportIsOurs(context.host(), module)) return null;
            List<String> held = context.store().heldNames(context.host());
            if (plan.stream().anyMatch(a -> held.contains(a.dockerName()))) return null;
        } catch (Exception e) {
            return null; // ZooKeeper did not answer: the locked way says so
        }
        return last;
    }

    /**
     * @return true when no container of the module (managed or step) is on this host. A Docker error counts as
     *         nothing here: a module of another host gets no {@code failed} report on this one; the next reconcile
     *         looks again.
     */
    boolean nothingHere(String module) {
        try {
            ContainerRuntime.ModuleView view = context.docker().moduleView(module);
            return view.containers().isEmpty() && view.steps().isEmpty();
        } catch (RuntimeException e) {
            log.debug("module {} of another host: Docker did not answer ({}); looking again at the next reconcile", module, ApplyExecution.describe(e));
            return true;
        }
    }
}
