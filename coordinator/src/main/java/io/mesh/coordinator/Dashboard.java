package io.mesh.coordinator;

import io.mesh.wire.AuditReport;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.PushState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static io.mesh.coordinator.Html.esc;

/**
 * The coordinator's page ({@code GET /}): plain HTML rendered here from a {@link FleetStatus.Fleet}, styled by
 * {@code /ui/mesh.css}, refreshed every few seconds by {@code /ui/mesh.js} (which fetches {@code /ui/fragment}, the
 * same {@code <main>} content). Readable without JavaScript (then it reloads itself) and on a phone (the table folds
 * into one block per host below 640 px).
 *
 * <p>Every state is shown as text and as a colour: {@code applied} green, {@code deferred} amber, {@code failed} red,
 * {@code pending} grey; an open window is marked "WINDOW OPEN" and a held container "HELD" (amber and violet).
 *
 * <p>Its "Last 24 hours" (SPEC.md, "Audit": "the page shows the last 24 hours") is the {@link Timeline} of the audit
 * an {@link AuditSource} gives: the constructor's, or the one {@link #auditSource(AuditSource)} gives later (the
 * coordinator's is {@link HttpApi#auditSource(AuditSource)}). Kept {@link #AUDIT_CACHE}, so that a refresh every
 * {@value #REFRESH_SECONDS} s does not ask every host each time.
 */
public final class Dashboard {
    /** Seconds between refreshes of the page. */
    public static final int REFRESH_SECONDS = 3;
    private static final Logger LOG = LoggerFactory.getLogger(Dashboard.class);

    /** How long the audit the page shows is kept before the page asks for it again (the "Last 24 hours" section). */
    public static final Duration AUDIT_CACHE = Duration.ofSeconds(60);
    /** How long a page request waits for an audit it asked for; past it, a later refresh shows the answer. */
    public static final Duration AUDIT_WAIT = Duration.ofSeconds(2);
    /** The span the section shows, ending when the page asked. */
    public static final Duration AUDIT_SPAN = Duration.ofHours(24);

    private final Clock clock;
    private final Duration auditCache;
    private final Duration auditWait;
    private final Object lock = new Object();
    private AuditSource source;
    /** The last audit asked for that answered or failed; the last one that answered. Both under {@link #lock}. */
    private Audit last;
    private Audit lastGood;
    /** The audit being asked for, and since when; under {@link #lock}. At most one at a time. */
    private CompletableFuture<Audit> asking;
    private Instant askedAt;

    /** A page with no audit source yet: its "Last 24 hours" says "audit unavailable" until {@link #auditSource} gives one. */
    public Dashboard() {
        this(null, Clock.systemUTC(), AUDIT_CACHE, AUDIT_WAIT);
    }

    /** @param source where the "Last 24 hours" comes from, or {@code null} for none ("audit unavailable") */
    public Dashboard(AuditSource source) {
        this(source, Clock.systemUTC(), AUDIT_CACHE, AUDIT_WAIT);
    }

    /**
     * @param source     where the "Last 24 hours" comes from, or {@code null} for none
     * @param clock      the clock the span ends by and the cache ages by
     * @param auditCache how long an audit (answered or failed) is shown before the page asks again
     * @param auditWait  how long a page request waits for an audit it asked for
     */
    Dashboard(AuditSource source, Clock clock, Duration auditCache, Duration auditWait) {
        this.source = source;
        this.clock = clock;
        this.auditCache = auditCache;
        this.auditWait = auditWait;
    }

    /**
     * Gives the page its audit (SPEC.md, "Audit": "the page shows the last 24 hours"), replacing any before it and
     * forgetting what it showed.
     *
     * @param source every host's {@link io.mesh.wire.AuditReport} over a span, or {@code null} for none
     */
    public void auditSource(AuditSource source) {
        synchronized (lock) {
            this.source = source;
            last = null;
            lastGood = null;
            asking = null;
            askedAt = null;
        }
    }

    /**
     * @param fleet the fleet now
     * @return the whole page
     */
    public String page(FleetStatus.Fleet fleet) {
        return "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                + "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                + "<title>mesh: " + summaryTitle(fleet) + "</title>"
                + "<link rel=\"stylesheet\" href=\"/ui/mesh.css\">"
                + "<noscript><meta http-equiv=\"refresh\" content=\"" + (REFRESH_SECONDS * 3) + "\"></noscript>"
                + "</head><body>"
                + "<header><h1>mesh</h1><span id=\"status\" class=\"live\">live, every " + REFRESH_SECONDS + "s</span></header>"
                + "<main id=\"fleet\" data-refresh-seconds=\"" + REFRESH_SECONDS + "\" data-refreshes=\"0\">" + fragment(fleet) + "</main>"
                + "<footer>JSON: <a href=\"/v1/fleet\">/v1/fleet</a> · <a href=\"/v1/windows\">/v1/windows</a> · "
                + "<a href=\"/v1/held\">/v1/held</a> · <a href=\"/v1/locks\">/v1/locks</a> · <a href=\"/v1/audit\">/v1/audit</a> · "
                + "<a href=\"/metrics\">/metrics</a></footer>"
                + "<script src=\"/ui/mesh.js\" defer></script></body></html>\n";
    }

    private static String slotWindow(FleetStatus.SlotWindow w, java.time.Instant at) {
        return "<b>" + esc(w.record().host()) + " / " + esc(w.record().module()) + "</b> " + esc(w.record().schedule()) + " <code>"
                + esc(w.record().window()) + "</code> since " + time(w.record().since(), at);
    }

    private static String summaryTitle(FleetStatus.Fleet f) {
        return f.windows().isEmpty() ? "no window open" : f.windows().size() + " window" + (f.windows().size() == 1 ? "" : "s") + " open";
    }

    /**
     * @param f the fleet now
     * @return the content of {@code <main>}: summary, open windows, hosts &times; modules, pending pushes, held
     *         containers, and the last 24 hours ({@link #auditSection()})
     */
    public String fragment(FleetStatus.Fleet f) {
        return fleetFragment(f) + auditSection();
    }

    /**
     * @param f the fleet now
     * @return summary, open windows, hosts &times; modules, pending pushes, held containers
     */
    static String fleetFragment(FleetStatus.Fleet f) {
        StringBuilder b = new StringBuilder();
        int held = f.held().size();
        b.append("<p class=\"summary\" id=\"summary\" data-read-at=\"").append(esc(String.valueOf(f.at()))).append("\">")
                .append(f.hosts().size()).append(" host").append(f.hosts().size() == 1 ? "" : "s").append(" · ")
                .append("<span class=\"").append(f.windows().isEmpty() ? "ok" : "window").append("\">")
                .append(f.windows().size()).append(" open window").append(f.windows().size() == 1 ? "" : "s").append("</span> · ")
                .append("<span class=\"").append(held == 0 ? "ok" : "held").append("\">")
                .append(held).append(" held container").append(held == 1 ? "" : "s").append("</span> · ")
                .append("<span class=\"").append(f.pendingPushes().isEmpty() ? "ok" : "st-pending").append("\">")
                .append(f.pendingPushes().size()).append(" pending push").append(f.pendingPushes().size() == 1 ? "" : "es").append("</span>")
                .append(" · read at <time>").append(esc(String.valueOf(f.at()))).append("</time></p>");

        if (!f.windows().isEmpty()) {
            b.append("<section id=\"windows\"><h2>Open windows</h2>");
            for (FleetStatus.OpenWindow w : f.windows()) {
                b.append("<div class=\"card window\" data-host=\"").append(esc(w.host())).append("\" data-module=\"").append(esc(w.module())).append("\">")
                        .append("<strong class=\"tag window\">WINDOW OPEN</strong> ")
                        .append("<b>").append(esc(w.host())).append(" / ").append(esc(w.module())).append("</b> ")
                        .append(esc(w.schedule())).append(" <code>").append(esc(w.window())).append("</code><br>")
                        .append("since ").append(time(w.since(), f.at()))
                        .append(w.endsBy() == null ? "" : " · ends by " + time(w.endsBy(), f.at()))
                        .append(" · holds ").append(w.held() == null || w.held().isEmpty() ? "nothing" : esc(String.join(", ", w.held())))
                        .append(w.by() == null ? "" : " · by pid " + w.by().pid() + " (" + esc(w.by().process()) + ")");
                if (w.waitingPush() != null) {
                    b.append("<br><span class=\"st-deferred\">waiting on it: ").append(esc(w.waitingPush()))
                            .append(" (revision ").append(esc(w.waitingRevision())).append("), deferred</span>");
                }
                b.append("</div>");
            }
            b.append("</section>");
        }

        if (!f.slots().isEmpty()) {
            b.append("<section id=\"slots\"><h2>Window slots</h2>");
            for (FleetStatus.Slot s : f.slots()) {
                b.append("<div class=\"card slot\" data-slot=\"").append(esc(s.key())).append("\"><b>").append(esc(s.key()))
                        .append("</b> · at most ").append(s.limit()).append(" at once<br>");
                for (FleetStatus.SlotWindow w : s.running()) {
                    b.append("<span class=\"window\">runs</span> ").append(slotWindow(w, f.at()))
                            .append(w.sessionLost() ? " <span class=\"st-failed\">(session lost; counted until its containers run again)</span>" : "")
                            .append("<br>");
                }
                int i = 0;
                for (FleetStatus.SlotWindow w : s.queue()) {
                    b.append("<span class=\"st-deferred\">waits ").append(++i).append("</span> ").append(slotWindow(w, f.at()))
                            .append(" · waited ").append(w.waited()).append("s<br>");
                }
                b.append("</div>");
            }
            b.append("</section>");
        }

        b.append("<section id=\"hosts\"><h2>Hosts × modules</h2>");
        TreeSet<String> modules = new TreeSet<>();
        for (FleetStatus.HostRow h : f.hosts()) for (FleetStatus.Cell c : h.modules()) modules.add(c.module());
        if (f.hosts().isEmpty()) {
            b.append("<p class=\"empty\">No host has an agent or a report yet.</p>");
        } else {
            b.append("<div class=\"scroll\"><table class=\"matrix\"><thead><tr><th>host</th>");
            for (String m : modules) b.append("<th>").append(esc(m)).append("</th>");
            b.append("</tr></thead><tbody>");
            for (FleetStatus.HostRow h : f.hosts()) {
                Map<String, FleetStatus.Cell> cells = new LinkedHashMap<>();
                for (FleetStatus.Cell c : h.modules()) cells.put(c.module(), c);
                b.append("<tr data-host=\"").append(esc(h.host())).append("\"><th scope=\"row\">").append(esc(h.host()))
                        .append(" <span class=\"agent ").append(h.online() ? "online\">agent online" : "offline\">agent OFFLINE").append("</span></th>");
                for (String m : modules) {
                    FleetStatus.Cell c = cells.get(m);
                    if (c == null) {
                        b.append("<td data-label=\"").append(esc(m)).append("\" class=\"none\">—</td>");
                        continue;
                    }
                    b.append(cell(c, f.at()));
                }
                b.append("</tr>");
            }
            b.append("</tbody></table></div>");
        }
        b.append("</section>");

        b.append("<section id=\"pushes\"><h2>Pending pushes</h2>");
        if (f.pendingPushes().isEmpty()) {
            b.append("<p class=\"empty\">None: every recent push is done.</p>");
        } else {
            b.append("<ul>");
            for (FleetStatus.PendingPush p : f.pendingPushes()) {
                String state = p.state().wire();
                b.append("<li class=\"st-").append(esc(state)).append("\"><b>").append(esc(p.push())).append("</b> revision ")
                        .append(esc(p.revision())).append(" · <span class=\"tag st-").append(esc(state)).append("\">")
                        .append(esc(state.toUpperCase())).append("</span> · ");
                List<String> counts = new ArrayList<>();
                p.counts().forEach((k, v) -> { if (v > 0) counts.add(v + " " + k); });
                b.append(esc(String.join(", ", counts))).append(" · received ").append(time(p.receivedAt(), f.at()));
                // What each pending host's apply is doing (decision 32), so that a slow pull or health wait is seen.
                if (!p.progress().isEmpty()) {
                    b.append("<ul>");
                    for (String line : p.progress()) b.append("<li class=\"st-pending\">").append(esc(line)).append("</li>");
                    b.append("</ul>");
                }
                b.append("</li>");
            }
            b.append("</ul>");
        }
        b.append("</section>");

        List<HeldRecord> byWindow = f.held().stream().filter(h -> !h.operatorHold()).toList();
        List<HeldRecord> byOperator = f.held().stream().filter(HeldRecord::operatorHold).toList();
        if (!byWindow.isEmpty()) {
            b.append("<section id=\"held\"><h2>Held containers</h2><ul>");
            for (HeldRecord h : byWindow) {
                b.append("<li class=\"held\"><strong class=\"tag held\">HELD</strong> <b>").append(esc(h.host())).append(" / ")
                        .append(esc(h.container())).append("</b> by window ").append(esc(h.schedule())).append(" <code>")
                        .append(esc(h.window())).append("</code> since ").append(time(h.since(), f.at())).append("</li>");
            }
            b.append("</ul></section>");
        }
        if (!byOperator.isEmpty()) {
            // Operator holds apart from window holds (decision 0015): HOLD BY / REASON / UNTIL; CONFIRMED, since a hold
            // is in force only once its host's agent confirmed it (SPEC.md "Operator holds").
            b.append("<section id=\"holds\"><h2>Operator holds</h2><table><tr><th>HOST / CONTAINER</th><th>HOLD BY</th><th>REASON</th>"
                    + "<th>UNTIL</th><th>STOP</th><th>CONFIRMED</th></tr>");
            for (HeldRecord h : byOperator) {
                HeldRecord.OperatorHold o = h.hold();
                b.append("<tr class=\"held\"><td><b>").append(esc(h.host())).append(" / ").append(esc(h.container())).append("</b></td><td>")
                        .append(esc(o.by())).append("</td><td>").append(esc(o.reason())).append("</td><td>")
                        .append(o.until() == null ? "until released" : time(o.until(), f.at()))
                        .append(h.expiredAt(f.at()) ? " <strong class=\"tag\">EXPIRED</strong>" : "").append("</td><td>")
                        .append(!o.stops() ? "running" : o.stoppedAt() == null ? "to stop" : "stopped").append("</td><td>")
                        .append(o.isConfirmed() ? time(o.confirmed(), f.at())
                                : "<strong class=\"tag st-pending\">NOT YET</strong> recorded, in force once its host's agent confirms it")
                        .append("</td></tr>");
            }
            b.append("</table></section>");
        }
        return b.toString();
    }

    /** One asking of the audit: its span, and the timeline drawn from its answer or why it failed. */
    private record Audit(Instant from, Instant to, String html, String error) {}

    /**
     * The "Last 24 hours" section (SPEC.md, "Audit"; decision 28): the {@link Timeline} of the last
     * audit. An audit older than the cache is asked again, from a thread of its own and one at a time, so that a
     * refresh every {@value #REFRESH_SECONDS} s does not ask every host each time; a request waits for it at most the
     * wait, then shows what it had and says it is still asking. A source that throws is said, and the rest of the
     * page renders.
     *
     * @return the section's HTML
     */
    String auditSection() {
        CompletableFuture<Audit> pending;
        synchronized (lock) {
            if (source == null) {
                return section("<p class=\"empty\">audit unavailable: this coordinator has no audit source.</p>");
            }
            Instant now = clock.instant();
            boolean fresh = last != null && now.isBefore(last.to().plus(auditCache));
            if (!fresh && asking == null) ask(source, now);
            pending = asking;
        }
        if (pending != null) {
            try {
                pending.get(auditWait.toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                // still asking: said below, and a later refresh shows the answer
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException e) {
                // cannot happen: the asking thread completes with its failure recorded, never exceptionally
            }
        }
        synchronized (lock) {
            return section(shown(clock.instant()));
        }
    }

    /** Starts asking, under {@link #lock}. The thread records its answer (or failure) before it completes the future. */
    private void ask(AuditSource s, Instant now) {
        Instant from = now.minus(AUDIT_SPAN);
        CompletableFuture<Audit> f = new CompletableFuture<>();
        asking = f;
        askedAt = now;
        Thread t = new Thread(() -> {
            Audit a;
            try {
                List<AuditReport> reports = s.audit(from, now);
                if (reports == null) throw new IllegalStateException("the audit source answered nothing");
                a = new Audit(from, now, Timeline.render(reports, from, now), null);
            } catch (Throwable e) { // anything: a thread that ended unrecorded would leave the page asking for ever
                LOG.warn("the page's audit from {} to {} failed", from, now, e);
                a = new Audit(from, now, null, e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage());
            }
            synchronized (lock) {
                if (asking == f) { // else auditSource() replaced the source meanwhile: this answer is not its
                    last = a;
                    if (a.html() != null) lastGood = a;
                    asking = null;
                    askedAt = null;
                }
            }
            f.complete(a);
        }, "mesh-page-audit");
        t.setDaemon(true);
        t.start();
    }

    /** What the section shows now, under {@link #lock}. */
    private String shown(Instant now) {
        StringBuilder b = new StringBuilder();
        if (asking != null) {
            b.append("<p class=\"tl-note\" id=\"audit-asking\">Asking the hosts for their audit since ").append(time(askedAt.truncatedTo(ChronoUnit.SECONDS), now))
                    .append(lastGood == null ? "; a later refresh shows it." : "; shown below: the audit before it.").append("</p>");
        }
        if (last != null && last.error() != null) {
            b.append("<p class=\"err tl-note\" id=\"audit-failed\">The audit failed (asked ").append(time(last.to().truncatedTo(ChronoUnit.SECONDS), now)).append("): ")
                    .append(esc(last.error())).append(". Asked again ").append(auditCache.toSeconds()).append(" s after.</p>");
        }
        if (lastGood != null) {
            String json = Timeline.href(null, null, lastGood.from(), lastGood.to());
            b.append("<p class=\"tl-asof\">As the hosts' ledgers say, asked ").append(time(lastGood.to().truncatedTo(ChronoUnit.SECONDS), now)).append("; asked again each ")
                    .append(auditCache.toSeconds()).append(" s · <a href=\"").append(esc(json)).append("\">JSON</a> · <code>mesh audit --since 24h</code></p>")
                    .append(lastGood.html());
        }
        return b.toString();
    }

    private static String section(String body) {
        return "<section id=\"audit\"><h2>Last 24 hours</h2>" + body + "</section>";
    }

    private static String cell(FleetStatus.Cell c, Instant now) {
        StringBuilder b = new StringBuilder();
        PushState state = c.outcome() == null ? PushState.PENDING : c.outcome();
        String outcome = state.wire();
        b.append("<td data-label=\"").append(esc(c.module())).append("\" data-module=\"").append(esc(c.module()))
                .append("\" class=\"st-").append(esc(outcome)).append(c.window() != null ? " has-window" : "")
                .append(c.held().isEmpty() ? "" : " has-held").append("\">");
        b.append("<span class=\"tag st-").append(esc(outcome)).append("\">").append(esc(outcome.toUpperCase())).append("</span>");
        if (c.revision() != null) b.append(" <span class=\"rev\">").append(esc(c.revision())).append("</span>");
        if (c.desiredRevision() != null && !c.desiredRevision().equals(c.revision())) {
            b.append(" <span class=\"rev\">→ ").append(esc(c.desiredRevision())).append("</span>");
        }
        if (c.finishedAt() != null) b.append("<br><small>report ").append(age(c.ageSeconds(now))).append("</small>");
        if (c.window() != null) {
            b.append("<br><strong class=\"tag window\">WINDOW OPEN</strong> ").append(esc(c.window().schedule()))
                    .append(" since ").append(time(c.window().since(), now));
        }
        if (!c.held().isEmpty()) {
            b.append("<br><strong class=\"tag held\">HELD</strong> ").append(esc(String.join(", ", c.held())));
        }
        if (c.lastKnown() != null) {
            // kill -9 mid-window: the live nodes went with the agent's session, so say what was last known.
            b.append("<br><strong class=\"tag held\">AGENT OFFLINE</strong> last known: ").append(esc(c.lastKnown().describe()));
        }
        if (c.error() != null && state == PushState.FAILED) b.append("<br><small class=\"err\">").append(esc(c.error())).append("</small>");
        return b.append("</td>").toString();
    }

    private static String time(Instant t, Instant now) {
        if (t == null) return "-";
        long s = Duration.between(t, now).toSeconds();
        String rel = s >= 0 ? age(s) : "in " + age(-s).replace(" ago", "");
        return "<time datetime=\"" + esc(t.toString()) + "\" title=\"" + esc(t.toString()) + "\">" + esc(t.toString().replace('T', ' ')) + " (" + rel + ")</time>";
    }

    /** @return such as {@code 12s ago}, {@code 3m ago}, {@code 2h ago}, {@code 4d ago} */
    static String age(Long seconds) {
        if (seconds == null) return "-";
        long s = seconds;
        if (s < 90) return s + "s ago";
        if (s < 90 * 60) return (s / 60) + "m ago";
        if (s < 36 * 3600) return (s / 3600) + "h ago";
        return (s / 86400) + "d ago";
    }
}
