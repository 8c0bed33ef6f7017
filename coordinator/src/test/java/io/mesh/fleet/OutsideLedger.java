package io.mesh.fleet;

import com.github.dockerjava.api.model.Event;
import io.mesh.docker.Labels;
import io.mesh.ledger.LedgerFiles;
import io.mesh.wire.FreezeRecord;
import io.mesh.wire.LedgerEntry;
import io.mesh.wire.LedgerKind;

import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A host's ledger as the product's checker ({@link io.mesh.wire.AuditChecker}, SPEC.md "Audit") reads it, written
 * from evidence recorded outside mesh: the engine's Docker events as the test recorded them, the held intervals of
 * windows and operators' holds and the freezes from ZooKeeper's transaction log ({@link HistoryChecks}' records). Only
 * the Docker calls come from the host's own ledger: they say which mesh process made an event, and for whom, which no
 * outside record can. So the fleet's history is judged by the one implementation of SPEC's rules, over what mesh did
 * not write but its calls.
 */
final class OutsideLedger {
    private OutsideLedger() {}

    /**
     * @param stateDir an agent's state directory
     * @return the Docker calls its ledger holds (the daemon's and its window processes')
     * @throws IllegalStateException when it has no ledger at all: with no call to account for anything, nothing could be
     *                               judged an apply's or a window's, and the run must not read as judged
     */
    static List<LedgerEntry> calls(Path stateDir) {
        LedgerFiles files = LedgerFiles.of(stateDir);
        if (files.files().isEmpty()) throw new IllegalStateException("no ledger under " + stateDir + ": the product's checker has no calls to read");
        return files.all().stream().filter(e -> e.kind() == LedgerKind.CALL).toList();
    }

    /**
     * @param host   the host
     * @param checks the run's records, read ({@link HistoryChecks#run()})
     * @param events the host's Docker events
     * @param calls  the host's calls ({@link #calls})
     * @return the host's ledger lines: its events, held intervals and the freezes, and its calls
     */
    static List<LedgerEntry> of(String host, HistoryChecks checks, List<Event> events, List<LedgerEntry> calls) {
        List<LedgerEntry> out = new ArrayList<>(calls);
        for (Event ev : events) {
            Map<String, String> a = EngineEvents.attributes(ev);
            out.add(LedgerEntry.event(Instant.ofEpochSecond(0, EngineEvents.time(ev)), a.get(Labels.MODULE), EngineEvents.name(ev),
                    ev.getId(), EngineEvents.action(ev), a.get(Labels.WINDOW), a.get("exitCode")));
        }
        for (HistoryChecks.Held h : checks.held) {
            if (!h.host.equals(host)) continue;
            out.add(LedgerEntry.held(LedgerKind.HELD_OPEN, Instant.ofEpochMilli(h.fromMs), h.module, h.container, h.containerId,
                    LedgerEntry.WINDOW, h.window, null, null, null, null));
            long end = checks.heldEndMs(h);
            if (end >= 0) {
                out.add(LedgerEntry.held(LedgerKind.HELD_CLOSE, Instant.ofEpochMilli(end), h.module, h.container, h.containerId,
                        LedgerEntry.WINDOW, h.window, null, null, null, null));
            }
        }
        for (HistoryChecks.OpHold h : checks.holds) {
            // in force from its host's confirmation (SPEC.md "Operator holds"): before it, an apply may still finish
            if (!h.host.equals(host) || h.confirmedMs < 0) continue;
            out.add(LedgerEntry.held(LedgerKind.HELD_OPEN, Instant.ofEpochMilli(h.confirmedMs), h.module, h.container, null,
                    LedgerEntry.OPERATOR, null, null, h.by, h.hold.reason(), h.hold.until()));
            if (h.toMs >= 0) {
                out.add(LedgerEntry.held(LedgerKind.HELD_CLOSE, Instant.ofEpochMilli(h.toMs), h.module, h.container, null,
                        LedgerEntry.OPERATOR, null, null, h.by, h.hold.reason(), h.hold.until()));
            }
        }
        for (HistoryChecks.Frozen f : checks.frozen) {
            // obeyed from when the agents can have read it: the write, plus the grace a change begun before it has
            long from = f.fromMs() + HistoryChecks.FREEZE_GRACE_MS;
            Instant until = f.toMs() == Long.MAX_VALUE ? null : Instant.ofEpochMilli(f.toMs());
            if (until != null && from >= f.toMs()) continue;
            String module = FreezeRecord.ALL.equals(f.target()) ? LedgerEntry.ALL_MODULES : f.target();
            out.add(LedgerEntry.freeze(LedgerKind.FREEZE_OPEN, Instant.ofEpochMilli(from), module, f.by(), null, until));
            if (until != null) out.add(LedgerEntry.freeze(LedgerKind.FREEZE_CLOSE, until, module, f.by(), null, until));
        }
        return out;
    }

    /**
     * @param checks the run's records, read
     * @param calls  per host, its calls
     * @return per host, its ledger lines ({@link #of})
     */
    static Map<String, List<LedgerEntry>> all(HistoryChecks checks, Map<String, List<LedgerEntry>> calls) {
        Map<String, List<LedgerEntry>> out = new LinkedHashMap<>();
        checks.events().forEach((host, evs) -> out.put(host, of(host, checks, evs, calls.getOrDefault(host, List.of()))));
        return out;
    }
}
