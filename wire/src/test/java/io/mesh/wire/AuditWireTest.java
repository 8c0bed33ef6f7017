package io.mesh.wire;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The audit transport's records (decision 28): their JSON round trip, the names of their nodes, and the paging. */
class AuditWireTest {
    static final Instant T0 = Instant.parse("2026-12-06T08:00:00.123456789Z");

    @Test
    void requestAndAnswerRoundTripTheirJson() {
        AuditRequest r = new AuditRequest("audit-0000000004", T0, T0.plusSeconds(3600), List.of("store"), List.of("host-a", "host-b"),
                T0.plusSeconds(3600), new ProcessRef(7, "mesh audit by alice"));
        assertThat(Json.read(Json.bytes(r), AuditRequest.class)).isEqualTo(r);
        assertThat(Json.text(r)).contains("\"audit\":\"audit-0000000004\"", "\"since\":\"2026-12-06T08:00:00.123456789Z\"");

        AuditAnswer pending = AuditAnswer.pending("audit-0000000004", "host-a");
        assertThat(Json.text(pending)).contains("\"state\":\"pending\"").doesNotContain("error");
        for (AuditAnswer a : List.of(pending, pending.answered(3), pending.failed("no ledger"))) {
            assertThat(Json.read(Json.bytes(a), AuditAnswer.class)).isEqualTo(a);
        }
        assertThat(Json.read("{\"audit\":\"a\",\"host\":\"h\",\"state\":\"later\"}".getBytes(), AuditAnswer.class).state())
                .as("a state a newer version writes").isEqualTo(AuditState.UNKNOWN);

        AuditPage page = new AuditPage(0, List.of(LedgerEntry.event(T0, "store", "store-registry", "c0ffee", "start", null, null),
                LedgerEntry.gap(T0, T0.plusSeconds(1), "engine restarted")));
        assertThat(Json.read(Json.bytes(page), AuditPage.class)).isEqualTo(page);
    }

    @Test
    void namesAndPathsOfAudits() {
        ZkPaths p = new ZkPaths("/mesh");
        assertThat(ZkPaths.auditName(3)).isEqualTo("audit-0000000003");
        assertThat(ZkPaths.auditSeq("audit-0000000003")).isEqualTo(3);
        assertThat(ZkPaths.auditSeq("audit-3")).isEqualTo(-1);
        assertThat(ZkPaths.auditSeq("plan-0000000003")).isEqualTo(-1);
        assertThat(p.audit("audit-0000000003", "host-a")).isEqualTo("/mesh/audits/audit-0000000003/host-a");
        assertThat(p.auditPage("audit-0000000003", "host-a", 2)).isEqualTo("/mesh/audits/audit-0000000003/host-a/page-2");
    }

    @Test
    void pagesSplitAt512KiBAndJoinBackInOrder() {
        List<LedgerEntry> lines = new ArrayList<>();
        String pad = "y".repeat(900);
        for (int i = 0; i < 2000; i++) lines.add(LedgerEntry.follow(T0.plusMillis(i), i + " " + pad)); // ~2 MB in all
        List<AuditPage> pages = AuditPage.split(lines, AuditPage.MAX_BYTES);
        assertThat(pages).hasSizeGreaterThanOrEqualTo(4);
        for (int i = 0; i < pages.size(); i++) {
            assertThat(pages.get(i).page()).isEqualTo(i);
            assertThat(Json.bytes(pages.get(i)).length).as("page %d", i).isLessThanOrEqualTo(AuditPage.MAX_BYTES);
        }
        // Full pages: the next line would not have fit.
        int first = Json.bytes(pages.get(0)).length;
        assertThat(first).isGreaterThan(AuditPage.MAX_BYTES - 2 * Json.bytes(lines.get(0)).length);
        List<AuditPage> shuffled = new ArrayList<>(pages);
        java.util.Collections.reverse(shuffled);
        assertThat(AuditPage.join(shuffled)).containsExactlyElementsOf(lines);
    }

    @Test
    void anEmptySliceIsOneEmptyPageAndAMissingPageIsSaid() {
        assertThat(AuditPage.split(List.of(), AuditPage.MAX_BYTES)).containsExactly(new AuditPage(0, List.of()));
        List<LedgerEntry> lines = new ArrayList<>();
        for (int i = 0; i < 100; i++) lines.add(LedgerEntry.follow(T0, "z".repeat(100)));
        List<AuditPage> pages = new ArrayList<>(AuditPage.split(lines, 2048));
        pages.remove(1);
        assertThatThrownBy(() -> AuditPage.join(pages)).hasMessageContaining("audit page 1 is missing");
    }

    @Test
    void aLineThatFitsNoPageTravelsAsAGapNeverAsItself() {
        LedgerEntry huge = LedgerEntry.follow(T0, "w".repeat(5000));
        List<AuditPage> pages = AuditPage.split(List.of(huge), 2048);
        assertThat(pages).hasSize(1);
        LedgerEntry sent = pages.get(0).lines().get(0);
        assertThat(sent.kind()).isEqualTo(LedgerKind.GAP);
        assertThat(sent.reason()).contains("does not fit an audit page of 2048 bytes");
        assertThat(AuditChecker.check("host-a", pages.get(0).lines(), T0.minusSeconds(1), T0.plusSeconds(1), null, T0.plusSeconds(5))
                .violations()).extracting(AuditReport.Violation::kind).containsExactly(AuditViolationKind.GAP);
    }
}
