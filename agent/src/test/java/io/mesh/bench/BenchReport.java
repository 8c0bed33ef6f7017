package io.mesh.bench;

import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.List;
import java.util.Properties;

/**
 * Writes docs/benchmarks.md from the key=value results of one run.sh run (and the machine it ran on, and the
 * figures measured before the product changes, deploy/bench/before.properties).
 *
 * <p>Args: --results FILE --machine FILE --before FILE[,FILE...] (oldest first) --out FILE
 */
public final class BenchReport {
    private final Properties r, mach;
    private final List<Properties> before;

    private BenchReport(Properties r, Properties mach, List<Properties> before) {
        this.r = r;
        this.mach = mach;
        this.before = before;
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = Bench.args(argv);
        List<Properties> before = new java.util.ArrayList<>();
        for (String f : a.getOrDefault("before", "").split(",")) if (!f.isBlank()) before.add(load(f.trim()));
        BenchReport rep = new BenchReport(load(a.get("results")), load(a.get("machine")), before);
        Files.writeString(Path.of(a.get("out")), rep.markdown());
    }

    private static Properties load(String file) throws Exception {
        Properties p = new Properties();
        if (file != null && Files.exists(Path.of(file))) try (Reader rd = Files.newBufferedReader(Path.of(file))) { p.load(rd); }
        return p;
    }

    private String v(String k) { return r.getProperty(k, "n/a"); }
    private double d(Properties p, String k) {
        try { return Double.parseDouble(p.getProperty(k)); } catch (RuntimeException e) { return Double.NaN; }
    }
    private double d(String k) { return d(r, k); }
    private static String x(double ratio) { return Double.isNaN(ratio) ? "n/a" : String.format(Locale.ROOT, "%.2f×", ratio); }
    private static String met(boolean ok, double... inputs) {
        for (double i : inputs) if (Double.isNaN(i)) return "not measured";
        return ok ? "**met**" : "**missed**";
    }

    String markdown() {
        StringBuilder s = new StringBuilder();
        s.append("# mesh benchmarks\n\n");
        s.append("Written by `deploy/bench/run.sh` (").append(mach.getProperty("date", "?")).append(", commit `")
                .append(mach.getProperty("commit", "?")).append("`). Every ratio is mesh ÷ its baseline **measured in the same run**, ")
                .append("interleaved where the bench allows; absolute times on this shared machine move with its load, ratios much less. ")
                .append("No test asserts any of these figures: the benches print them.\n\n");
        s.append("## Machine\n\n| | |\n|---|---|\n");
        for (String k : new String[] {"nproc", "memory", "kernel", "java", "docker", "compose", "load"}) {
            s.append("| ").append(k).append(" | ").append(mach.getProperty(k, "?")).append(" |\n");
        }
        s.append("\n## Figures\n\n| bench | mesh | compared with (same run) | ratio | target | |\n|---|---|---|---|---|---|\n");
        double b1 = d("b1.mesh.p50_ms"), b1c = d("b1.compose.p50_ms"), b1f = d("b1.floor.p50_ms");
        s.append("| B1 no-op apply, 20 containers | p50 ").append(v("b1.mesh.p50_ms")).append(" ms (p90 ").append(v("b1.mesh.p90_ms"))
                .append(") | `docker-compose up -d` p50 ").append(v("b1.compose.p50_ms")).append(" ms; floor (one labelled list) p50 ")
                .append(v("b1.floor.p50_ms")).append(" ms | ").append(x(b1 / b1c)).append(" compose; ").append(x(b1 / b1f))
                .append(" floor | ≤ 0.1× compose; ≤ 1.5× floor | ").append(met(b1 / b1c <= 0.1, b1, b1c)).append(" / ")
                .append(met(b1 / b1f <= 1.5, b1, b1f)).append(" |\n");
        double b2 = d("b2.mesh.p50_ms"), b2c = d("b2.compose.p50_ms");
        s.append("| B2 recreate all 20 (stop timeout 1 s) | p50 ").append(v("b2.mesh.p50_ms")).append(" ms | `docker-compose up -d --force-recreate -t 1` p50 ")
                .append(v("b2.compose.p50_ms")).append(" ms | ").append(x(b2 / b2c)).append(" | ≤ 0.5× | ").append(met(b2 / b2c <= 0.5, b2, b2c)).append(" |\n");
        for (String c : new String[] {"1", "8"}) {
            double m = d("b3.c" + c + ".mesh_per_s"), raw = d("b3.c" + c + ".raw_per_s");
            s.append("| B3 lock acquire+release, ").append(c).append(c.equals("1") ? " client" : " contending clients").append(" | ")
                    .append(v("b3.c" + c + ".mesh_per_s")).append(" /s | raw ZooKeeper create-seq + getChildren (+ watch) + delete: ")
                    .append(v("b3.c" + c + ".raw_per_s")).append(" /s | ").append(x(m / raw)).append(" | ≥ 0.9× | ").append(met(m / raw >= 0.9, m, raw)).append(" |\n");
        }
        double b4 = d("b4.mesh.p99_ms"), b4r = d("b4.raw.p99_ms");
        s.append("| B4 window opens → held znode seen in another JVM | p50 ").append(v("b4.mesh.p50_ms")).append(" ms, p99 ").append(v("b4.mesh.p99_ms"))
                .append(" ms | raw create → watch: p50 ").append(v("b4.raw.p50_ms")).append(" ms, p99 ").append(v("b4.raw.p99_ms"))
                .append(" ms | p50 ").append(x(d("b4.mesh.p50_ms") / d("b4.raw.p50_ms"))).append(", p99 ").append(x(b4 / b4r))
                .append(" | p99 ≤ 2× | ").append(met(b4 / b4r <= 2, b4, b4r)).append(" |\n");
        double b4q = d("b4q.mesh.p99_ms"), b4qr = d("b4q.raw.p99_ms");
        s.append("| B4 after a quiet spell (").append(v("b4q.pause_ms")).append(" ms before each window; the ensemble's container manager every 100 ms) | p50 ")
                .append(v("b4q.mesh.p50_ms")).append(" ms, p99 ").append(v("b4q.mesh.p99_ms"))
                .append(" ms | raw create → watch: p50 ").append(v("b4q.raw.p50_ms")).append(" ms, p99 ").append(v("b4q.raw.p99_ms"))
                .append(" ms | p50 ").append(x(d("b4q.mesh.p50_ms") / d("b4q.raw.p50_ms"))).append(", p99 ").append(x(b4q / b4qr))
                .append(" | p99 ≤ 2× | ").append(met(b4q / b4qr <= 2, b4q, b4qr)).append(" |\n");
        double p100 = d("b5.h100.p99_ms"), p1000 = d("b5.h1000.p99_ms");
        for (String h : new String[] {"100", "300", "1000"}) {
            s.append("| B5 push → every host's report, ").append(h).append(" simulated hosts × 10 modules | p50 ").append(v("b5.h" + h + ".p50_ms"))
                    .append(" ms, p99 ").append(v("b5.h" + h + ".p99_ms")).append(" ms, slowest host ").append(v("b5.h" + h + ".all_hosts_ms"))
                    .append(" ms | growth with hosts | ");
            if (h.equals("1000")) {
                double growth = p1000 / p100;
                s.append("p99 ×").append(Bench.f(growth)).append(" for ×10 hosts | p99 ≤ 5 s at 1,000; growth ≤ linear | ")
                        .append(met(p1000 <= 5000, p1000)).append(" / ").append(met(growth <= 10, growth)).append(" |\n");
            } else {
                s.append(" | | |\n");
            }
        }
        double b10 = d("b10.ratio");
        s.append("| B10 rollout, ").append(v("b10.hosts")).append(" simulated hosts, max-parallel ").append(v("b10.max_parallel"))
                .append(" (decision 13) | push → done ").append(v("b10.total_s")).append(" s | the hosts' applies summed / max-parallel: ")
                .append(v("b10.ideal_s")).append(" s (sum ").append(v("b10.sum_apply_s")).append(" s; the same waves in lockstep ").append(v("b10.lockstep_s")).append(" s) | ").append(x(b10))
                .append(" | the coordination's overhead, shown | ").append(Double.isNaN(b10) ? "not measured" : "shown").append(" |\n");
        double rss = d("b6.rss_idle_mb"), cpu = d("b6.cpu_idle_pct"), start = d("b6.first_report_p50_ms");
        s.append("| B6 agent idle RSS (`mesh-agent run`, -Xmx64m) | ").append(v("b6.rss_idle_mb")).append(" MB (peak ").append(v("b6.rss_peak_mb"))
                .append(", ").append(v("b6.threads")).append(" threads) | | | ≤ 150 MB | ").append(met(rss <= 150, rss)).append(" |\n");
        s.append("| B6 agent idle CPU | ").append(v("b6.cpu_idle_pct")).append(" % of one core over ").append(v("b6.idle_window_s"))
                .append(" s | | | ~0 % | ").append(met(cpu <= 1, cpu)).append(" |\n");
        s.append("| B6 agent start → first report | p50 ").append(v("b6.first_report_p50_ms")).append(" ms (max ").append(v("b6.first_report_max_ms"))
                .append("; first launch, creating 2 containers: ").append(v("b6.first_report_create_ms")).append(" ms) | | | ≤ 2 s | ")
                .append(met(start <= 2000, start)).append(" |\n");
        double b8t = d("b8.threads"), b8rss = d("b8.rss_idle_mb");
        s.append("| B8 agent at rest, ").append(v("b8.modules")).append(" modules of 1 container (`mesh-agent run`, -Xmx64m) | ")
                .append(v("b8.threads")).append(" threads (").append(v("b8.java_threads")).append(" Java), ").append(v("b8.rss_idle_mb"))
                .append(" MB RSS | | | ≤ 12 threads; ≤ 120 MB | ").append(met(b8t <= 12, b8t)).append(" / ").append(met(b8rss <= 120, b8rss)).append(" |\n");

        s.append("\n## Before and after the product changes\n\n");
        s.append("Each \"before\" column is a commit before product changes made for these benchmarks, measured with the benches of its "
                + "time on this machine: ");
        for (int i = 0; i < before.size(); i++) {
            Properties b = before.get(i);
            s.append(i == 0 ? "" : "; ").append('`').append(b.getProperty("commit", "?")).append("` (").append(b.getProperty("date", "?"))
                    .append(b.containsKey("how") ? ", " + b.getProperty("how") : "").append(')');
        }
        s.append(". \"After\" is this run; for B6 the comparison is the same jar started as plain `java -Xmx64m -jar`, in this run.\n\n");
        s.append("| figure |");
        for (Properties b : before) s.append(" `").append(b.getProperty("commit", "?")).append("` |");
        s.append(" after | what changed |\n|---|");
        for (int i = 0; i <= before.size(); i++) s.append("---|");
        s.append("---|\n");
        row(s, "B1 no-op apply p50 (ms)", "b1.mesh.p50_ms", b1, "desired node validated once per change; then a reconcile that finds nothing changed takes no lock and writes nothing (decision 0004), desired nodes read from the agent's cache");
        row(s, "B1 ratio to the floor", "b1.ratio.floor", b1 / b1f, "");
        row(s, "B2 recreate 20 p50 (ms)", "b2.mesh.p50_ms", b2, "containers of a module change at once; then fewer Docker calls per recreate");
        row(s, "B2 ratio to compose", "b2.ratio.compose", b2 / b2c, "");
        row(s, "B4 p99 ratio to raw", "b4.ratio.p99", b4 / b4r, "");
        row(s, "B4 after a quiet spell, p50 (ms)", "b4q.mesh.p50_ms", d("b4q.mesh.p50_ms"), "lock, held and window parents persistent (decision 5): a window after a quiet minute no longer makes them again");
        row(s, "B4 after a quiet spell, p99 ratio to raw", "b4q.ratio.p99", b4q / b4qr, "");
        row(s, "B5 100 hosts p99 (ms)", "b5.h100.p99_ms", p100, "desired specs validated as JSON, not through SnakeYAML; one shared mapper; reports written without a read; desired read from the cache; then persistent lock parents and the report written with the lock's release (decision 5)");
        row(s, "B5 300 hosts p99 (ms)", "b5.h300.p99_ms", d("b5.h300.p99_ms"), "");
        row(s, "B5 1000 hosts p99 (ms)", "b5.h1000.p99_ms", p1000, "");
        s.append("| B6 start → first report p50 (ms) |");
        for (int i = 0; i < before.size(); i++) s.append(" |");
        s.append(' ').append(Bench.f(start)).append(" | launcher: serial GC, C1 only (plain `java -Xmx64m -jar`, this run: ")
                .append(Bench.f(d("b6plain.first_report_p50_ms"))).append(" ms) |\n");
        s.append("| B6 idle RSS (MB) |");
        for (int i = 0; i < before.size(); i++) s.append(" |");
        s.append(' ').append(Bench.f(rss)).append(" | plain `java -Xmx64m -jar`, this run: ").append(Bench.f(d("b6plain.rss_idle_mb"))).append(" MB |\n");
        s.append('\n');
        s.append(notes());
        return s.toString();
    }

    private void row(StringBuilder s, String what, String key, double after, String change) {
        s.append("| ").append(what).append(" |");
        for (Properties b : before) s.append(' ').append(Bench.f(d(b, key))).append(" |");
        s.append(' ').append(Bench.f(after)).append(" | ").append(change).append(" |\n");
    }

    private static String notes() {
        try {
            return Files.readString(Path.of(System.getProperty("bench.notes", "deploy/bench/notes.md")));
        } catch (Exception e) {
            return "";
        }
    }
}
