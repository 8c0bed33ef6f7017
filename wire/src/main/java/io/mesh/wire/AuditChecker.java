package io.mesh.wire;

import io.mesh.wire.AuditReport.Item;
import io.mesh.wire.AuditReport.Violation;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The one checker of mesh's promise over a host's ledger (SPEC.md, "Audit"; decision 28): {@code mesh audit}, each
 * agent's continuous audit and the fleet's history tests run this class. Pure: it reads ledger lines and judges them.
 *
 * <p>The rules, over one host's lines:
 * <ul>
 *   <li>A Docker event that touches a container ({@link #TOUCH}) is accounted for by a call of a mesh process on the
 *       same container whose operation makes that event ({@link #makes}), between the call's start and end (give or
 *       take {@link #EARLY} before it and {@link #SLACK} after it; a call whose process died in it ends where a call
 *       on its container began a session or more after it, {@link #UNENDED_CALL} at most: {@link #spans}); each call
 *       accounts for one event of each action, the
 *       call nearest the event first. An event no call accounts for is
 *       {@code outside-mesh}.</li>
 *   <li>A touch of a container while it is held is {@code touched-while-held} unless a call of its own window (the
 *       same window id) made it; a touch whose call ended before the interval began (or began after it ended) is
 *       judged at its call's time ({@link #outside}); under an operator's hold, unless the hold's {@code --stop} (cause {@code hold}) made
 *       it, or it is the {@code update} by which a window puts the restart policy back as it keeps the container
 *       stopped (SPEC.md, "Operator holds").</li>
 *   <li>A window's held container that the window stopped must be started again (a {@code start} after the window's
 *       last stop) within {@link #LEFT_STOPPED_AFTER} of the window's held interval closing, unless an operator holds it
 *       by then: else {@code left-stopped}.</li>
 *   <li>An apply's call ({@code push-<seq>} cause) that creates, removes, renames, stops or kills a container of a module
 *       while the agent obeyed a freeze of it (or of {@code _all}), made by an apply that began during the freeze, is
 *       {@code changed-while-frozen}; an apply under way when the freeze came finishes the container it is on. Starts
 *       and restart policy updates are repairs, which a freeze lets through (SPEC.md, "Freezes").</li>
 *   <li>A call the module section refused before Docker was asked ({@link CallOutcome#REFUSED}) is no call: it
 *       accounts for no event and changes nothing.</li>
 *   <li>Every {@code gap} line overlapping the span is a {@code gap}.</li>
 *   <li>An event written twice is one event (the same container id, action and engine time): a daemon that starts
 *       again replays the engine's events from its anchor, the anchor among them, and after a {@code kill -9} the
 *       events of up to a second more (decision 28: the anchor is written at most once a second).</li>
 * </ul>
 */
public final class AuditChecker {
    /** The Docker actions that touch a container (SPEC.md, "Audit": {@code touched-while-held}). */
    public static final Set<String> TOUCH = Set.of("create", "start", "stop", "kill", "restart", "rename", "update", "destroy");
    /** How far a call's event may lie outside the call's start and end (Docker stamps events as it makes them). */
    public static final Duration SLACK = Duration.ofSeconds(1);
    /**
     * How far before a call's start its event may lie: only the difference between the engine's clock and the ledger's
     * reading of it (decision 28), never Docker acting before it is asked. A call that made no event (a stop of what
     * had stopped) must not claim a touch made by other hands just before it.
     */
    public static final Duration EARLY = Duration.ofMillis(250);
    /**
     * A call whose end the ledger lacks (its process died in it) accounts for events this long after its start, or
     * until a later call on its container began, if sooner, when that call began {@link Times#SESSION_TIMEOUT} or
     * more after it ({@link #spans}).
     */
    public static final Duration UNENDED_CALL = Duration.ofMinutes(2);
    /**
     * How far an {@link LedgerKind#APPLY} line may be stamped after a call of its apply: the ledger's clock follows the
     * engine's, and a re-read of the offset can step it back (decision 28, "The engine's clock stamps every line").
     */
    public static final Duration CLOCK_STEP = Duration.ofSeconds(5);
    /** SPEC.md, "Audit": {@code left-stopped}. */
    public static final Duration LEFT_STOPPED_AFTER = Duration.ofSeconds(60);
    /** A pause between two calls of one process, push and module longer than this begins another apply of it. */
    public static final Duration APPLY_PAUSE = Duration.ofMinutes(2);
    /** What an apply may not do to a frozen module. */
    private static final Set<String> CHANGES = Set.of("create", "remove", "rename", "stop", "kill");

    private AuditChecker() {}

    /**
     * The Docker actions a call's operation makes.
     *
     * @param callAction a call's operation ({@link LedgerEntry#CALL_ACTIONS})
     * @return the event actions it accounts for
     */
    public static Set<String> makes(String callAction) {
        return switch (callAction == null ? "" : callAction) {
            case "create" -> Set.of("create");
            case "start" -> Set.of("start");
            case "stop" -> Set.of("kill", "die", "stop");
            case "kill" -> Set.of("kill", "die");
            case "remove" -> Set.of("kill", "die", "stop", "destroy");
            case "rename" -> Set.of("rename");
            case "update" -> Set.of("update");
            case "run" -> Set.of("start", "kill", "die", "stop");
            // A hook (decision 38): Docker's exec_create, exec_start and exec_die, none of which is in TOUCH. An exec
            // accounts for no touch, so a container that a hook kills from inside shows as what follows (a restart
            // policy's start is outside-mesh), never as mesh's doing.
            case "exec" -> Set.of();
            default -> Set.of();
        };
    }

    /** A held interval of one container. */
    private record Held(String container, String containerId, String holder, String key, String module, String window,
                        String schedule, String by, String reason, Instant from, Instant to) {
        boolean covers(Instant t) { return !t.isBefore(from) && (to == null || !t.isAfter(to)); }

        boolean overlaps(Instant a, Instant b) { return !b.isBefore(from) && (to == null || !a.isAfter(to)); }
    }

    /** A freeze the agent obeyed. */
    private record Freeze(String module, String by, String reason, Instant from, Instant to) {
        boolean covers(Instant t) { return !t.isBefore(from) && (to == null || t.isBefore(to)); }

        String id() { return "freeze:" + module + ":" + from; }
    }

    /**
     * Judges one host's ledger over a span.
     *
     * @param host    the host
     * @param lines   its ledger lines that bear on the span (those in it, plus earlier openings still open at its start,
     *                plus up to {@link #LEFT_STOPPED_AFTER} after it), in any order
     * @param from    the span's start
     * @param to      the span's end
     * @param modules the modules to report, or {@code null} for all
     * @param now     the time of the ledger's newest line may not pass (its writer's clock): an interval whose judgement
     *                needs a later time is {@code open}
     * @return the host's report
     */
    public static AuditReport check(String host, List<LedgerEntry> lines, Instant from, Instant to, Set<String> modules, Instant now) {
        List<LedgerEntry> all = new ArrayList<>(lines);
        all.removeIf(e -> e == null || e.kind() == null || e.at() == null);
        all.sort(Comparator.comparing(LedgerEntry::at));
        Predicate<String> wanted = m -> modules == null || m == null || modules.contains(m) || LedgerEntry.ALL_MODULES.equals(m);
        Instant coveredFrom = all.isEmpty() ? null : all.get(0).at();

        List<Held> held = heldIntervals(all);
        List<Freeze> freezes = freezes(all, now);
        List<LedgerEntry> calls = calls(all);
        Map<LedgerEntry, Instant> ends = spans(calls);
        Set<String> distinct = new HashSet<>();
        List<LedgerEntry> events = all.stream().filter(e -> e.kind() == LedgerKind.EVENT)
                .filter(e -> distinct.add(e.containerId() + "|" + e.container() + "|" + e.action() + "|" + e.at())).toList();

        List<Violation> violations = new ArrayList<>();
        Map<Integer, Set<String>> consumed = new java.util.HashMap<>();
        Map<String, int[]> stopsStarts = new LinkedHashMap<>(); // held key -> {stops, starts}
        for (LedgerEntry e : events) {
            if (!TOUCH.contains(e.action()) || e.at().isBefore(from) || e.at().isAfter(to) || !wanted.test(e.module())) continue;
            int ci = accountingCall(calls, ends, e, consumed);
            LedgerEntry call = ci < 0 ? null : calls.get(ci);
            Held h = heldAt(held, e);
            if (h != null && call != null && outside(call, h)) h = null;
            if (h != null) {
                boolean own = call != null && (LedgerEntry.WINDOW.equals(h.holder())
                        ? h.window() != null && h.window().equals(call.window())
                        : "hold".equals(call.cause()) || ("update".equals(e.action()) && call.window() != null));
                if (own) {
                    int[] c = stopsStarts.computeIfAbsent(h.key(), k -> new int[2]);
                    if (e.action().equals("stop")) c[0]++;
                    if (e.action().equals("start")) c[1]++;
                } else {
                    violations.add(new Violation(AuditViolationKind.TOUCHED_WHILE_HELD, e.module(), e.container(), e.at(), h.key(),
                            e.action() + " of " + e.container() + " while " + describe(h) + ", "
                                    + (call == null ? "by no mesh call" : "by " + describeCall(call)), e));
                }
            }
            if (call == null) {
                violations.add(new Violation(AuditViolationKind.OUTSIDE_MESH, e.module(), e.container(), e.at(), h == null ? null : h.key(),
                        e.action() + " of " + e.container() + " that no mesh call accounts for (a docker " + dockerVerb(e.action())
                                + " by hand, Docker's restart policy, or dockerd stopping or starting its containers as it restarts)", e));
            }
        }

        Map<LedgerEntry, Instant> applyBegan = applyBeginnings(all, calls);
        for (LedgerEntry c : calls) {
            if (c.cause() == null || !c.cause().startsWith("push-") || !CHANGES.contains(c.action())) continue;
            if (c.at().isBefore(from) || c.at().isAfter(to) || !wanted.test(c.module())) continue;
            Instant began = applyBegan.getOrDefault(c, c.at());
            for (Freeze f : freezes) {
                // An apply under way when the agent began obeying the freeze finishes the container it is on (SPEC.md
                // "Freezes", decision 14): an apply that began during the freeze may change nothing.
                if ((f.module().equals(c.module()) || f.module().equals(LedgerEntry.ALL_MODULES)) && f.covers(c.at()) && f.covers(began)) {
                    LedgerEntry shown = firstEventOf(events, c, ends.get(c));
                    violations.add(new Violation(AuditViolationKind.CHANGED_WHILE_FROZEN, c.module(), c.container(), c.at(), f.id(),
                            describeCall(c) + " while module " + f.module() + " was frozen by " + f.by() + (f.reason() == null ? "" : " (" + f.reason() + ")"),
                            shown != null ? shown : c));
                    break;
                }
            }
        }

        Map<String, String> itemStatus = new java.util.HashMap<>();
        for (Held h : held) {
            if (!LedgerEntry.WINDOW.equals(h.holder()) || !wanted.test(h.module()) || !h.overlaps(from, to)) continue;
            if (h.to() == null) {
                itemStatus.putIfAbsent(h.key(), "open");
                continue;
            }
            // Running again within 60 s: a start after the window's last stop, by its end + 60 s (a later window or
            // apply may stop it again meanwhile: that is theirs). Judged now if that is earlier; still stopped, "open".
            Instant by = h.to().plus(LEFT_STOPPED_AFTER);
            Instant upTo = now.isBefore(by) ? now : by;
            Instant lastStop = null;
            LedgerEntry last = null;
            for (LedgerEntry e : events) {
                if (e.at().isBefore(h.from()) || e.at().isAfter(h.to()) || !h.container().equals(e.container())) continue;
                if (Set.of("die", "stop", "kill", "destroy").contains(e.action())) {
                    lastStop = e.at();
                    last = e;
                }
            }
            boolean stopped = lastStop != null, running = false;
            for (LedgerEntry e : events) {
                if (lastStop == null || !e.at().isAfter(lastStop) || e.at().isAfter(upTo) || !h.container().equals(e.container())) continue;
                if (e.action().equals("start") || e.action().equals("restart")) running = true;
            }
            if (!stopped || running || operatorHeldBetween(held, h.container(), h.to(), by)) continue;
            if (gapBetween(all, lastStop, upTo)) { // its start may lie in what the ledger does not cover: unknown
                itemStatus.put(h.key(), "open");
                continue;
            }
            if (upTo.isBefore(by)) {
                itemStatus.put(h.key(), "open");
                continue;
            }
            violations.add(new Violation(AuditViolationKind.LEFT_STOPPED, h.module(), h.container(), h.to(), h.key(),
                    h.container() + " was not running " + LEFT_STOPPED_AFTER.toSeconds() + " s after " + describe(h) + " ended at "
                            + h.to(), last));
        }

        for (LedgerEntry g : all) {
            if (g.kind() != LedgerKind.GAP) continue;
            Instant end = g.end() == null ? g.at() : g.end();
            if (end.isBefore(from) || g.at().isAfter(to)) continue;
            violations.add(new Violation(AuditViolationKind.GAP, null, null, g.at(), null,
                    "the ledger does not cover " + g.at() + " .. " + end + ": " + g.reason(), g));
        }
        violations.sort(Comparator.comparing(Violation::at));

        List<Item> items = items(held, freezes, calls, from, to, wanted, violations, itemStatus, stopsStarts);
        return new AuditReport(host, from, to, coveredFrom, items, violations, null);
    }

    private static List<Item> items(List<Held> held, List<Freeze> freezes, List<LedgerEntry> calls, Instant from, Instant to, Predicate<String> wanted,
                                    List<Violation> violations, Map<String, String> itemStatus, Map<String, int[]> stopsStarts) {
        Set<String> broken = new HashSet<>();
        for (Violation v : violations) if (v.item() != null) broken.add(v.item());
        Map<String, List<Held>> byItem = new LinkedHashMap<>();
        for (Held h : held) {
            if (wanted.test(h.module()) && h.overlaps(from, to)) byItem.computeIfAbsent(h.key(), k -> new ArrayList<>()).add(h);
        }
        List<Item> items = new ArrayList<>();
        for (Map.Entry<String, List<Held>> e : byItem.entrySet()) {
            List<Held> hs = e.getValue();
            Held first = hs.get(0);
            Instant start = hs.stream().map(Held::from).min(Comparator.naturalOrder()).orElseThrow();
            Instant end = hs.stream().anyMatch(h -> h.to() == null) ? null : hs.stream().map(Held::to).max(Comparator.naturalOrder()).orElseThrow();
            int[] ss = stopsStarts.getOrDefault(e.getKey(), new int[2]);
            String status = broken.contains(e.getKey()) ? "violations" : itemStatus.getOrDefault(e.getKey(), end == null ? "open" : "ok");
            boolean window = LedgerEntry.WINDOW.equals(first.holder());
            items.add(new Item(window ? "window" : "hold", e.getKey(), first.module(), first.schedule(), first.by(), first.reason(),
                    start, end, hs.stream().map(Held::container).distinct().toList(), ss[0], ss[1], status));
        }
        for (Freeze f : freezes) {
            if (!wanted.test(f.module())) continue;
            if (f.to() != null && f.to().isBefore(from) || f.from().isAfter(to)) continue;
            items.add(new Item("freeze", f.id(), f.module(), null, f.by(), f.reason(), f.from(), f.to(), List.of(), 0, 0,
                    broken.contains(f.id()) ? "violations" : f.to() == null ? "open" : "ok"));
        }
        items.addAll(applies(calls, from, to, wanted, broken));
        items.sort(Comparator.comparing(Item::from));
        return items;
    }

    /**
     * @return an {@code apply} item per push and module whose calls fall in the span: from its first call's start to its
     *         last call's end (the Docker calls only: an apply that changed nothing makes none)
     */
    private static List<Item> applies(List<LedgerEntry> calls, Instant from, Instant to, Predicate<String> wanted, Set<String> broken) {
        Map<String, Instant[]> spans = new LinkedHashMap<>();
        Map<String, String[]> names = new LinkedHashMap<>();
        for (LedgerEntry c : calls) {
            if (c.cause() == null || !c.cause().startsWith("push-") || !wanted.test(c.module())) continue;
            Instant end = c.end() != null ? c.end() : c.at();
            if (end.isBefore(from) || c.at().isAfter(to)) continue;
            String id = "apply:" + c.module() + ":" + c.cause();
            Instant[] s = spans.computeIfAbsent(id, k -> new Instant[] {c.at(), end});
            if (c.at().isBefore(s[0])) s[0] = c.at();
            if (end.isAfter(s[1])) s[1] = end;
            names.putIfAbsent(id, new String[] {c.module(), c.cause()});
        }
        List<Item> out = new ArrayList<>();
        for (Map.Entry<String, Instant[]> e : spans.entrySet()) {
            String[] n = names.get(e.getKey());
            out.add(new Item("apply", e.getKey(), n[0], null, n[1], null, e.getValue()[0], e.getValue()[1], List.of(), 0, 0, "ok"));
        }
        return out;
    }

    /**
     * A call is written ahead, before Docker is asked (so that a process killed in it still accounts for what it
     * did), and again when it ends: the two lines (same process, start and operation) are one call, the ended one kept.
     */
    private static List<LedgerEntry> calls(List<LedgerEntry> all) {
        Map<String, LedgerEntry> byKey = new LinkedHashMap<>();
        for (LedgerEntry e : all) {
            if (e.kind() != LedgerKind.CALL) continue;
            String key = e.pid() + "|" + e.at() + "|" + e.action() + "|" + e.container();
            LedgerEntry had = byKey.get(key);
            if (had == null || (had.end() == null && e.end() != null)) byKey.put(key, e);
        }
        List<LedgerEntry> out = new ArrayList<>(byKey.values());
        out.removeIf(c -> c.outcome() == CallOutcome.REFUSED); // Docker was never asked: it did nothing
        return out;
    }

    /**
     * @param calls the calls, in the order they began
     * @return each call mapped to the end of its span: its end; for a call with none (its process died in it), the
     *         start of the first call on the same container that began {@link Times#SESSION_TIMEOUT} or more after it,
     *         or {@link #UNENDED_CALL} after its start if sooner. A dead window's stop must not claim a kill that a
     *         later window's own stop made; and a process that died in a call held its module's lock until its
     *         session ended, so only a call that began that long after it can be a lawful next holder's. A call
     *         sooner than that (a process without the lock) leaves the dead call's span whole, and a tie between
     *         the two goes to the earlier call ({@link #accountingCall}), so the touch is still judged.
     */
    private static Map<LedgerEntry, Instant> spans(List<LedgerEntry> calls) {
        Map<LedgerEntry, Instant> out = new java.util.IdentityHashMap<>();
        for (int i = 0; i < calls.size(); i++) {
            LedgerEntry c = calls.get(i);
            Instant end = c.end();
            if (end == null) {
                end = c.at().plus(UNENDED_CALL);
                Instant handedOver = c.at().plus(Times.SESSION_TIMEOUT);
                for (int j = i + 1; j < calls.size() && calls.get(j).at().isBefore(end); j++) {
                    LedgerEntry next = calls.get(j);
                    if (!next.at().isBefore(handedOver) && sameTarget(c, next)) {
                        end = next.at();
                        break;
                    }
                }
            }
            out.put(c, end);
        }
        return out;
    }

    /**
     * @return whether two calls named the same container: by their ids when both have one (a short hex id matches the
     *         full one it begins; a name in the id field, as Docker takes it, matches only itself or the other's name),
     *         else by name
     */
    private static boolean sameTarget(LedgerEntry a, LedgerEntry b) {
        String x = a.containerId(), y = b.containerId();
        if (x != null && y != null) return names(x, y, b.container()) || names(y, x, a.container());
        return a.container() != null && a.container().equals(b.container());
    }

    /**
     * @param idOrName what a call named its container by: an id, a short id, or a name (Docker takes each where it
     *                 takes an id)
     * @param id       the other line's container id
     * @param name     the other line's container name, or {@code null}
     * @return whether it names that container: the same id, a short hex id it begins with, or its name
     */
    private static boolean names(String idOrName, String id, String name) {
        return idOrName.equals(id) || (shortId(idOrName) && id.startsWith(idOrName)) || idOrName.equals(name);
    }

    private static boolean shortId(String id) {
        return id.length() < 64 && !id.isEmpty() && id.chars().allMatch(ch -> (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'));
    }

    /**
     * @param all   the ledger's lines, in time order
     * @param calls the calls
     * @return each apply's call mapped to the start of its apply: the last {@link LedgerKind#APPLY} line of its process,
     *         push and module stamped before it, or after it by {@link #CLOCK_STEP} at most (an apply's line is written
     *         before its first call; only a step back of the ledger's clock stamps it later); for a call with none (a
     *         ledger written before apply lines were), the start of its run of calls of one process, push and module
     *         with no pause above {@link #APPLY_PAUSE}. An apply frozen writes no line (its calls are repairs), so no
     *         line of a later apply is written in a freeze the agent obeyed.
     */
    private static Map<LedgerEntry, Instant> applyBeginnings(List<LedgerEntry> all, List<LedgerEntry> calls) {
        Map<String, List<Instant>> applyLines = new java.util.HashMap<>();
        for (LedgerEntry e : all) {
            if (e.kind() == LedgerKind.APPLY) applyLines.computeIfAbsent(e.applyKey(), k -> new ArrayList<>()).add(e.at());
        }
        Map<String, List<LedgerEntry>> runs = new LinkedHashMap<>();
        for (LedgerEntry c : calls) {
            if (c.cause() != null && c.cause().startsWith("push-")) runs.computeIfAbsent(c.applyKey(), k -> new ArrayList<>()).add(c);
        }
        Map<LedgerEntry, Instant> out = new java.util.IdentityHashMap<>();
        for (Map.Entry<String, List<LedgerEntry>> r : runs.entrySet()) {
            List<LedgerEntry> run = r.getValue();
            List<Instant> begins = applyLines.getOrDefault(r.getKey(), List.of()); // in time order
            run.sort(Comparator.comparing(LedgerEntry::at));
            Instant began = null, lastEnd = null;
            for (LedgerEntry c : run) {
                if (began == null || c.at().isAfter(lastEnd.plus(APPLY_PAUSE))) began = c.at();
                Instant end = c.end() != null ? c.end() : c.at();
                lastEnd = lastEnd == null || end.isAfter(lastEnd) ? end : lastEnd;
                Instant line = null;
                Instant latest = c.at().plus(CLOCK_STEP);
                for (Instant b : begins) {
                    if (b.isAfter(latest)) break;
                    line = b;
                }
                out.put(c, line != null ? line : began);
            }
        }
        return out;
    }

    /** Pairs each held opening with its closing (same container and holder key); an unclosed one stays open. */
    private static List<Held> heldIntervals(List<LedgerEntry> all) {
        Map<String, LedgerEntry> open = new LinkedHashMap<>();
        List<Held> out = new ArrayList<>();
        for (LedgerEntry e : all) {
            if (e.kind() != LedgerKind.HELD_OPEN && e.kind() != LedgerKind.HELD_CLOSE) continue;
            String key = heldKey(e);
            String slot = e.container() + "|" + key;
            if (e.kind() == LedgerKind.HELD_OPEN) {
                open.putIfAbsent(slot, e);
            } else {
                LedgerEntry o = open.remove(slot);
                if (o != null) out.add(held(o, key, e.at()));
            }
        }
        for (Map.Entry<String, LedgerEntry> e : open.entrySet()) out.add(held(e.getValue(), heldKey(e.getValue()), null));
        out.sort(Comparator.comparing(Held::from));
        return out;
    }

    private static Held held(LedgerEntry o, String key, Instant to) {
        return new Held(o.container(), o.containerId(), o.holder(), key, o.module(), o.window(), o.schedule(), o.by(), o.reason(),
                o.at(), to);
    }

    /** A window's interval is keyed by its window id; an operator's by container and hold's start (one hold at a time). */
    private static String heldKey(LedgerEntry e) {
        return LedgerEntry.WINDOW.equals(e.holder()) ? e.window() : "hold:" + e.container() + ":" + e.by();
    }

    private static List<Freeze> freezes(List<LedgerEntry> all, Instant now) {
        Map<String, LedgerEntry> open = new LinkedHashMap<>();
        List<Freeze> out = new ArrayList<>();
        for (LedgerEntry e : all) {
            if (e.kind() == LedgerKind.FREEZE_OPEN) {
                open.putIfAbsent(e.module(), e);
            } else if (e.kind() == LedgerKind.FREEZE_CLOSE) {
                LedgerEntry o = open.remove(e.module());
                if (o != null) out.add(new Freeze(o.module(), o.by(), o.reason(), o.at(), endOf(o, e.at())));
            }
        }
        for (LedgerEntry o : open.values()) {
            Instant until = endOf(o, null); // no closing line: in force until its until, open while that is ahead
            out.add(new Freeze(o.module(), o.by(), o.reason(), o.at(), until != null && until.isAfter(now) ? null : until));
        }
        out.sort(Comparator.comparing(Freeze::from));
        return out;
    }

    /**
     * A freeze ends at its {@code until} (SPEC.md "Freezes"), which the agent's closing line follows by its thaw timer's
     * margin: an apply may begin in between. Deleted before it, it ends with its closing line.
     *
     * @return the freeze's end: the earlier of its closing line and its {@code until}; {@code null} while open with none
     */
    private static Instant endOf(LedgerEntry open, Instant closed) {
        Instant until = open.until() == null || open.until().isBefore(open.at()) ? null : open.until();
        if (closed == null) return until;
        return until != null && until.isBefore(closed) ? until : closed;
    }

    /**
     * @return the index of the call not yet used for this action that accounts for the event and lies nearest it (one
     *         whose span holds the event before one that only reaches it with {@link #SLACK}; the earlier of equals), or
     *         -1. Nearest, not first: a call that made no event (a start of what ran, a failed remove) must not claim a
     *         later call's event, which the held interval between them would then not judge.
     */
    private static int accountingCall(List<LedgerEntry> calls, Map<LedgerEntry, Instant> ends, LedgerEntry e,
                                      Map<Integer, Set<String>> consumed) {
        int best = -1;
        long bestDistance = Long.MAX_VALUE;
        for (int i = 0; i < calls.size(); i++) {
            LedgerEntry c = calls.get(i);
            if (!makes(c.action()).contains(e.action())) continue;
            if (!sameContainer(c, e)) continue;
            Instant end = ends.get(c);
            if (e.at().isBefore(c.at().minus(EARLY)) || e.at().isAfter(end.plus(SLACK))) continue;
            // A stop whose process outlives its timeout is killed twice (SIGTERM, then SIGKILL): both kills are its own.
            boolean repeats = e.action().equals("kill") && !c.action().equals("kill");
            Set<String> used = consumed.get(i);
            if (used != null && used.contains(e.action()) && !repeats) continue;
            long distance = e.at().isBefore(c.at()) ? Duration.between(e.at(), c.at()).toNanos()
                    : e.at().isAfter(end) ? Duration.between(end, e.at()).toNanos() : 0;
            if (distance < bestDistance) {
                best = i;
                bestDistance = distance;
            }
        }
        if (best >= 0) consumed.computeIfAbsent(best, k -> new HashSet<>()).add(e.action());
        return best;
    }

    private static boolean sameContainer(LedgerEntry call, LedgerEntry event) {
        String id = call.containerId();
        // Docker takes a short id or a name where it takes an id: a call may have named its container either way (64
        // characters are a full id, not a name)
        if (id != null && event.containerId() != null) return names(id, event.containerId(), id.length() < 64 ? event.container() : null);
        return call.container() != null && call.container().equals(event.container());
    }

    /** @return the held interval of the event's container at its time (by id, else by name), or {@code null} */
    private static Held heldAt(List<Held> held, LedgerEntry e) {
        Held byName = null;
        for (Held h : held) {
            if (!h.covers(e.at())) continue;
            if (h.containerId() != null && h.containerId().equals(e.containerId())) return h;
            if (h.container() != null && h.container().equals(e.container())) byName = h;
        }
        return byName;
    }

    /**
     * A call that ended before a held interval began, or began after it ended, made its event outside it, whatever the
     * event's stamp says: the event is stamped by the engine's clock, the call and the held lines by the ledger's (the
     * engine's time as this host read it, a few milliseconds off: decision 28), so an event may read a moment inside
     * an interval its call was out of.
     */
    private static boolean outside(LedgerEntry call, Held h) {
        return (call.end() != null && call.end().isBefore(h.from())) || (h.to() != null && call.at().isAfter(h.to()));
    }

    private static boolean gapBetween(List<LedgerEntry> all, Instant a, Instant b) {
        for (LedgerEntry g : all) {
            if (g.kind() != LedgerKind.GAP) continue;
            Instant end = g.end() == null ? g.at() : g.end();
            if (!end.isBefore(a) && !g.at().isAfter(b)) return true;
        }
        return false;
    }

    private static boolean operatorHeldBetween(List<Held> held, String container, Instant a, Instant b) {
        for (Held h : held) if (LedgerEntry.OPERATOR.equals(h.holder()) && container.equals(h.container()) && h.overlaps(a, b)) return true;
        return false;
    }

    private static LedgerEntry firstEventOf(List<LedgerEntry> events, LedgerEntry call, Instant end) {
        for (LedgerEntry e : events) {
            if (!makes(call.action()).contains(e.action()) || !sameContainer(call, e)) continue;
            Instant hi = end.plus(SLACK);
            if (!e.at().isBefore(call.at().minus(EARLY)) && !e.at().isAfter(hi)) return e;
        }
        return null;
    }

    private static String describe(Held h) {
        return LedgerEntry.WINDOW.equals(h.holder())
                ? "held by window " + h.schedule() + " (" + h.window() + ")"
                : "held by operator " + h.by() + (h.reason() == null ? "" : " (" + h.reason() + ")");
    }

    private static String describeCall(LedgerEntry c) {
        return c.action() + " by " + c.cause() + (c.process() == null ? "" : " (" + c.process() + ", pid " + c.pid() + ")");
    }

    private static String dockerVerb(String action) {
        return switch (action) {
            case "destroy" -> "rm";
            case "create" -> "create";
            default -> action;
        };
    }
}
