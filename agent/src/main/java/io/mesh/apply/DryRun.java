package io.mesh.apply;

import io.mesh.curator.HeldRegistry;
import io.mesh.docker.ContainerRuntime;
import io.mesh.docker.ObservedContainer;
import io.mesh.hold.HoldStops;
import io.mesh.manifest.ContainerSpec;
import io.mesh.manifest.ModuleSpec;
import io.mesh.manifest.PullPolicy;
import io.mesh.policy.Policy;
import io.mesh.secrets.SecretsDir;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.ContainerAction;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.PlanAnswer.ContainerPlan;
import io.mesh.wire.PlanAnswer.ModulePlan;
import io.mesh.wire.PlanOutcome;
import io.mesh.wire.WindowRecord;
import io.mesh.zk.MeshStore;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A plan ({@code mesh push FILE --plan}): what an apply of a module would do on this host, computed by the apply's own
 * {@link ApplyPlanner} from the same inputs (the module's containers, this host's held nodes) and checked as the apply
 * checks it ({@link ApplyExecution#refusals}, the policy), plus what the apply would meet: an open window of the module
 * ({@code deferred}) and images that are not on this host.
 *
 * <p>It only reads: one labelled container list and one image inspect per image from Docker, the held and window
 * nodes from ZooKeeper. It takes no lock (it writes nothing, so there is nothing to guard), never pulls, never logs a
 * container's output. What it reads may change before a push lands: a plan is a forecast, not a reservation.
 *
 * @param store  ZooKeeper access (held and window nodes)
 * @param docker the local engine, read only
 * @param host   this host's id
 * @param policy  the agent's policy, as the apply checks it
 * @param secrets the host's secrets dir, read as the apply reads it (a plan shows {@code secret changed: NAME} and a
 *                secret that cannot be read, never a value)
 * @param holdStops the {@code --stop}s of operators' holds ({@link HoldStops}), read only: a container one stopped is
 *                  forecast started as it was, as the apply would (decision 33); {@code null}: forecast recreated
 */
public record DryRun(MeshStore store, ContainerRuntime docker, String host, Policy policy, SecretsDir secrets, HoldStops holdStops) {
    /** A plan that knows no operator's {@code --stop} (it forecasts a recreate of such a container). */
    public DryRun(MeshStore store, ContainerRuntime docker, String host, Policy policy, SecretsDir secrets) {
        this(store, docker, host, policy, secrets, null);
    }

    /**
     * @param spec the module as it would be pushed
     * @return what an apply of it would do here; {@code null} when the module does not run on this host and has no
     *         container here (an apply would neither lock nor report it)
     * @throws Exception ZooKeeper's or Docker's errors
     */
    public ModulePlan plan(ModuleSpec spec) throws Exception {
        String module = spec.module();
        Map<String, ContainerSpec> want = spec.runsOn(host) ? spec.containersAsRun() : Map.of();
        List<ObservedContainer> observed = docker.moduleContainers(module);
        if (want.isEmpty() && observed.isEmpty()) return null;
        Map<String, HeldRecord> held = store.held(host);
        WindowRecord window = store.window(host, module);
        Map<String, SecretsDir.Resolved> read = ApplyExecution.resolve(secrets, want);
        // Read only: the apply, under the module's lock, is what forgets a stop that no longer counts.
        Map<String, String> startAsItWas = ApplyExecution.startAsItWas(holdStops == null ? Map.of() : holdStops.readOnly().read(module), docker,
                observed, held);
        List<PlannedAction> actions = ApplyPlanner.plan(module, want, observed, held, ApplyExecution.digests(read), Map.of(), startAsItWas);
        ModuleNetworks.Outcome networks = new ModuleNetworks(docker).forecast(spec, host, observed, held);
        Map<String, Boolean> images = new HashMap<>();
        List<ContainerPlan> containers = new ArrayList<>();
        boolean fails = false;
        boolean heldAny = false;
        for (PlannedAction a : actions) {
            ContainerSpec s = want.get(a.name());
            List<String> reasons = new ArrayList<>(a.reasons());
            List<String> problems = new ArrayList<>();
            ContainerAction action = a.action().reported();
            String image = null;
            if (a.action() == PlannedAction.Kind.CREATE || a.action() == PlannedAction.Kind.RECREATE) {
                image = s.image();
                List<String> unreadable = ApplyExecution.secretProblems(read, a);
                if (!unreadable.isEmpty()) {
                    action = ContainerAction.FAILED; // as the apply reports a container whose secrets cannot be read
                    reasons.addAll(unreadable);
                    problems.addAll(unreadable);
                }
                List<String> refusals = ApplyExecution.refusals(policy, a, s);
                if (!refusals.isEmpty()) {
                    action = ContainerAction.FAILED; // as the apply reports a refused container
                    reasons.addAll(refusals);
                    problems.addAll(refusals);
                }
                PullPolicy pull = s.pullPolicy();
                boolean present = pull == PullPolicy.ALWAYS || images.computeIfAbsent(image, docker::imagePresent);
                if (pull == PullPolicy.ALWAYS) {
                    reasons.add("pull: always: the apply would pull " + image + " first (a plan never pulls)");
                } else if (!present && pull == PullPolicy.NEVER) {
                    String missing = "image " + image + " is not on this host and its pull policy is never: the apply would fail;"
                            + " load it on the host (docker load), or set pull: missing";
                    reasons.add(missing);
                    problems.add(missing);
                } else if (!present) {
                    String missing = "image " + image + " is not on this host: the apply would try to pull it (a plan never pulls);"
                            + " load it (docker load) or check the reference";
                    reasons.add(missing);
                    problems.add(missing);
                }
            } else if (a.action() == PlannedAction.Kind.UNCHANGED && s != null && s.pullPolicy() == PullPolicy.ALWAYS) {
                reasons.add("pull: always: the apply would pull " + s.image() + " and recreate the container if that changes its image");
            } else if (a.action() == PlannedAction.Kind.CRASH_LOOP) {
                problems.add(a.reasons().isEmpty() ? "crash-looping" : a.reasons().get(0));
            }
            if (s != null) {
                for (String n : s.networks().keySet()) {
                    if (networks.notes().containsKey(n)) reasons.add(networks.notes().get(n));
                    String problem = networks.problems().get(n);
                    if (problem != null && a.action() != PlannedAction.Kind.HELD && a.action() != PlannedAction.Kind.REMOVE) {
                        action = ContainerAction.FAILED; // as the apply fails a container whose network it cannot make ready
                        reasons.add(problem);
                        problems.add(problem);
                    }
                }
            }
            if (a.action() == PlannedAction.Kind.HELD) heldAny = true;
            fails |= !problems.isEmpty();
            containers.add(new ContainerPlan(a.name(), a.dockerName(), action, List.copyOf(reasons), image, List.copyOf(problems)));
        }
        ApplyReport.WindowRef ref = window == null ? null : ApplyReport.WindowRef.of(window);
        if (ref == null && heldAny) {
            // Held nodes without a window node of the module (a window whose lock lapsed, a hold by hand): the apply
            // would be deferred to the window they name, as Applier reports it.
            List<String> heldHere = containers.stream().filter(c -> c.action() == ContainerAction.HELD).map(ContainerPlan::container).toList();
            HeldRecord h = HeldRegistry.windowHolding(held, heldHere); // an operator's hold names no window
            if (h != null) ref = new ApplyReport.WindowRef(h.schedule(), h.window(), h.since(), heldHere);
        }
        PlanOutcome outcome = fails ? PlanOutcome.WOULD_FAIL : ref != null || heldAny ? PlanOutcome.WOULD_DEFER : PlanOutcome.WOULD_APPLY;
        String revision = observed.stream().map(ObservedContainer::revision).filter(Objects::nonNull).filter(r -> !r.isEmpty())
                .findFirst().orElse(null);
        return new ModulePlan(module, revision, outcome, ref, List.copyOf(containers));
    }
}
