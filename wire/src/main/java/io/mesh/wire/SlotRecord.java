package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import java.time.Duration;
import java.time.Instant;

/**
 * A window at a fleet-wide slot (SPEC.md, "Fleet-wide windows"; docs/decisions/0016-window-slots.md): the data of its
 * queue node while it waits, of its {@code InterProcessSemaphoreV2} lease and of its claim while it runs, so that
 * {@code zkCli} and {@code mesh windows} show who runs and who waits.
 *
 * @param key      the slot, such as {@code group-registries} or {@code window-store-garbage-collect}
 * @param limit    how many windows the slot lets run at once
 * @param host     host id
 * @param module   module name
 * @param schedule schedule name
 * @param window   window id
 * @param state    waiting or running
 * @param firedAt  the cron time (or request time) the window is of
 * @param since    when it began to wait, or to run
 * @param until    running: when the claim stops counting even if never given back (the window's journal deadline);
 *                 waiting: when it is skipped (its start-by)
 * @param by       the process of the window
 */
@JsonPropertyOrder({"key", "limit", "host", "module", "schedule", "window", "state", "firedAt", "since", "until", "by"})
public record SlotRecord(String key, int limit, String host, String module, String schedule, String window, SlotState state,
                         Instant firedAt, Instant since, Instant until, ProcessRef by) {
    /** @return the same window, running from {@code now} until {@code until} */
    public SlotRecord running(Instant now, Instant until) {
        return new SlotRecord(key, limit, host, module, schedule, window, SlotState.RUNNING, firedAt, now, until, by);
    }

    /** @return true when this record names the same window as {@code other} */
    public boolean sameWindow(SlotRecord other) {
        return other != null && host.equals(other.host) && module.equals(other.module) && window.equals(other.window);
    }

    /** @return how long it has waited or run at {@code now} */
    public Duration age(Instant now) { return since == null ? Duration.ZERO : Duration.between(since, now); }
}
