package io.mesh.bench;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

/** What docs/benchmarks.md says of a run: a paragraph for each row that missed, and the rows it has no figure for. */
class BenchReportTest {
    @BeforeAll
    static void theRepositorysNotes() {
        // Surefire runs in agent/; run.sh runs BenchReport from the repository's root.
        System.setProperty("bench.notes", "../docs/benchmark-notes.md");
    }

    @AfterAll
    static void clear() {
        System.clearProperty("bench.notes");
    }

    private static Properties of(String... kv) {
        Properties p = new Properties();
        for (int i = 0; i + 1 < kv.length; i += 2) p.setProperty(kv[i], kv[i + 1]);
        return p;
    }

    @Test
    void onlyTheParagraphsOfRowsThatMissedAndTheUnmeasuredNamed() {
        String page = BenchReport.page(of(
                "b1.mesh.p50_ms", "5", "b1.floor.p50_ms", "4", "b1.compose.p50_ms", "800",
                "b9.hosts", "10", "b9.status.p50_ms", "700", "b9.curl_fleet.p50_ms", "20",
                "b9.held.p50_ms", "250", "b9.curl_held.p50_ms", "20", "b9.first_use_ms", "3000"));

        String misses = page.substring(page.indexOf("## The misses"), page.indexOf("## Before and after"));
        assertThat(misses).contains("**B9 (≤ 300 ms above `curl`).**")
                .doesNotContain("**B1 no-op apply").doesNotContain("**B1 against")
                .contains("**Not measured in this run:** B2, B2c, B3, B4, B4q, B5, B5flat, B5zk, B5cpu, B10, B6, B8t, B8m, B7, B7push, "
                        + "B11txn, B11fleet, B11push_status, B11heap, B11zk, B12, B13, B13disk, B14 (")
                .doesNotContain("has no paragraph");
        assertThat(page).contains("| 700 ms (680 ms above `curl`; first use, making the class-data archive: 3000 ms) |")
                .contains("≤ 300 ms above `curl` | **missed** |")
                .contains("| 250 ms (230 ms above `curl`) |")
                .doesNotContain("not measured | **met**");
        // From docs/benchmark-notes.md: its "How to rerun" whole, and of the rest only the paragraphs of the misses.
        assertThat(page).contains("## How to rerun\n\n```sh\nbash deploy/bench/run.sh").doesNotContain("### B")
                .doesNotContain("## What each bench measures").doesNotContain("## B2: recreate");
    }

    @Test
    void figuresThatAreNotFiguresAreNotMeasuredNeverMet() {
        String page = BenchReport.page(of(
                "b1.mesh.p50_ms", "-5", "b1.floor.p50_ms", "4", "b1.compose.p50_ms", "0x1p10",
                "b3.c1.mesh_per_s", "Infinity", "b3.c1.raw_per_s", "300", "b3.c8.mesh_per_s", "300", "b3.c8.raw_per_s", "0",
                "b2.exits.mesh.p50_ms", "3d", "b2.exits.floor.p50_ms", "3000",
                "b9.status.p50_ms", "10", "b9.curl_fleet.p50_ms", "30", "b9.held.p50_ms", "NaN", "b9.curl_held.p50_ms", "20"));

        assertThat(page).doesNotContain("**met**").doesNotContain("**missed**")
                .contains("**Not measured in this run:** B1, B1c, B2, B2c, B3,").contains("B9");
    }

    @Test
    void everyRowThatCanMissHasAParagraph() {
        Properties all = of(
                "b1.mesh.p50_ms", "50", "b1.floor.p50_ms", "4", "b1.compose.p50_ms", "100",
                "b2.ignores.mesh.p50_ms", "9000", "b2.ignores.floor.p50_ms", "3000",
                "b2.exits.mesh.p50_ms", "9000", "b2.exits.floor.p50_ms", "3000", "b2.exits.compose.p50_ms", "4000",
                "b3.c1.mesh_per_s", "10", "b3.c1.raw_per_s", "300", "b3.c8.mesh_per_s", "10", "b3.c8.raw_per_s", "300",
                "b4.mesh.p99_ms", "90", "b4.raw.p99_ms", "10", "b4q.mesh.p99_ms", "90", "b4q.raw.p99_ms", "10",
                "b5.h100.mesh.all_hosts_ms", "5000", "b5.h100.floor.all_hosts_ms", "500", "b5.h100.ratio.all_hosts", "10",
                "b5.h300.mesh.all_hosts_ms", "5000", "b5.h300.floor.all_hosts_ms", "500",
                "b5.h1000.mesh.all_hosts_ms", "50000", "b5.h1000.floor.all_hosts_ms", "500", "b5.h1000.ratio.all_hosts", "100",
                "b5.h1000.mesh.zk_requests_per_apply", "9", "b5.h1000.floor.zk_requests_per_apply", "4",
                "b5.h1000.mesh.cpu_ms_per_apply", "7", "b5.h1000.floor.cpu_ms_per_apply", "0.2",
                "b10.ratio", "1.2",
                "b6.rss_idle_mb", "200", "b6.cpu_idle_pct", "5", "b6.first_report_p50_ms", "5000",
                "b8.threads", "40", "b8.floor_threads", "17", "b8.rss_idle_mb", "200",
                "b7.h100.fleet.p99_ms", "20", "b7.h1000.fleet.p99_ms", "300", "b7.h1000.push_status.zk_requests_per_call", "11",
                "b9.status.p50_ms", "900", "b9.curl_fleet.p50_ms", "20", "b9.held.p50_ms", "900", "b9.curl_held.p50_ms", "20",
                "scale.hosts", "10000", "scale.modules", "10", "scale.push.txns", "3", "scale.push.txn_types", "{multi(22_ops)=3}",
                "scale.fleet.p99_ms", "400", "scale.pending.fleet.p99_ms", "300", "scale.after.fleet.p99_ms", "300",
                "scale.push_status.p99_ms", "600", "scale.pending.push_status.p99_ms", "500", "scale.after.push_status.p99_ms", "500",
                "scale.heap_used_mb", "700", "scale.znodes", "120000", "scale.follower.catchup_ms", "900",
                "fleet.mesh.p50_ms", "9000", "fleet.floor.p50_ms", "3000",
                "b13.b1.with.p50_ms", "30", "b13.b1.without.p50_ms", "20", "b13.b2.with.p50_ms", "3000", "b13.b2.without.p50_ms", "2000",
                "b13.disk.mib_per_10k", "2.3", "b13.disk.floor_mib_per_10k", "1.3", "b14.audit.p50_ms", "9000", "b14.checker_only.p50_ms", "40");

        String page = BenchReport.page(all);

        assertThat(page).doesNotContain("**met**").doesNotContain("not measured").doesNotContain("has no paragraph")
                .doesNotContain("No measured row missed");
        for (String title : new String[] {"**B1 no-op apply", "**B1 against", "**B2 against the floor",
                "**B3 lock", "**B4 warm", "**B4 after", "**B5 (", "**B5's ratio", "**B6 agent", "**B7 status", "**B7 push",
                "**B8 threads", "**B8 memory", "**B9 (", "**B11 one push", "**B11 `GET /v1/fleet`", "**B11 push status",
                "**B11 the coordinator's heap", "**B11 `mesh audit`", "**B12 a fleet", "**B13 the ledger's cost", "**B13 on disk", "**B14 ("}) {
            assertThat(page).as(title).contains(title);
        }
    }
}
