package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import java.time.Instant;

/**
 * One event for webhooks (SPEC.md, "The rest of the operator's stack";
 * docs/decisions/0034-webhooks-from-an-outbox.md): the data of an outbox node {@code /mesh/events/<writer>/e-<seq>},
 * and, with its {@code id}, the body a webhook of {@code format: json} receives. Fields without a value are left out.
 *
 * @param id       {@code <writer>/e-<seq>}, the node's path below {@code /mesh/events}: not stored in the node (its name
 *                 is known only once ZooKeeper made it), added by the sender. Receivers dedupe on it.
 * @param type     what happened
 * @param time     when it happened, by the writer's clock (ISO-8601 UTC)
 * @param host     the host it happened on; {@code null} for a coordinator's event that concerns no one host
 * @param module   the module it concerns ({@link FreezeRecord#ALL} for a freeze of every module): the sender's queue
 * @param container the container's Docker name, for a hold
 * @param push     the push, for a push's or rollout's event
 * @param schedule the schedule, for a window's event
 * @param window   the window's id, for a window's event
 * @param by       who asked for it (an operator's token name)
 * @param reason   why, in words (a window's error or skip reason; a hold's or freeze's reason)
 * @param outcome  how a window ended ({@link WindowOutcome#wire()})
 * @param exitCode a window step's exit code, when it ran
 * @param held     the Docker names of the containers a window holds (or held)
 * @param until    when a hold or freeze ends by itself
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonPropertyOrder({"id", "type", "time", "host", "module", "container", "push", "schedule", "window", "by", "reason", "outcome", "exitCode", "held", "until"})
public record MeshEvent(String id, EventType type, Instant time, String host, String module, String container, String push,
                        String schedule, String window, String by, String reason, String outcome, Integer exitCode,
                        java.util.List<String> held, Instant until) {

    /**
     * @param type   what happened
     * @param time   when
     * @param host   where, or {@code null}
     * @param module which module
     * @return an event with only those fields
     */
    public static MeshEvent of(EventType type, Instant time, String host, String module) {
        return new MeshEvent(null, type, time, host, module, null, null, null, null, null, null, null, null, null, null);
    }

    /** @return this event with that id (the sender's, from the node's path) */
    public MeshEvent withId(String id) {
        return new MeshEvent(id, type, time, host, module, container, push, schedule, window, by, reason, outcome, exitCode, held, until);
    }

    /** @return this event with that container */
    public MeshEvent withContainer(String c) {
        return new MeshEvent(id, type, time, host, module, c, push, schedule, window, by, reason, outcome, exitCode, held, until);
    }

    /** @return this event with that push */
    public MeshEvent withPush(String p) {
        return new MeshEvent(id, type, time, host, module, container, p, schedule, window, by, reason, outcome, exitCode, held, until);
    }

    /** @return this event with that schedule and window id */
    public MeshEvent withWindow(String s, String w) {
        return new MeshEvent(id, type, time, host, module, container, push, s, w, by, reason, outcome, exitCode, held, until);
    }

    /** @return this event with who asked and why */
    public MeshEvent withBy(String b, String r) {
        return new MeshEvent(id, type, time, host, module, container, push, schedule, window, b, r, outcome, exitCode, held, until);
    }

    /** @return this event with a window's outcome and its step's exit code ({@code null} when it never ran) */
    public MeshEvent withOutcome(String o, Integer exit) {
        return new MeshEvent(id, type, time, host, module, container, push, schedule, window, by, reason, o, exit, held, until);
    }

    /** @return this event with the containers a window holds; none is left out */
    public MeshEvent withHeld(java.util.List<String> h) {
        return new MeshEvent(id, type, time, host, module, container, push, schedule, window, by, reason, outcome, exitCode,
                h == null || h.isEmpty() ? null : java.util.List.copyOf(h), until);
    }

    /** @return this event with the end of its hold or freeze */
    public MeshEvent withUntil(Instant u) {
        return new MeshEvent(id, type, time, host, module, container, push, schedule, window, by, reason, outcome, exitCode, held, u);
    }

    /**
     * @return one line for people (a Slack message): {@code [mesh] window.failed store on host-a (schedule gc, window
     *         w-...): step exited 1 [host-a/e-0000000003]}
     */
    public String text() {
        StringBuilder b = new StringBuilder("[mesh] ").append(type);
        if (module != null) b.append(' ').append("_all".equals(module) ? "every module" : module);
        if (container != null) b.append(" container ").append(container);
        if (host != null) b.append(" on ").append(host);
        StringBuilder about = new StringBuilder();
        if (schedule != null) about.append("schedule ").append(schedule);
        if (window != null) about.append(about.isEmpty() ? "" : ", ").append("window ").append(window);
        if (push != null) about.append(about.isEmpty() ? "" : ", ").append(push);
        if (by != null) about.append(about.isEmpty() ? "" : ", ").append("by ").append(by);
        if (!about.isEmpty()) b.append(" (").append(about).append(')');
        if (held != null) b.append(" holding ").append(String.join(", ", held));
        if (outcome != null) b.append(": ").append(outcome).append(exitCode == null ? "" : " (exit " + exitCode + ")");
        if (reason != null) b.append(outcome != null ? "; " : ": ").append(reason);
        if (until != null) b.append(", until ").append(until);
        if (id != null) b.append(" [").append(id).append(']');
        return b.toString();
    }
}
