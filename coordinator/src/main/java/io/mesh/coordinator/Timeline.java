package io.mesh.coordinator;

import io.mesh.wire.AuditReport;
import io.mesh.wire.AuditReport.Item;
import io.mesh.wire.AuditReport.Violation;
import io.mesh.wire.AuditViolationKind;
import io.mesh.wire.LedgerEntry;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

import static io.mesh.coordinator.Html.esc;

/**
 * The page's "Last 24 hours" (SPEC.md, "Audit": "the page shows the last 24 hours"): every host's {@link AuditReport}
 * drawn on one time axis, as server-rendered HTML (positioned {@code div}s styled by {@code mesh.css}; no script).
 * Pure: the same reports and span give the same HTML.
 *
 * <p>One row per host and under it one row per module. A bar per window, operator hold, freeze and apply, from its
 * {@code from} to its {@code to} (an open one to the span's end), each in its own class and colour and labelled in
 * text; its {@code title} says type, id, module, from–to, containers, stops and starts and status. A violation is a
 * red mark at its time (a gap: a hatched band over its span) and a link to its {@code mesh audit} entry,
 * {@code /v1/audit?host=H&module=M&since=..&until=..} around it ({@link #AROUND}). A freeze of every module
 * ({@code _all}), gaps and the span before the host's ledger began ({@code coveredFrom}, not a gap) are on the host's
 * row. A host that did not answer has a row saying so. Every string from a report is escaped.
 *
 * <p>Positions are percentages of the span: {@code left} is the start's share of it, {@code width} the duration's.
 */
public final class Timeline {
    /** A violation's link asks {@code mesh audit} for this long before and after it (a gap: before its start, after its end). */
    public static final Duration AROUND = Duration.ofMinutes(5);
    /** The item types a bar has a class and a colour for; another type is drawn as {@code tl-other}. */
    static final Set<String> TYPES = Set.of("window", "hold", "freeze", "apply");
    /** Bars closer than this share of the span are put in separate lanes, so a short one is never hidden under another. */
    private static final double LANE_GAP_PERCENT = 1.0;

    private Timeline() {}

    /**
     * @param reports every host's report over the span, in the order to list them
     * @param from    the span's start
     * @param to      the span's end: now, where an open item ends
     * @return the HTML fragment: legend, hour axis, the hosts' and modules' rows; or a line saying there is nothing
     */
    public static String render(List<AuditReport> reports, Instant from, Instant to) {
        if (!to.isAfter(from)) throw new IllegalArgumentException("the span ends (" + to + ") before it starts (" + from + ")");
        StringBuilder b = new StringBuilder();
        String span = spanWords(from, to);
        boolean anything = reports.stream().anyMatch(r -> r.error() != null || !list(r.items()).isEmpty() || !list(r.violations()).isEmpty());
        if (!anything) {
            return b.append("<p class=\"empty tl-empty\">Nothing in ").append(span).append(": no window, hold, freeze, apply or violation")
                    .append(reports.isEmpty() ? " (no host answered the audit)" : " on " + reports.size() + " host" + (reports.size() == 1 ? "" : "s"))
                    .append(".</p>").toString();
        }
        b.append("<div class=\"timeline\" data-from=\"").append(esc(from.toString())).append("\" data-to=\"").append(esc(to.toString())).append("\">");
        legend(b);
        axis(b, from, to);
        for (AuditReport r : reports) host(b, r, from, to, span);
        return b.append("</div>").toString();
    }

    private static void legend(StringBuilder b) {
        b.append("<ul class=\"tl-legend\">")
                .append("<li><span class=\"tl-key tl-window\"></span>window</li>")
                .append("<li><span class=\"tl-key tl-hold\"></span>operator hold</li>")
                .append("<li><span class=\"tl-key tl-freeze\"></span>freeze</li>")
                .append("<li><span class=\"tl-key tl-apply\"></span>apply</li>")
                .append("<li><span class=\"tl-key tl-open\"></span>open (runs to now)</li>")
                .append("<li><span class=\"tl-key tl-mark-key\">!</span>violation (link to its audit)</li>")
                .append("<li><span class=\"tl-key tl-gap\"></span>gap (ledger does not cover it)</li>")
                .append("<li><span class=\"tl-key tl-noledger\"></span>before the ledger began</li>")
                .append("</ul>");
    }

    /**
     * The hour ticks, labelled {@code HH:00} in UTC. Hours not a multiple of 3 carry {@code tl-minor}, so a narrow
     * screen can hide their labels; a tick within the last 3 % of the span has none (it would run past the edge).
     */
    private static void axis(StringBuilder b, Instant from, Instant to) {
        b.append("<div class=\"tl-row tl-axis\" aria-hidden=\"true\"><div class=\"tl-label\">UTC</div><div class=\"tl-track\">");
        Instant t = from.truncatedTo(ChronoUnit.HOURS);
        if (t.isBefore(from)) t = t.plus(Duration.ofHours(1));
        for (; !t.isAfter(to); t = t.plus(Duration.ofHours(1))) {
            int hour = t.atZone(ZoneOffset.UTC).getHour();
            b.append("<span class=\"tl-tick").append(hour % 3 != 0 ? " tl-minor" : "").append("\" style=\"left:").append(pct(from, to, t)).append("%\">");
            if (share(from, to, t) <= 97) b.append("<span>").append(String.format(Locale.ROOT, "%02d:00", hour)).append("</span>");
            b.append("</span>");
        }
        b.append("</div></div>");
    }

    private static void host(StringBuilder b, AuditReport r, Instant from, Instant to, String span) {
        String host = r.host();
        if (r.error() != null) {
            b.append("<div class=\"tl-row tl-host tl-error\" data-host=\"").append(esc(host)).append("\"><div class=\"tl-label\"><b>")
                    .append(esc(host)).append("</b></div><div class=\"tl-track\"><span class=\"tl-msg\"><strong class=\"tag st-failed\">DID NOT ANSWER</strong> ")
                    .append(esc(r.error())).append("</span></div></div>");
            return;
        }
        List<Item> items = list(r.items());
        List<Violation> violations = list(r.violations());
        long broken = violations.stream().filter(v -> v.kind() != AuditViolationKind.GAP).count();
        long gaps = violations.size() - broken;

        // The host's row: what belongs to no one module (freezes of all modules, gaps) and where its ledger began.
        List<String> marks = new ArrayList<>();
        if (r.coveredFrom() != null && r.coveredFrom().isAfter(from)) {
            Instant end = min(r.coveredFrom(), to);
            marks.add("<span class=\"tl-noledger\" style=\"left:0%;width:" + pct(from, to, end) + "%\" title=\""
                    + esc("no ledger before " + time(r.coveredFrom()) + ": the host kept none then (not a gap)") + "\"></span>");
        }
        List<Item> hostItems = items.stream().filter(i -> i.module() == null || LedgerEntry.ALL_MODULES.equals(i.module())).toList();
        List<Violation> hostViolations = violations.stream().filter(v -> v.module() == null).toList();
        String summary = (broken == 0 ? "<span class=\"ok\">no violation</span>"
                : "<span class=\"err\">" + broken + " violation" + (broken == 1 ? "" : "s") + "</span>")
                + (gaps == 0 ? "" : " · <span class=\"err\">" + gaps + " gap" + (gaps == 1 ? "" : "s") + "</span>")
                + (r.coveredFrom() == null ? " · <span class=\"empty\">empty ledger</span>" : "");
        row(b, "tl-host", host, null, "<b>" + esc(host) + "</b> <small>" + summary + "</small>", hostItems, hostViolations, marks, from, to,
                items.isEmpty() && violations.isEmpty() ? "nothing in " + span : null);

        TreeSet<String> modules = new TreeSet<>();
        for (Item i : items) if (i.module() != null && !LedgerEntry.ALL_MODULES.equals(i.module())) modules.add(i.module());
        for (Violation v : violations) if (v.module() != null) modules.add(v.module());
        for (String m : modules) {
            row(b, "tl-module", host, m, esc(m), items.stream().filter(i -> m.equals(i.module())).toList(),
                    violations.stream().filter(v -> m.equals(v.module())).toList(), List.of(), from, to, null);
        }
    }

    private static void row(StringBuilder b, String kind, String host, String module, String label, List<Item> items,
                            List<Violation> violations, List<String> marks, Instant from, Instant to, String message) {
        // Lanes: a bar goes in the first lane whose last bar ended before it starts, so overlapping ones stack.
        List<Double> laneEnds = new ArrayList<>();
        StringBuilder bars = new StringBuilder();
        List<Item> sorted = new ArrayList<>(items);
        sorted.sort(Comparator.comparing(Item::from, Comparator.nullsFirst(Comparator.naturalOrder())));
        for (Item i : sorted) {
            Instant start = max(i.from() == null ? from : i.from(), from);
            Instant end = i.to() == null ? to : min(max(i.to(), start), to);
            double left = share(from, to, start);
            double right = Math.max(share(from, to, end), left + LANE_GAP_PERCENT);
            int lane = 0;
            while (lane < laneEnds.size() && laneEnds.get(lane) > left) lane++;
            if (lane == laneEnds.size()) laneEnds.add(right);
            else laneEnds.set(lane, right);
            String type = i.type() != null && TYPES.contains(i.type()) ? i.type() : "other";
            boolean open = i.to() == null || "open".equals(i.status());
            String tip = tooltip(i, to);
            bars.append("<span class=\"tl-bar tl-").append(type).append(open ? " tl-open" : "")
                    .append("violations".equals(i.status()) ? " tl-bad" : "").append("\" role=\"img\" style=\"left:")
                    .append(pct(from, to, start)).append("%;width:").append(fmt(share(from, to, end) - left)).append("%;--lane:").append(lane)
                    .append("\" data-id=\"").append(esc(i.id())).append("\" title=\"").append(esc(tip)).append("\" aria-label=\"")
                    .append(esc(tip.replace('\n', ';'))).append("\">").append(esc(barLabel(i))).append("</span>");
        }
        StringBuilder vs = new StringBuilder();
        for (Violation v : violations) vs.append(violation(host, v, from, to));

        b.append("<div class=\"tl-row ").append(kind).append("\" data-host=\"").append(esc(host)).append("\"");
        if (module != null) b.append(" data-module=\"").append(esc(module)).append("\"");
        b.append("><div class=\"tl-label\">").append(label).append("</div><div class=\"tl-track\" style=\"--lanes:")
                .append(Math.max(1, laneEnds.size())).append("\">");
        for (String m : marks) b.append(m);
        b.append(bars).append(vs);
        if (message != null) b.append("<span class=\"tl-msg empty\">").append(esc(message)).append("</span>");
        b.append("</div></div>");
    }

    /** A violation's mark (a gap: a band over its span), a link to {@code mesh audit} around it. */
    private static String violation(String host, Violation v, Instant from, Instant to) {
        String kind = v.kind() == null ? "unknown" : v.kind().wire();
        Instant at = v.at() == null ? to : v.at();
        boolean gap = v.kind() == AuditViolationKind.GAP;
        Instant end = gap && v.evidence() != null && v.evidence().end() != null ? max(v.evidence().end(), at) : at;
        String href = href(host, v.module(), at.minus(AROUND), end.plus(AROUND));
        String tip = kind + " at " + time(at) + (gap ? " to " + time(end) : "")
                + (v.container() == null ? "" : " · " + v.container()) + (v.item() == null ? "" : " · in " + v.item())
                + (v.message() == null ? "" : ": " + v.message());
        Instant shownAt = min(max(at, from), to);
        StringBuilder b = new StringBuilder("<a class=\"").append(gap ? "tl-gap" : "tl-mark").append(" tl-v-").append(esc(kind))
                .append("\" href=\"").append(esc(href)).append("\" style=\"left:").append(pct(from, to, shownAt)).append('%');
        if (gap) b.append(";width:").append(fmt(share(from, to, min(max(end, from), to)) - share(from, to, shownAt))).append('%');
        b.append("\" title=\"").append(esc(tip)).append("\" aria-label=\"").append(esc(tip)).append("\">")
                .append(gap ? "<span>gap</span>" : "!").append("</a>");
        return b.toString();
    }

    /**
     * @param host   the host, or {@code null} for every host
     * @param module the module, or {@code null} for every module
     * @param since  the span's start, rounded down to the second
     * @param until  the span's end, rounded up to the second
     * @return {@code /v1/audit?host=H&module=M&since=ISO&until=ISO}: host and module URL-encoded, the times as ISO-8601
     *         instants (their characters need no encoding in a query); not yet HTML-escaped
     */
    static String href(String host, String module, Instant since, Instant until) {
        Instant end = until.truncatedTo(ChronoUnit.SECONDS);
        if (end.isBefore(until)) end = end.plusSeconds(1);
        return "/v1/audit?" + (host == null ? "" : "host=" + url(host) + "&") + (module == null ? "" : "module=" + url(module) + "&")
                + "since=" + since.truncatedTo(ChronoUnit.SECONDS) + "&until=" + end;
    }

    private static String barLabel(Item i) {
        return switch (i.type() == null ? "" : i.type()) {
            case "window" -> "window " + (i.schedule() == null ? "" : i.schedule());
            case "hold" -> "hold" + (i.by() == null ? "" : " by " + i.by());
            case "freeze" -> "freeze" + (LedgerEntry.ALL_MODULES.equals(i.module()) ? " (all modules)" : "");
            case "apply" -> "apply" + (i.by() == null ? "" : " " + i.by());
            default -> String.valueOf(i.type());
        };
    }

    /** The bar's tooltip, one fact a line. */
    static String tooltip(Item i, Instant now) {
        StringBuilder t = new StringBuilder();
        t.append(i.type()).append(i.schedule() == null ? "" : " " + i.schedule()).append(" · ").append(i.id());
        t.append("\nmodule: ").append(LedgerEntry.ALL_MODULES.equals(i.module()) ? "all modules" : i.module());
        Instant end = i.to() == null ? now : i.to();
        t.append("\n").append(time(i.from())).append(" – ").append(i.to() == null ? "now (open)" : time(i.to()));
        if (i.from() != null) t.append(" (").append(duration(Duration.between(i.from(), end))).append(')');
        if (i.by() != null) t.append("\n").append("apply".equals(i.type()) ? "push: " : "by: ").append(i.by());
        if (i.reason() != null) t.append("\nreason: ").append(i.reason());
        if (!"freeze".equals(i.type()) || !list(i.containers()).isEmpty()) {
            t.append("\ncontainers: ").append(list(i.containers()).isEmpty() ? "none" : String.join(", ", i.containers()));
        }
        t.append("\nstops ").append(i.stops()).append(" · starts ").append(i.starts());
        t.append("\nstatus: ").append(i.status());
        return t.toString();
    }

    private static String spanWords(Instant from, Instant to) {
        Duration d = Duration.between(from, to);
        return d.toMinutes() % 60 == 0 ? "the last " + d.toHours() + " hour" + (d.toHours() == 1 ? "" : "s") : "the last " + duration(d);
    }

    private static String duration(Duration d) {
        long s = Math.max(0, d.toSeconds());
        if (s < 120) return s + "s";
        if (s < 3 * 3600) return (s / 60) + "m";
        return (s / 3600) + "h " + (s % 3600 / 60) + "m";
    }

    /** @return such as {@code 2026-12-06 07:30:00Z}, or {@code ?} */
    private static String time(Instant t) {
        return t == null ? "?" : t.truncatedTo(ChronoUnit.SECONDS).toString().replace('T', ' ');
    }

    /** @return the share of the span before {@code t}, in percent, held within 0 and 100 */
    static double share(Instant from, Instant to, Instant t) {
        double span = Duration.between(from, to).toMillis();
        return Math.max(0, Math.min(100, Duration.between(from, t).toMillis() * 100.0 / span));
    }

    private static String pct(Instant from, Instant to, Instant t) { return fmt(share(from, to, t)); }

    private static String fmt(double percent) { return String.format(Locale.ROOT, "%.3f", Math.max(0, percent)); }

    private static String url(String s) { return URLEncoder.encode(s == null ? "" : s, StandardCharsets.UTF_8); }

    private static Instant min(Instant a, Instant b) { return a.isBefore(b) ? a : b; }

    private static Instant max(Instant a, Instant b) { return a.isAfter(b) ? a : b; }

    private static <T> List<T> list(List<T> l) { return l == null ? List.of() : l; }
}
