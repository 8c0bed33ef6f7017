package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonInclude;

import java.time.Instant;
import java.util.Set;

/**
 * One line of a host's ledger (SPEC.md, "Audit"; decision 28): a Docker event of a mesh container, a Docker call a
 * mesh process made with its cause, a held interval's opening or closing, a freeze's, or a gap. Fields a kind does not
 * use are absent from the JSON. Times are the host's clock, to the nanosecond where Docker gives it (an event's
 * {@code timeNano}).
 *
 * @param kind        what the line records
 * @param at          when: the event's time, the call's start, the interval's opening or closing, the gap's start
 * @param end         a call's end (absent when its process died in it); a gap's end
 * @param module      the container's {@code mesh.module}; a freeze's module ({@code _all}: every module)
 * @param container   the Docker name ({@code <module>-<name>}; a step container's name)
 * @param containerId the Docker id (a create's: the id it returned)
 * @param action      an event's action ({@code create}, {@code start}, {@code die}, ...); a call's operation
 *                    ({@link #CALL_ACTIONS})
 * @param cause       a call's cause: {@code push-<seq>} (an apply), {@code window:<schedule>} (a window or its recovery),
 *                    {@code hold} (a hold's {@code --stop}), {@code repair} (a start during a freeze or rollout wait)
 * @param window      the window id ({@code w-...}) of a window's call or held interval, or of a step container's event
 * @param schedule    the window's schedule
 * @param holder      a held interval's holder: {@code window} or {@code operator}
 * @param by          who: an operator hold's or freeze's {@code by}
 * @param reason      a hold's or freeze's reason; a gap's cause; a failed call's error
 * @param until       a hold's or freeze's announced end
 * @param exitCode    a {@code die} event's exit code
 * @param pid         the process that made a call or wrote the line
 * @param process     that process's name ({@code mesh-agent run}, {@code mesh-agent window})
 * @param outcome     how a call ended, on its end line ({@link CallOutcome#REFUSED}: Docker was never asked)
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record LedgerEntry(LedgerKind kind, Instant at, Instant end, String module, String container, String containerId,
                          String action, String cause, String window, String schedule, String holder, String by,
                          String reason, Instant until, String exitCode, Long pid, String process, CallOutcome outcome) {

    /**
     * Every call operation a ledger records: the {@link io.mesh.wire} name of each container operation mesh makes
     * ({@code run}: a window's step, started and waited for; {@code exec}: a container's hook, decision 38, which
     * changes no container's state; {@link AuditChecker#makes}).
     */
    public static final Set<String> CALL_ACTIONS = Set.of("create", "start", "stop", "kill", "remove", "rename", "update", "run", "exec");
    /** A held interval's holder that is a window. */
    public static final String WINDOW = "window";
    /** A held interval's holder that is an operator's hold. */
    public static final String OPERATOR = "operator";
    /** The module of a freeze of every module. */
    public static final String ALL_MODULES = "_all";

    /**
     * @return a Docker event's line
     */
    public static LedgerEntry event(Instant at, String module, String container, String containerId, String action,
                                    String window, String exitCode) {
        return new LedgerEntry(LedgerKind.EVENT, at, null, module, container, containerId, action, null, window, null, null,
                null, null, null, exitCode, null, null, null);
    }

    /**
     * @param action one of {@link #CALL_ACTIONS}
     * @return a call's line, before its end is known ({@link #ended})
     */
    public static LedgerEntry call(Instant at, String module, String container, String containerId, String action,
                                   String cause, String window, String schedule, ProcessRef by) {
        return new LedgerEntry(LedgerKind.CALL, at, null, module, container, containerId, action, cause, window, schedule,
                null, null, null, null, null, by == null ? null : by.pid(), by == null ? null : by.process(), null);
    }

    /**
     * @param when        the call's end
     * @param containerId the id the call worked on (a create's new id)
     * @param error       its error, or {@code null}
     * @return this call, ended
     */
    public LedgerEntry ended(Instant when, String containerId, String error) {
        return ended(when, containerId, error, error == null ? CallOutcome.MADE : CallOutcome.FAILED);
    }

    /**
     * @param when        the call's end
     * @param containerId the id the call worked on
     * @param error       its error, or {@code null}
     * @param outcome     how it ended ({@link CallOutcome#REFUSED}: Docker was never asked)
     * @return this call, ended
     */
    public LedgerEntry ended(Instant when, String containerId, String error, CallOutcome outcome) {
        return new LedgerEntry(kind, at, when, module, container, containerId != null ? containerId : this.containerId, action,
                cause, window, schedule, holder, by, error, until, exitCode, pid, process, outcome);
    }

    /** @return an {@link LedgerKind#APPLY} line: {@code by}'s apply of {@code module} for push {@code cause} began at {@code at} */
    public static LedgerEntry apply(Instant at, String module, String cause, ProcessRef by) {
        return new LedgerEntry(LedgerKind.APPLY, at, null, module, null, null, null, cause, null, null, null, null, null, null,
                null, by == null ? null : by.pid(), by == null ? null : by.process(), null);
    }

    /**
     * @return which apply an {@link LedgerKind#APPLY} line or an apply's call belongs to: its process, push and module
     *         ({@link AuditChecker}'s freeze rule; {@code LedgerFiles} carries the last such line before a slice)
     */
    public String applyKey() {
        return pid + "|" + cause + "|" + module;
    }

    /** @return a held interval's opening ({@code kind} {@link LedgerKind#HELD_OPEN}) or closing */
    public static LedgerEntry held(LedgerKind kind, Instant at, String module, String container, String containerId,
                                   String holder, String window, String schedule, String by, String reason, Instant until) {
        return new LedgerEntry(kind, at, null, module, container, containerId, null, null, window, schedule, holder, by,
                reason, until, null, null, null, null);
    }

    /** @return a freeze's opening ({@code kind} {@link LedgerKind#FREEZE_OPEN}) or closing */
    public static LedgerEntry freeze(LedgerKind kind, Instant at, String module, String by, String reason, Instant until) {
        return new LedgerEntry(kind, at, null, module, null, null, null, null, null, null, null, by, reason, until, null,
                null, null, null);
    }

    /** @return a span the ledger does not cover, and why */
    public static LedgerEntry gap(Instant from, Instant to, String reason) {
        return new LedgerEntry(LedgerKind.GAP, from, to, null, null, null, null, null, null, null, null, null, reason, null,
                null, null, null, null);
    }

    /** @return the line that says the agent began following events, and how far back its engine's buffer reached */
    public static LedgerEntry follow(Instant at, String reason) {
        return new LedgerEntry(LedgerKind.FOLLOW, at, null, null, null, null, null, null, null, null, null, null, reason,
                null, null, null, null, null);
    }
}
