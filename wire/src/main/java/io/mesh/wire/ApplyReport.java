package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonInclude;

import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.TreeSet;

/**
 * Data of {@code /mesh/reports/<host>/<module>}: the last apply of a module on a host (SPEC.md, "Apply").
 *
 * @param host       host id
 * @param module     module name
 * @param revision   desired revision the apply worked on
 * @param push       push that wrote that desired state
 * @param outcome    applied, deferred or failed
 * @param startedAt  when the apply started (asked for the lock)
 * @param finishedAt when it finished
 * @param window     the open window that deferred it or holds containers, else {@code null}
 * @param containers one entry per container of the spec, and per removed container
 * @param error      why the module failed, else {@code null}
 * @param lastWindow the last window that ran on this module on this host, carried from report to report
 * @param lastApplied the last push this host applied for this module, carried through {@code deferred} and
 *                   {@code failed} reports, so that an older push still reads {@code applied} while a newer one waits
 * @param rollout    why the module's rollout keeps the previous revision on this host ({@code waiting}, or {@code failed}
 *                   when it was reverted or aborted), else {@code null} (docs/decisions/0013-rollouts.md)
 * @param freeze     the freeze that keeps this module's changes off this host (outcome {@code deferred}), else
 *                   {@code null} (docs/decisions/0014-freezes.md)
 * @param appliedPushes the pushes this host applied for this module (less one a rollout went back from there), newest
 *                   first by push sequence, at most {@link #APPLIED_KEPT}: carried from report to report, so that a
 *                   push that ran here still reads {@code applied} once a newer one replaced it
 *                   (docs/decisions/0024-what-a-host-applied.md); empty in a report of a version before it, and not
 *                   written when empty
 * @param failedPushes the pushes whose apply failed on this host for this module and that it has not applied since, each
 *                   with its error (cut at {@link #FAILED_ERROR_CHARS}), newest first, at most {@link #FAILED_KEPT}:
 *                   carried from report to report, so that a push that failed here reads {@code failed} once a newer
 *                   one replaced it, not {@code superseded} (SPEC.md: superseded is a push that never ran); not written
 *                   when empty
 * @param down       the Docker names of the spec's containers a {@code failed} apply left not running (held ones aside),
 *                   as Docker said when it ended: each makes this host of the module's groups down for a failed apply
 *                   ({@link GroupDowntime}; docs/decisions/0037-recurring-freezes-drains-and-one-budget.md item 3); not
 *                   carried from report to report, and not written when empty
 */
public record ApplyReport(String host, String module, String revision, String push, ApplyOutcome outcome,
                          Instant startedAt, Instant finishedAt, WindowRef window, List<ContainerResult> containers,
                          @JsonInclude(JsonInclude.Include.NON_NULL) String error,
                          @JsonInclude(JsonInclude.Include.NON_NULL) WindowResult lastWindow,
                          @JsonInclude(JsonInclude.Include.NON_NULL) Applied lastApplied,
                          @JsonInclude(JsonInclude.Include.NON_NULL) String rollout,
                          @JsonInclude(JsonInclude.Include.NON_NULL) FreezeRecord freeze,
                          @JsonInclude(JsonInclude.Include.NON_EMPTY) List<String> appliedPushes,
                          @JsonInclude(JsonInclude.Include.NON_EMPTY) List<Failed> failedPushes,
                          @JsonInclude(JsonInclude.Include.NON_EMPTY) List<String> down) {
    /** How many applied pushes a report keeps ({@code appliedPushes}): about 300 bytes of a report at most. */
    public static final int APPLIED_KEPT = 16;
    /** How many failed pushes a report keeps ({@code failedPushes}): with {@link #FAILED_ERROR_CHARS}, about 2 KB at most. */
    public static final int FAILED_KEPT = 8;
    /** How much of a failed push's error a report keeps in {@code failedPushes}. */
    public static final int FAILED_ERROR_CHARS = 200;

    public ApplyReport {
        // A node edited by hand may hold nulls: dropped, so that the report still reads.
        appliedPushes = appliedPushes == null ? List.of() : appliedPushes.stream().filter(Objects::nonNull).toList();
        failedPushes = failedPushes == null ? List.of() : failedPushes.stream().filter(f -> f != null && f.push() != null).toList();
        down = down == null ? List.of() : down.stream().filter(Objects::nonNull).toList();
    }

    /** A report without {@code down} (a failed apply's look at Docker sets it: {@link #withDown}). */
    public ApplyReport(String host, String module, String revision, String push, ApplyOutcome outcome, Instant startedAt,
                       Instant finishedAt, WindowRef window, List<ContainerResult> containers, String error,
                       WindowResult lastWindow, Applied lastApplied, String rollout, FreezeRecord freeze, List<String> appliedPushes,
                       List<Failed> failedPushes) {
        this(host, module, revision, push, outcome, startedAt, finishedAt, window, containers, error, lastWindow, lastApplied,
                rollout, freeze, appliedPushes, failedPushes, List.of());
    }

    /** A report without {@code failedPushes} (the store carries them over: {@link #withFailedPushes}). */
    public ApplyReport(String host, String module, String revision, String push, ApplyOutcome outcome, Instant startedAt,
                       Instant finishedAt, WindowRef window, List<ContainerResult> containers, String error,
                       WindowResult lastWindow, Applied lastApplied, String rollout, FreezeRecord freeze, List<String> appliedPushes) {
        this(host, module, revision, push, outcome, startedAt, finishedAt, window, containers, error, lastWindow, lastApplied,
                rollout, freeze, appliedPushes, List.of());
    }

    /**
     * A push whose apply failed on this host.
     *
     * @param push  push node name
     * @param error its report's error, cut at {@link #FAILED_ERROR_CHARS}
     */
    public record Failed(String push, String error) {}

    /** A report without {@code freeze} and {@code appliedPushes}: as an apply ends (the store carries the latter over). */
    public ApplyReport(String host, String module, String revision, String push, ApplyOutcome outcome, Instant startedAt,
                       Instant finishedAt, WindowRef window, List<ContainerResult> containers, String error,
                       WindowResult lastWindow, Applied lastApplied, String rollout) {
        this(host, module, revision, push, outcome, startedAt, finishedAt, window, containers, error, lastWindow, lastApplied,
                rollout, null, List.of());
    }

    /*
     * The factories below build a report as an apply ends (finishedAt: now), without lastWindow and lastApplied: the
     * store carries those over from the report it replaces (withLastWindow, withLastApplied).
     */

    /**
     * An apply that ran and left every container as the spec says, held ones aside.
     *
     * @param window     the open window holding some of its containers, {@code null} when none is open
     * @param containers what it did to each container
     * @return an {@code applied} report, finished now
     */
    public static ApplyReport applied(String host, String module, String revision, String push, Instant startedAt,
                                      WindowRef window, List<ContainerResult> containers) {
        return new ApplyReport(host, module, revision, push, ApplyOutcome.APPLIED, startedAt, Times.now(), window, containers,
                null, null, null, null);
    }

    /**
     * An apply that ran and could not do everything.
     *
     * @param window     the open window holding some of its containers, {@code null} when none is open
     * @param containers what it did to each container, the failed ones included
     * @param error      what failed
     * @return a {@code failed} report, finished now
     */
    public static ApplyReport failed(String host, String module, String revision, String push, Instant startedAt,
                                     WindowRef window, List<ContainerResult> containers, String error) {
        return new ApplyReport(host, module, revision, push, ApplyOutcome.FAILED, startedAt, Times.now(), window, containers,
                error, null, null, null);
    }

    /**
     * An apply that failed before it acted on any container.
     *
     * @param revision the desired revision, {@code null} when it could not be read
     * @param push     its push, {@code null} when it could not be read
     * @param error    why
     * @return a {@code failed} report without containers, finished now
     */
    public static ApplyReport failed(String host, String module, String revision, String push, Instant startedAt, String error) {
        return failed(host, module, revision, push, startedAt, null, List.of(), error);
    }

    /**
     * An apply that a window's hold on the module lock deferred.
     *
     * @param window the window holding the lock
     * @param held   one {@code held} entry per container the window holds
     * @return a {@code deferred} report, finished now
     */
    public static ApplyReport deferred(String host, String module, String revision, String push, Instant startedAt,
                                       WindowRef window, List<ContainerResult> held) {
        return new ApplyReport(host, module, revision, push, ApplyOutcome.DEFERRED, startedAt, Times.now(), window, held,
                null, null, null, null);
    }

    /**
     * The report of a module no apply has reported on yet, for a window's result to be carried in
     * ({@link #withLastWindow}): no outcome, no times, no containers.
     *
     * @param revision the desired revision, {@code null} when none
     * @param push     its push, {@code null} when none
     * @return a report with only its host, module, revision and push
     */
    public static ApplyReport noApply(String host, String module, String revision, String push) {
        return new ApplyReport(host, module, revision, push, null, null, null, null, List.of(), null, null, null, null);
    }

    /**
     * A module with containers on the host and no desired node (docs/decisions/0039-backups-and-an-empty-ensemble.md
     * item 5): no push, no revision, no containers; nothing was done.
     */
    public static ApplyReport noDesiredState(String host, String module, Instant startedAt, Instant finishedAt) {
        return new ApplyReport(host, module, null, null, ApplyOutcome.NO_DESIRED_STATE, startedAt, finishedAt, null, List.of(), null, null, null, null);
    }

    /**
     * The last push applied.
     *
     * @param push     push node name
     * @param revision its revision
     * @param at       when the apply finished
     */
    public record Applied(String push, String revision, Instant at) {}

    /**
     * Carries what the report this one replaces says was applied.
     *
     * @param carried       the {@code lastApplied} of the report this one replaces, or {@code null}
     * @param carriedPushes its {@code appliedPushes} (empty when none)
     * @return this report with {@code lastApplied} set: itself when applied; else the one it names already (a rollout
     *         that put the previous revision back: {@link #withKept}); else the one carried. And {@code appliedPushes}:
     *         the carried ones (push names no newer than this report's push or that one) and that push, newest first
     *         (by push sequence), at most {@link #APPLIED_KEPT}; without this report's own push when another runs here
     *         (a rollout that went back from it: decision 13 says the push it left does not read applied)
     */
    public ApplyReport withLastApplied(Applied carried, List<String> carriedPushes) {
        Applied a = outcome == ApplyOutcome.APPLIED && push != null ? new Applied(push, revision, finishedAt)
                : lastApplied != null ? lastApplied : carried;
        // Push names have distinct sequence numbers: the order is the set's identity.
        TreeSet<String> pushes = new TreeSet<>(Comparator.comparingLong(ZkPaths::pushSeq));
        // Only push names no newer than what this report names: a node edited by hand cannot push real ones out.
        long newest = Math.max(ZkPaths.pushSeq(push), a == null ? -1 : ZkPaths.pushSeq(a.push()));
        if (carriedPushes != null) {
            carriedPushes.stream().filter(p -> p != null && ZkPaths.PUSH_NAME.matcher(p).matches() && ZkPaths.pushSeq(p) <= newest)
                    .forEach(pushes::add);
        }
        if (a != null && a.push() != null) pushes.add(a.push());
        if (a != null && push != null && !push.equals(a.push())) pushes.remove(push);
        List<String> newestFirst = pushes.descendingSet().stream().limit(APPLIED_KEPT).toList();
        return new ApplyReport(host, module, revision, push, outcome, startedAt, finishedAt, window, containers, error, lastWindow, a,
                rollout, freeze, newestFirst, failedPushes, down);
    }

    /**
     * @param p a push node name
     * @return true when this host applied {@code p} for this module, as far as this report remembers: it is the
     *         {@code lastApplied} or one of the {@code appliedPushes}
     */
    public boolean applied(String p) {
        return p != null && (lastApplied != null && p.equals(lastApplied.push()) || appliedPushes.contains(p));
    }

    /**
     * Carries what the report this one replaces says failed ({@code failedPushes}), after {@link #withLastApplied}.
     *
     * @param carried the {@code failedPushes} of the report this one replaces (empty when none)
     * @return this report with {@code failedPushes}: the carried ones (push names no newer than this report's push) and,
     *         when this report is {@code failed}, its own push with its error; less the pushes this host applied
     *         ({@link #applied}: a push that failed, then ran, ran); newest first by push sequence, at most
     *         {@link #FAILED_KEPT}
     */
    public ApplyReport withFailedPushes(List<Failed> carried) {
        java.util.TreeMap<Long, Failed> bySeq = new java.util.TreeMap<>();
        long newest = ZkPaths.pushSeq(push);
        if (carried != null) {
            for (Failed f : carried) {
                if (f == null || f.push() == null || !ZkPaths.PUSH_NAME.matcher(f.push()).matches() || ZkPaths.pushSeq(f.push()) > newest) continue;
                bySeq.put(ZkPaths.pushSeq(f.push()), new Failed(f.push(), cut(f.error())));
            }
        }
        if (outcome == ApplyOutcome.FAILED && push != null && ZkPaths.PUSH_NAME.matcher(push).matches()) {
            bySeq.put(newest, new Failed(push, cut(error)));
        }
        List<Failed> out = bySeq.descendingMap().values().stream().filter(f -> !applied(f.push())).limit(FAILED_KEPT).toList();
        return new ApplyReport(host, module, revision, push, outcome, startedAt, finishedAt, window, containers, error, lastWindow,
                lastApplied, rollout, freeze, appliedPushes, out, down);
    }

    private static String cut(String error) {
        if (error == null || error.length() <= FAILED_ERROR_CHARS) return error;
        return error.substring(0, FAILED_ERROR_CHARS - 3) + "...";
    }

    /**
     * @param p a push node name
     * @return this host's failure of {@code p} for this module, as far as this report remembers ({@code failedPushes}),
     *         unless it applied {@code p} since; else {@code null}
     */
    public Failed failed(String p) {
        if (p == null || applied(p)) return null;
        return failedPushes.stream().filter(f -> p.equals(f.push())).findFirst().orElse(null);
    }

    /** @return this report with the last window's result set */
    public ApplyReport withLastWindow(WindowResult w) {
        return new ApplyReport(host, module, revision, push, outcome, startedAt, finishedAt, window, containers, error, w, lastApplied, rollout, freeze,
                appliedPushes, failedPushes, down);
    }

    /**
     * @param kept the desired state a rollout kept on this host and that this apply ran (decision 13)
     * @return this report naming it as the last applied push, so that a host put back on the previous revision does not
     *         read {@code applied} for the push it left
     */
    public ApplyReport withKept(DesiredRecord kept) {
        return new ApplyReport(host, module, revision, push, outcome, startedAt, finishedAt, window, containers, error, lastWindow,
                new Applied(kept.push(), kept.revision(), finishedAt), rollout, freeze, appliedPushes, failedPushes, down);
    }

    /**
     * @param outcome {@link ApplyOutcome#DEFERRED} while the host waits for its wave, or {@link ApplyOutcome#FAILED} for a
     *                rollout reverted or aborted
     * @param why     why the rollout keeps the previous revision here
     * @return this report with that outcome and {@code rollout} (and, when failed, {@code error}) set
     */
    public ApplyReport withRollout(ApplyOutcome outcome, String why) {
        String e = outcome == ApplyOutcome.FAILED ? (error == null ? why : error + "; " + why) : error;
        return new ApplyReport(host, module, revision, push, outcome, startedAt, finishedAt, window, containers, e, lastWindow,
                lastApplied, why, freeze, appliedPushes, failedPushes, down);
    }

    /**
     * @param left the Docker names of the spec's containers that a failed apply left not running, held ones aside, as
     *             Docker said after it
     * @return this report with {@code down} set: a cause that takes a place of a group's limit (SPEC.md "The rest of the
     *         operator's stack"; {@link GroupDowntime})
     */
    public ApplyReport withDown(List<String> left) {
        return new ApplyReport(host, module, revision, push, outcome, startedAt, finishedAt, window, containers, error, lastWindow,
                lastApplied, rollout, freeze, appliedPushes, failedPushes, left);
    }

    /**
     * A frozen module's apply: nothing was done (no Docker call), and the newest revision lands when the freeze ends.
     *
     * @param freeze the freeze in force
     * @return this report, {@code deferred}, with {@code freeze} set
     */
    public ApplyReport withFreeze(FreezeRecord freeze) {
        return new ApplyReport(host, module, revision, push, ApplyOutcome.DEFERRED, startedAt, finishedAt, window, containers, error,
                lastWindow, lastApplied, rollout, freeze, appliedPushes, failedPushes, down);
    }

    /**
     * The open window named in a report.
     *
     * @param schedule schedule name
     * @param window   window id
     * @param since    when it opened
     * @param held     Docker names of the containers it holds
     */
    public record WindowRef(String schedule, String window, Instant since, List<String> held) {
        /** @return the reference to an open window */
        public static WindowRef of(WindowRecord w) {
            return new WindowRef(w.schedule(), w.window(), w.since(), w.held());
        }
    }

    /**
     * What the apply did to one container.
     *
     * @param name      container name in the spec
     * @param container Docker name {@code <module>-<name>}
     * @param action    what the apply did
     * @param reasons   why, such as {@code image: a -> b} or {@code not running: exited (137)}; empty when none
     * @param id        Docker container id after the apply (before it, for removed)
     * @param health    {@code healthy}, {@code unhealthy}, {@code starting} or {@code none} (no healthcheck), as Docker
     *                  last said; {@code null} when not known (removed, failed before it ran)
     * @param imageId   the image the container runs ({@code sha256:...}: Docker's image id, the digest of the image's
     *                  configuration); {@code null} when not known
     * @param imageDigest the same image as its registry names it, {@code <repository>@sha256:...} (the manifest digest
     *                  a pull or push gave it, which {@code docker pull <imageDigest>} fetches again); {@code null} when
     *                  the image never came from or went to a registry ({@code docker load}, {@code docker import}) or
     *                  when {@code imageId} is not known (decision 20)
     */
    public record ContainerResult(String name, String container, ContainerAction action, List<String> reasons, String id,
                                  @JsonInclude(JsonInclude.Include.NON_NULL) String health,
                                  @JsonInclude(JsonInclude.Include.NON_NULL) String imageId,
                                  @JsonInclude(JsonInclude.Include.NON_NULL) String imageDigest) {
        /** A result with no health or image known. */
        public ContainerResult(String name, String container, ContainerAction action, List<String> reasons, String id) {
            this(name, container, action, reasons, id, null, null, null);
        }

        /** A result whose image's registry digest is not known (yet: {@link #withImageDigest}). */
        public ContainerResult(String name, String container, ContainerAction action, List<String> reasons, String id,
                               String health, String imageId) {
            this(name, container, action, reasons, id, health, imageId, null);
        }

        /** @return this result with {@code imageDigest} set */
        public ContainerResult withImageDigest(String digest) {
            return new ContainerResult(name, container, action, reasons, id, health, imageId, digest);
        }

        /**
         * @param reasons other reasons (such as the same with a container's secret values taken out)
         * @return this result with them
         */
        public ContainerResult withReasons(List<String> reasons) {
            return new ContainerResult(name, container, action, List.copyOf(reasons), id, health, imageId);
        }

        /**
         * @param reason such as {@code held by window garbage-collect since ...}
         * @param id     Docker container id, {@code null} when its held node is gone meanwhile
         * @return a container an open window holds, left untouched
         */
        public static ContainerResult held(String name, String container, String reason, String id) {
            return new ContainerResult(name, container, ContainerAction.HELD, List.of(reason), id);
        }
    }
}
