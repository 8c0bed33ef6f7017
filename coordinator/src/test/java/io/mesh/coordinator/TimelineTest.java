package io.mesh.coordinator;

import io.mesh.wire.AuditReport;
import io.mesh.wire.AuditReport.Item;
import io.mesh.wire.AuditReport.Violation;
import io.mesh.wire.AuditViolationKind;
import io.mesh.wire.LedgerEntry;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The page's last 24 hours ({@link Timeline}): positions, open items, violation links, escaping, silent hosts, nothing. */
class TimelineTest {
    static final Instant FROM = Instant.parse("2026-12-05T08:00:00Z");
    static final Instant NOW = Instant.parse("2026-12-06T08:00:00Z");

    static Item window(String module, String from, String to, String status, String... containers) {
        return new Item("window", "w-1", module, "sweep", null, null, Instant.parse(from), to == null ? null : Instant.parse(to),
                List.of(containers), 1, 1, status);
    }

    static AuditReport report(String host, List<Item> items, List<Violation> violations) {
        return new AuditReport(host, FROM, NOW, FROM, items, violations, null);
    }

    @Test
    void barsArePlacedInProportionToTheirTimes() {
        // 14:00 to 15:00 of a 24 h span starting at 08:00: a quarter in, a 24th wide.
        String html = Timeline.render(List.of(report("h1", List.of(window("m1", "2026-12-05T14:00:00Z", "2026-12-05T15:00:00Z", "ok", "m1-app")),
                List.of())), FROM, NOW);
        assertThat(html).contains("class=\"tl-bar tl-window\" role=\"img\" style=\"left:25.000%;width:4.167%;--lane:0\"");
        assertThat(html).contains("data-host=\"h1\" data-module=\"m1\"", ">window sweep</span>");
        // An hour tick each full UTC hour, labelled; 08:00 is the span's start.
        assertThat(html).contains("style=\"left:0.000%\"><span>08:00</span>", "style=\"left:50.000%\"><span>20:00</span>",
                "style=\"left:100.000%\"></span>");
        // The tooltip says type, id, module, from–to, containers, stops and starts, status.
        assertThat(html).contains("title=\"window sweep · w-1\nmodule: m1\n2026-12-05 14:00:00Z – 2026-12-05 15:00:00Z (60m)\n"
                + "containers: m1-app\nstops 1 · starts 1\nstatus: ok\"");
    }

    @Test
    void anItemBeforeTheSpanStartsAtItsLeftEdgeAndOverlappingOnesStack() {
        Item early = window("m1", "2026-12-05T06:00:00Z", "2026-12-05T14:00:00Z", "ok");
        Item hold = new Item("hold", "hold:m1-app:ann", "m1", null, "ann", "disk swap", Instant.parse("2026-12-05T13:00:00Z"),
                Instant.parse("2026-12-05T16:00:00Z"), List.of("m1-app"), 0, 0, "ok");
        String html = Timeline.render(List.of(report("h1", List.of(early, hold), List.of())), FROM, NOW);
        assertThat(html).contains("style=\"left:0.000%;width:25.000%;--lane:0\"", "style=\"left:20.833%;width:12.500%;--lane:1\"",
                "style=\"--lanes:2\"", ">hold by ann</span>", "reason: disk swap");
    }

    @Test
    void anOpenItemRunsToNow() {
        Item open = new Item("hold", "hold:m1-app:ann", "m1", null, "ann", "disk", Instant.parse("2026-12-05T20:00:00Z"), null,
                List.of("m1-app"), 1, 0, "open");
        String html = Timeline.render(List.of(report("h1", List.of(open), List.of())), FROM, NOW);
        assertThat(html).contains("class=\"tl-bar tl-hold tl-open\" role=\"img\" style=\"left:50.000%;width:50.000%;--lane:0\"");
        assertThat(html).contains("2026-12-05 20:00:00Z – now (open) (12h 0m)", "status: open");
    }

    @Test
    void aViolationIsAMarkThatLinksToItsAuditEntry() {
        Violation v = new Violation(AuditViolationKind.TOUCHED_WHILE_HELD, "m1", "m1-app", Instant.parse("2026-12-05T14:30:00.250Z"), "w-1",
                "m1-app was started by nobody's call while window w-1 held it", null);
        String html = Timeline.render(List.of(report("h1", List.of(window("m1", "2026-12-05T14:00:00Z", "2026-12-05T15:00:00Z", "violations")),
                List.of(v))), FROM, NOW);
        assertThat(html).contains("<a class=\"tl-mark tl-v-touched-while-held\" "
                + "href=\"/v1/audit?host=h1&amp;module=m1&amp;since=2026-12-05T14:25:00Z&amp;until=2026-12-05T14:35:01Z\" style=\"left:27.084%\"");
        assertThat(html).contains("title=\"touched-while-held at 2026-12-05 14:30:00Z · m1-app · in w-1: m1-app was started by nobody&#39;s call while window w-1 held it\"");
        assertThat(html).contains("tl-bar tl-window tl-bad");
        // On the module's row, not the host's.
        assertThat(html.substring(html.indexOf("data-module=\"m1\""))).contains("tl-mark");
    }

    @Test
    void aGapIsAHatchedBandOnTheHostsRowLinkingToTheAuditAroundIt() {
        Violation gap = new Violation(AuditViolationKind.GAP, null, null, Instant.parse("2026-12-05T20:00:00Z"), null, "dockerd restarted",
                LedgerEntry.gap(Instant.parse("2026-12-05T20:00:00Z"), Instant.parse("2026-12-05T22:00:00Z"), "dockerd restarted"));
        String html = Timeline.render(List.of(report("h1", List.of(), List.of(gap))), FROM, NOW);
        assertThat(html).contains("<a class=\"tl-gap tl-v-gap\" href=\"/v1/audit?host=h1&amp;since=2026-12-05T19:55:00Z&amp;until=2026-12-05T22:05:00Z\" "
                + "style=\"left:50.000%;width:8.333%\"");
        assertThat(html).contains("no violation", "1 gap").doesNotContain("data-module=");
    }

    @Test
    void aFreezeOfEveryModuleAndTheTimeBeforeTheLedgerAreOnTheHostsRow() {
        Item freeze = new Item("freeze", "freeze:_all:2026-12-05T10:00:00Z", "_all", null, "ops", "release day",
                Instant.parse("2026-12-05T10:00:00Z"), Instant.parse("2026-12-05T12:00:00Z"), List.of(), 0, 0, "ok");
        AuditReport r = new AuditReport("h1", FROM, NOW, Instant.parse("2026-12-05T09:00:00Z"), List.of(freeze), List.of(), null);
        String html = Timeline.render(List.of(r), FROM, NOW);
        assertThat(html).contains(">freeze (all modules)</span>", "module: all modules", "class=\"tl-noledger\" style=\"left:0%;width:4.167%\"",
                "no ledger before 2026-12-05 09:00:00Z").doesNotContain("data-module=");
    }

    @Test
    void everyStringFromAReportIsEscaped() {
        String evil = "<script>alert(1)</script>";
        Item hold = new Item("hold", "hold:" + evil + ":ann", "m&<x>", null, "\"><img src=x onerror=alert(2)>", evil,
                Instant.parse("2026-12-05T13:00:00Z"), null, List.of(evil), 0, 0, "open");
        Violation v = new Violation(AuditViolationKind.OUTSIDE_MESH, "m&<x>", evil, Instant.parse("2026-12-05T14:00:00Z"), null, evil, null);
        String html = Timeline.render(List.of(report("<b>h1</b>", List.of(hold), List.of(v)),
                AuditReport.unanswered("'h2'", FROM, NOW, evil)), FROM, NOW);
        assertThat(html).doesNotContain("<script", "<img", "<b>h1</b>", "'h2'", "m&<x>");
        assertThat(html).contains("&lt;script&gt;alert(1)&lt;/script&gt;", "&quot;&gt;&lt;img src=x", "&lt;b&gt;h1&lt;/b&gt;", "&#39;h2&#39;",
                "data-module=\"m&amp;&lt;x&gt;\"", "host=%3Cb%3Eh1%3C%2Fb%3E&amp;module=m%26%3Cx%3E&amp;since=");
    }

    @Test
    void aHostThatDidNotAnswerHasARowSayingSo() {
        String html = Timeline.render(List.of(report("h1", List.of(window("m1", "2026-12-05T14:00:00Z", "2026-12-05T15:00:00Z", "ok")), List.of()),
                AuditReport.unanswered("h2", FROM, NOW, "did not answer within 10s")), FROM, NOW);
        assertThat(html).contains("<div class=\"tl-row tl-host tl-error\" data-host=\"h2\"", "DID NOT ANSWER", "did not answer within 10s");
    }

    @Test
    void anItemOrViolationWithFieldsMissingIsStillDrawn() {
        Item odd = new Item(null, null, "m1", null, null, null, null, null, null, 0, 0, null);
        Violation bare = new Violation(null, "m1", null, null, null, null, null);
        String html = Timeline.render(List.of(report("h1", List.of(odd), List.of(bare))), FROM, NOW);
        assertThat(html).contains("class=\"tl-bar tl-other tl-open\" role=\"img\" style=\"left:0.000%;width:100.000%",
                "<a class=\"tl-mark tl-v-unknown\"");
    }

    @Test
    void nothingInTheSpanIsSaid() {
        assertThat(Timeline.render(List.of(), FROM, NOW)).contains("Nothing in the last 24 hours", "no host answered").doesNotContain("timeline\"");
        assertThat(Timeline.render(List.of(report("h1", List.of(), List.of()), report("h2", List.of(), List.of())), FROM, NOW))
                .contains("Nothing in the last 24 hours", "on 2 hosts");
        // One quiet host among busy ones: its own row says so.
        String html = Timeline.render(List.of(report("h1", List.of(window("m1", "2026-12-05T14:00:00Z", "2026-12-05T15:00:00Z", "ok")), List.of()),
                report("h2", List.of(), List.of())), FROM, NOW);
        assertThat(html.substring(html.indexOf("data-host=\"h2\""))).contains("nothing in the last 24 hours");
        assertThatThrownBy(() -> Timeline.render(List.of(), NOW, FROM)).isInstanceOf(IllegalArgumentException.class);
    }
}
