package io.mesh.bench;

import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.List;
import java.util.Properties;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * Writes docs/benchmarks.md from the key=value results of one run.sh run: the table (bench, mesh, floor, ratio,
 * target, met or missed), the machine it ran on, then from docs/benchmark-notes.md (hand-written) its section
 * {@value #RERUN}, the paragraph under {@value #MISSES} for each row that missed in this run (its {@code ### <id>}), and
 * the figures measured before the product changes (deploy/bench/before*.properties).
 *
 * <p>Args: --results FILE --machine FILE --before FILE[,FILE...] (oldest first) [--before-rows FILE] --out FILE
 */
public final class BenchReport {
    private final Properties r, mach;
    private final List<Properties> before;
    private final List<String[]> beforeRows;
    /** Ids of the rows that missed, in table order (each once). */
    private final Set<String> missed = new LinkedHashSet<>();
    /** Ids of the rows this run has no figure for (a bench that failed or ran out of time), in table order. */
    private final Set<String> unmeasured = new LinkedHashSet<>();
    /** Ids of the rows no bench measures yet, each with its paragraph in the notes saying why. */
    private final Set<String> notBuilt = new LinkedHashSet<>();

    private BenchReport(Properties r, Properties mach, List<Properties> before, List<String[]> beforeRows) {
        this.r = r;
        this.mach = mach;
        this.before = before;
        this.beforeRows = beforeRows;
    }

    /** @return the page for these results, with no machine and no before figures (tests) */
    static String page(Properties results) {
        return new BenchReport(results, new Properties(), List.of(), List.of()).markdown();
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = Bench.args(argv);
        List<Properties> before = new java.util.ArrayList<>();
        for (String f : a.getOrDefault("before", "").split(",")) if (!f.isBlank()) before.add(load(f.trim()));
        BenchReport rep = new BenchReport(required(a, "results"), required(a, "machine"), before, beforeRows(a.get("before-rows")));
        Files.writeString(Path.of(a.get("out")), rep.markdown());
    }

    /** @throws IllegalArgumentException when {@code --name} is not given or names no file: a page of "?" would say nothing */
    private static Properties required(Map<String, String> a, String name) throws Exception {
        String file = a.get(name);
        if (file == null || !Files.isRegularFile(Path.of(file))) {
            throw new IllegalArgumentException("--" + name + " " + file + ": no such file (run.sh writes it; see the class's javadoc)");
        }
        return load(file);
    }

    private static Properties load(String file) throws Exception {
        Properties p = new Properties();
        if (file != null && Files.exists(Path.of(file))) try (Reader rd = Files.newBufferedReader(Path.of(file))) { p.load(rd); }
        return p;
    }

    private String v(String k) { return r.getProperty(k, "n/a"); }
    /** A figure: a plain non-negative decimal as the benches write them; anything else (a sign, "3d", hex, "Infinity") is none. */
    private static final java.util.regex.Pattern FIGURE = java.util.regex.Pattern.compile("\\d+(\\.\\d+)?");

    private double d(Properties p, String k) {
        String v = p.getProperty(k);
        return v != null && FIGURE.matcher(v.trim()).matches() ? Double.parseDouble(v.trim()) : Double.NaN;
    }
    private double d(String k) { return d(r, k); }
    private static String x(double ratio) { return Double.isNaN(ratio) ? "n/a" : String.format(Locale.ROOT, "%.2f×", ratio); }
    /**
     * The verdict of one row; a miss is remembered under {@code id}, the heading of its paragraph in benchmark-notes.md.
     *
     * @param inputs the figures and ratios the verdict is taken from
     * @return "met", "missed", or "not measured" when an input is missing or not finite
     */
    private String unmeasured(String id) {
        unmeasured.add(id);
        return "not measured";
    }

    private String met(String id, boolean ok, double... inputs) {
        for (double i : inputs) {
            if (!Double.isFinite(i)) return unmeasured(id);  // a figure missing, or a ratio to a zero floor
        }
        if (!ok) missed.add(id);
        return ok ? "**met**" : "**missed**";
    }

    /** The verdict of a row with no target: "shown", or "not measured" when an input is missing. */
    private String shown(String id, double... inputs) {
        for (double i : inputs) {
            if (!Double.isFinite(i)) return unmeasured(id);
        }
        return "shown";
    }

    /** B11's rows: the coordinator and the ensemble at fleet size ({@code ScaleBench}). */
    private void scale(StringBuilder s) {
        String size = v("scale.hosts") + " hosts × " + v("scale.modules") + " modules";
        double txns = d("scale.push.txns");
        line(s, "B11 one push to " + size + ": ZooKeeper transactions, read from the leader's log", v("scale.push.txns") + " ("
                        + v("scale.push.txn_types").replace('_', ' ') + ")", "SPEC: one transaction a push", Double.NaN, "≤ 1 (the hosts' own writes aside)",
                met("B11txn", txns <= 1, txns));
        // The floor of each moment is Jetty sending as many bytes as that moment's push status from memory.
        double floor = Math.max(d("scale.floor_bytes.p99_ms"), Math.max(d("scale.pending.floor_bytes.p99_ms"), d("scale.after.floor_bytes.p99_ms")));
        for (String[] c : new String[][] {{"fleet", "`GET /v1/fleet` (what `mesh status` prints)"}, {"push_status", "push status (what `mesh push --wait` polls)"}}) {
            double worst = Math.max(d("scale." + c[0] + ".p99_ms"), Math.max(d("scale.pending." + c[0] + ".p99_ms"), d("scale.after." + c[0] + ".p99_ms")));
            line(s, "B11 " + c[1] + ", " + size + ", p99, the worst of three moments", Bench.f(worst) + " ms (at rest " + ms("scale." + c[0] + ".p99_ms")
                            + "; the push pending everywhere " + ms("scale.pending." + c[0] + ".p99_ms") + "; every host reported "
                            + ms("scale.after." + c[0] + ".p99_ms") + "; " + v("scale.after." + c[0] + ".mb") + " MB an answer)",
                    "Jetty sending the push status's bytes (" + v("scale.after.push_status.mb") + " MB) from memory, the worst p99: " + Bench.f(floor)
                            + " ms (p50 " + ms("scale.after.floor_bytes.p50_ms") + ")", worst / floor, "≤ 150 ms",
                    met("B11" + c[0], worst <= 150, worst));
        }
        double heap = d("scale.heap_used_mb");
        line(s, "B11 the coordinator's heap, " + size + " (in use after a full GC, `-Xmx512m`)", v("scale.heap_used_mb") + " MB",
                "", Double.NaN, "≤ 512 MB", met("B11heap", heap <= 512, heap));
        line(s, "B11 the ensemble at " + size + ": its data, and a follower's catch-up after a restart while every host reported a push",
                v("scale.znodes") + " znodes, " + v("scale.data_mb") + " MB of data, newest snapshot " + v("scale.snapshot_mb") + " MB; catch-up "
                        + ms("scale.follower.catchup_ms") + " (the hosts' " + v("scale.hosts_report_s") + " s of reports; the push status read done "
                        + ms("scale.status_done_after_reports_ms") + " after the last)", "", Double.NaN, "shown",
                shown("B11zk", d("scale.znodes"), d("scale.follower.catchup_ms")));
        notBuilt.add("B11audit");
        line(s, "B11 `mesh audit` and `mesh why` at " + size, "n/a", "", Double.NaN, "within their own targets (B14: ≤ 5 s at 100 hosts)",
                "no bench yet (below)");
    }

    /** One row of the figures table: bench, mesh, floor, ratio, target, verdict. */
    private static void line(StringBuilder s, String bench, String mesh, String floor, double ratio, String target, String verdict) {
        s.append("| ").append(bench).append(" | ").append(mesh).append(" | ").append(floor).append(" | ").append(x(ratio))
                .append(" | ").append(target).append(" | ").append(verdict).append(" |\n");
    }

    private String ms(String key) { return Double.isNaN(d(key)) ? "n/a" : v(key) + " ms"; }

    String markdown() {
        StringBuilder s = new StringBuilder();
        s.append("# mesh benchmarks\n\n");
        s.append("Written by `deploy/bench/run.sh` (").append(mach.getProperty("date", "?")).append(", commit `")
                .append(mach.getProperty("commit", "?")).append("`). Each figure is mesh against the **floor measured in the same run**: ")
                .append("the least work any correct implementation of the same contract must do, done with the plain clients ")
                .append("(docker-java, the ZooKeeper client), interleaved with mesh where the bench allows. Absolute times on this shared ")
                .append("machine move with its load; the ratios much less. No test asserts these figures: the benches print them.\n\n");
        s.append("| bench | mesh | floor (same run) | ratio | target | |\n|---|---|---|---|---|---|\n");
        double b1 = d("b1.mesh.p50_ms"), b1c = d("b1.compose.p50_ms"), b1f = d("b1.floor.p50_ms");
        line(s, "B1 no-op apply, 20 containers, p50", ms("b1.mesh.p50_ms"), "one labelled container list: " + ms("b1.floor.p50_ms"),
                b1 / b1f, "≤ 1.5×", met("B1", b1 / b1f <= 1.5, b1, b1f, b1 / b1f));
        line(s, "B1 against `docker-compose up -d`", ms("b1.mesh.p50_ms"), "compose: " + ms("b1.compose.p50_ms"), b1 / b1c, "≤ 0.1×",
                met("B1c", b1 / b1c <= 0.1, b1, b1c, b1 / b1c));
        for (String w : new String[] {"ignores", "exits"}) {
            double m = d("b2." + w + ".mesh.p50_ms"), f = d("b2." + w + ".floor.p50_ms");
            line(s, "B2 recreate all 20, process " + (w.equals("ignores") ? "ignoring SIGTERM (stop timeout 1 s)" : "exiting on SIGTERM") + ", p50",
                    ms("b2." + w + ".mesh.p50_ms"), "create, stop, rename ×2, start, remove, all at once: " + ms("b2." + w + ".floor.p50_ms"),
                    m / f, "≤ 1.15×", met("B2", m / f <= 1.15, m, f, m / f));
        }
        double b2e = d("b2.exits.mesh.p50_ms"), b2c = d("b2.exits.compose.p50_ms");
        // Retired: compose's own Docker calls are most of its time, so no implementation reaches 0.5× here (the floor row shows it).
        line(s, "B2 exiting on SIGTERM, against `docker-compose up -d --force-recreate -t 1`", ms("b2.exits.mesh.p50_ms"),
                "compose: " + ms("b2.exits.compose.p50_ms") + " (the floor itself: " + x(d("b2.exits.floor.p50_ms") / b2c) + " compose)",
                b2e / b2c, "shown (0.5× retired: below the floor)", shown("B2c", b2e / b2c));
        for (String c : new String[] {"1", "8"}) {
            double m = d("b3.c" + c + ".mesh_per_s"), raw = d("b3.c" + c + ".raw_per_s");
            line(s, "B3 lock acquire+release, " + c + (c.equals("1") ? " client" : " contending clients"), v("b3.c" + c + ".mesh_per_s") + " /s",
                    "create-seq, getChildren (+ watch), delete: " + v("b3.c" + c + ".raw_per_s") + " /s", m / raw, "≥ 0.9×", met("B3", m / raw >= 0.9, m, raw, m / raw));
        }
        for (String k : new String[] {"b4", "b4q"}) {
            double m = d(k + ".mesh.p99_ms"), f = d(k + ".raw.p99_ms");
            line(s, k.equals("b4") ? "B4 window opens → held znode seen in another JVM, p99, warm"
                            : "B4 the same after a quiet spell (" + v("b4q.pause_ms") + " ms before each; container manager every 100 ms)",
                    ms(k + ".mesh.p99_ms") + " (p50 " + ms(k + ".mesh.p50_ms") + ")",
                    "create-seq + getChildren, then create → watch: " + ms(k + ".raw.p99_ms") + " (p50 " + ms(k + ".raw.p50_ms") + ")",
                    m / f, "≤ 1.3×", met(k.equals("b4") ? "B4" : "B4q", m / f <= 1.3, m, f, m / f));
        }
        for (String h : new String[] {"100", "300", "1000"}) {
            String k = "b5.h" + h;
            double m = d(k + ".mesh.all_hosts_ms"), f = d(k + ".floor.all_hosts_ms");
            line(s, "B5 push → every host's report, " + h + " simulated hosts × 10 modules", ms(k + ".mesh.all_hosts_ms") + " (p99 host "
                            + ms(k + ".mesh.p99_ms") + ")", "plain ZooKeeper hosts: " + ms(k + ".floor.all_hosts_ms") + " (p99 host " + ms(k + ".floor.p99_ms") + ")",
                    m / f, h.equals("1000") ? "≤ 2×" : "shown", h.equals("1000") ? met("B5", m / f <= 2, m, f, m / f) : shown("B5", m / f));
        }
        double flat = d("b5.h1000.ratio.all_hosts") / d("b5.h100.ratio.all_hosts");
        line(s, "B5 the ratio from 100 to 1,000 hosts", "", "", flat, "≤ 1.25×", met("B5flat", flat <= 1.25, flat));
        String b5at = Double.isNaN(d("b5.h1000.mesh.zk_requests_per_apply")) ? "b5.h100" : "b5.h1000";
        double zm = d(b5at + ".mesh.zk_requests_per_apply"), zf = d(b5at + ".floor.zk_requests_per_apply");
        line(s, "B5 ZooKeeper requests per module apply (" + b5at.substring(4) + " hosts; every server's `srvr` Received over the push, "
                        + "pings and the bench's watcher included on both sides)", v(b5at + ".mesh.zk_requests_per_apply"),
                "plain ZooKeeper hosts: " + v(b5at + ".floor.zk_requests_per_apply"), zm / zf, "shown", shown("B5zk", zm / zf));
        double cm = d(b5at + ".mesh.cpu_ms_per_apply"), cf = d(b5at + ".floor.cpu_ms_per_apply");
        line(s, "B5 the hosts JVMs' CPU per module apply (" + b5at.substring(4) + " hosts; `/proc` utime + stime over the push)",
                v(b5at + ".mesh.cpu_ms_per_apply") + " ms", "plain ZooKeeper hosts: " + v(b5at + ".floor.cpu_ms_per_apply") + " ms",
                cm / cf, "shown", shown("B5cpu", cm, cf));
        double b10 = d("b10.ratio");
        line(s, "B10 rollout, " + v("b10.hosts") + " simulated hosts, max-parallel " + v("b10.max_parallel"), "push → done " + v("b10.total_s") + " s",
                "the hosts' applies summed / max-parallel: " + v("b10.ideal_s") + " s (lockstep waves " + v("b10.lockstep_s") + " s)", b10,
                "shown", Double.isNaN(b10) ? unmeasured("B10") : "shown");
        double rss = d("b6.rss_idle_mb"), cpu = d("b6.cpu_idle_pct"), start = d("b6.first_report_p50_ms");
        line(s, "B6 agent idle RSS (`mesh-agent run`, -Xmx64m)", v("b6.rss_idle_mb") + " MB (" + v("b6.threads") + " threads)",
                "`java -Xmx64m -jar`: " + v("b6plain.rss_idle_mb") + " MB", rss / d("b6plain.rss_idle_mb"), "≤ 150 MB", met("B6", rss <= 150, rss));
        line(s, "B6 agent idle CPU", v("b6.cpu_idle_pct") + " % of a core over " + v("b6.idle_window_s") + " s", "", Double.NaN, "≤ 1 % (~0)", met("B6", cpu <= 1, cpu));
        line(s, "B6 agent start → first report, p50", ms("b6.first_report_p50_ms"), "`java -Xmx64m -jar`: " + ms("b6plain.first_report_p50_ms"),
                start / d("b6plain.first_report_p50_ms"), "≤ 2 s", met("B6", start <= 2000, start));
        double b8t = d("b8.threads"), b8rss = d("b8.rss_idle_mb");
        line(s, "B8 agent at rest, " + v("b8.modules") + " modules (`mesh-agent run`, -Xmx64m)", v("b8.threads") + " threads ("
                + v("b8.java_threads") + " Java), " + v("b8.rss_idle_mb") + " MB RSS", "a `main` that starts a Curator client and sleeps, same launcher: "
                + v("b8.floor_threads") + " threads, " + v("b8.floor_rss_mb") + " MB", Double.NaN, "≤ the floor + 4 threads; ≤ 120 MB",
                met("B8t", b8t <= d("b8.floor_threads") + 4, b8t, d("b8.floor_threads")) + " / " + met("B8m", b8rss <= 120, b8rss));
        double f100 = d("b7.h100.fleet.p99_ms"), f1000 = d("b7.h1000.fleet.p99_ms");
        line(s, "B7 `GET /v1/fleet` (what `mesh status` prints), 1,000 hosts × 10 modules, p99", ms("b7.h1000.fleet.p99_ms")
                        + " (100 hosts: " + ms("b7.h100.fleet.p99_ms") + "; " + v("b7.h1000.fleet.zk_requests_per_call") + " ZooKeeper requests a call)",
                "one report read: " + ms("b7.h1000.floor_one_read.p99_ms"), Double.NaN, "≤ 100 ms, and ≤ 1.5× the 100 hosts' p99 (not growing with the fleet)",
                met("B7", f1000 <= 100 && f1000 <= 1.5 * f100, f100, f1000));
        double polls = d("b7.h1000.push_status.zk_requests_per_call");
        line(s, "B7 push status (what `mesh push --wait` polls), 1,000 hosts, ZooKeeper requests a call", v("b7.h1000.push_status.zk_requests_per_call")
                        + " (p99 " + ms("b7.h1000.push_status.p99_ms") + ")", "", Double.NaN, "no load beyond the coordinator's watches",
                met("B7push", polls < 1, polls));
        for (String[] c : new String[][] {{"status", "fleet"}, {"held", "held"}}) {
            double m = d("b9." + c[0] + ".p50_ms"), f = d("b9.curl_" + c[1] + ".p50_ms");
            line(s, "B9 `mesh " + c[0] + "`, the whole process, against a running coordinator (" + v("b9.hosts") + " hosts × 10 modules), p50",
                    Double.isNaN(m - f) ? ms("b9." + c[0] + ".p50_ms") : ms("b9." + c[0] + ".p50_ms") + " (" + Bench.f(m - f) + " ms above `curl`"
                            + (c[0].equals("status") ? "; first use, making the class-data archive: " + ms("b9.first_use_ms") : "") + ")",
                    "`curl` of `GET /v1/" + c[1] + "`: " + ms("b9.curl_" + c[1] + ".p50_ms"), Double.NaN, "≤ 300 ms above `curl`",
                    met("B9", m - f <= 300, m, f, m >= f ? m - f : Double.NaN));  // a JVM quicker than curl did not run
        }
        scale(s);
        double fm = d("fleet.mesh.p50_ms"), ff = d("fleet.floor.p50_ms");
        line(s, "B12 push → every engine's containers replaced and running, `fleet.sh up " + v("fleet.engines") + "` (" + v("fleet.containers_per_engine")
                        + " containers an engine, exiting on SIGTERM), p50 of " + v("fleet.rounds") + " rounds", ms("fleet.mesh.p50_ms") + " (slowest " + ms("fleet.mesh.max_ms") + ")",
                "create, stop, rename ×2, start, remove, on every engine at once: " + ms("fleet.floor.p50_ms") + " (slowest " + ms("fleet.floor.max_ms") + ")",
                fm / ff, "≤ 1.3×", met("B12", fm / ff <= 1.3, fm, ff, fm / ff));
        for (String[] c : new String[][] {{"b1", "B13 the ledger's cost: B1's no-op apply with it, p50 (" + v("b13.b1.ledger_lines") + " lines written)"},
                {"b2", "B13 the ledger's cost: B2's recreate of 20 with it (exiting on SIGTERM), p50 (" + v("b13.b2.ledger_lines_per_recreate")
                        + " lines a recreate)"}}) {
            double m = d("b13." + c[0] + ".with.p50_ms"), f = d("b13." + c[0] + ".without.p50_ms");
            line(s, c[1], ms("b13." + c[0] + ".with.p50_ms"), "the same applier without a ledger, interleaved: " + ms("b13." + c[0] + ".without.p50_ms"),
                    m / f, "≤ 1.02×", met("B13", m / f <= 1.02, m, f, m / f));
        }
        double disk = d("b13.disk.mib_per_10k"), diskFloor = d("b13.disk.floor_mib_per_10k");
        line(s, "B13 the ledger on disk, 10,000 Docker event lines", v("b13.disk.mib_per_10k") + " MiB (" + v("b13.disk.bytes_per_line")
                        + " bytes a line; " + v("b13.disk.lines_per_s") + " lines/s written, fsync'd)",
                "the files as written, until closed and compressed: " + v("b13.disk.plain_mib_per_10k") + " MiB; the same facts as plain text, one line each: "
                        + v("b13.disk.floor_mib_per_10k") + " MiB", disk / diskFloor, "≤ 1 MiB", met("B13disk", disk <= 1, disk));
        double audit = d("b14.audit.p50_ms");
        line(s, "B14 `mesh audit --since 24h`, " + v("b14.hosts") + " simulated hosts × " + v("b14.modules") + " modules of a day's windows ("
                        + v("b14.window_items") + " windows checked ok), p50", ms("b14.audit.p50_ms") + " (through `GET /v1/audit`: "
                        + ms("b14.http.p50_ms") + "; first, cold: " + ms("b14.first_ms") + ")",
                "the checker alone over the same lines: " + ms("b14.checker_only.p50_ms"), Double.NaN, "≤ 5 s",
                met("B14", audit <= 5000, audit));
        s.append('\n');
        s.append("## Machine\n\n| | |\n|---|---|\n");
        for (String k : new String[] {"nproc", "memory", "kernel", "java", "docker", "compose", "load"}) {
            s.append("| ").append(k).append(" | ").append(mach.getProperty(k, "?")).append(" |\n");
        }
        s.append('\n');
        String notes = read("bench.notes", "docs/benchmark-notes.md");
        String rerun = section(notes, RERUN);
        if (!rerun.isEmpty()) s.append(RERUN).append("\n\n").append(rerun).append("\n\n");
        s.append("## The misses\n\nOne paragraph per row that missed in this run, from [benchmark-notes.md](benchmark-notes.md#when-a-row-misses), ")
                .append("with the profiles and changes behind them.\n\n").append(misses(section(notes, MISSES)));
        return s.append("\n## Before and after\n\n").append(beforeAfter()).toString();
    }

    /** The section of benchmark-notes.md copied whole into the page. */
    static final String RERUN = "## How to rerun";
    /** The section of benchmark-notes.md holding a paragraph per row that can miss, each under {@code ### <id>}. */
    static final String MISSES = "## When a row misses";

    /** @return the body of the section of {@code page} headed exactly {@code heading}, up to the next "## ", or "" */
    static String section(String page, String heading) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^" + java.util.regex.Pattern.quote(heading) + "\\s*$").matcher(page);
        if (!m.find()) return "";
        java.util.regex.Matcher next = java.util.regex.Pattern.compile("(?m)^## ").matcher(page);
        int end = next.find(m.end()) ? next.start() : page.length();
        return page.substring(m.end(), end).strip();
    }

    /**
     * One paragraph per row that missed: the paragraph under {@code ### <id>}, in table order; a miss with
     * no section gets a line saying so, not silence.
     */
    String misses(String misses) {
        Map<String, String> paragraphs = new java.util.HashMap<>();
        String[] parts = misses.split("(?m)^### ");
        for (int i = 1; i < parts.length; i++) {
            int nl = parts[i].indexOf('\n');
            if (nl > 0) paragraphs.put(parts[i].substring(0, nl).trim(), parts[i].substring(nl + 1).strip());
        }
        List<String> out = new java.util.ArrayList<>();
        if (!unmeasured.isEmpty()) {
            out.add("**Not measured in this run:** " + String.join(", ", unmeasured) + " (the bench failed or ran out of time: "
                    + "run.sh's output says which, with the bench's last lines).");
        }
        if (missed.isEmpty()) out.add("No measured row missed its target in this run.");
        for (String id : notBuilt) {
            String p = paragraphs.get(id);
            out.add(p != null ? p : "**" + id + "** is measured by no bench yet; docs/benchmark-notes.md has no paragraph for it yet.");
        }
        for (String id : missed) {
            String p = paragraphs.get(id);
            out.add(p != null ? p : "**" + id + "** missed in this run; docs/benchmark-notes.md has no paragraph for it yet.");
        }
        return String.join("\n\n", out) + "\n";
    }

    private String beforeAfter() {
        StringBuilder s = new StringBuilder();
        s.append("Columns: commits before the product changes made for these benchmarks, measured with the benches of their time: ");
        for (int i = 0; i < before.size(); i++) {
            Properties b = before.get(i);
            s.append(i == 0 ? "" : "; ").append('`').append(b.getProperty("commit", "?")).append("` (").append(b.getProperty("date", "?")).append(')');
        }
        s.append("; \"now\" is this run. The B4 ratio's baseline was a bare create then, the floor now. Since `63cf5d5` B5's floor hosts "
                + "run beside mesh's on the same 2 cores and the first push after the warm-up is measured, so its earlier columns "
                + "are of a lighter bench.\n\n| figure |");
        for (Properties b : before) s.append(" `").append(b.getProperty("commit", "?")).append("` |");
        s.append(" now |\n|---|");
        for (int i = 0; i <= before.size(); i++) s.append("---|");
        s.append('\n');
        row(s, "B1 no-op apply p50 (ms)", "b1.mesh.p50_ms", d("b1.mesh.p50_ms"));
        row(s, "B2 recreate 20 p50 (ms; now: the SIGTERM workload)", "b2.mesh.p50_ms", d("b2.exits.mesh.p50_ms"));
        row(s, "B2 ratio to compose", "b2.ratio.compose", d("b2.exits.ratio.compose"));
        row(s, "B4 p99 ratio", "b4.ratio.p99", d("b4.mesh.p99_ms") / d("b4.raw.p99_ms"));
        row(s, "B4 after a quiet spell, p50 (ms)", "b4q.mesh.p50_ms", d("b4q.mesh.p50_ms"));
        row(s, "B5 100 hosts p99 (ms)", "b5.h100.p99_ms", d("b5.h100.mesh.p99_ms"));
        row(s, "B5 300 hosts p99 (ms)", "b5.h300.p99_ms", d("b5.h300.mesh.p99_ms"));
        row(s, "B5 1000 hosts p99 (ms)", "b5.h1000.p99_ms", d("b5.h1000.mesh.p99_ms"));
        if (!beforeRows.isEmpty()) {
            s.append("\nThe other benches (before: by hand, with the benches of their time):\n\n| figure | before | now |\n|---|---|---|\n");
            for (String[] f : beforeRows) {
                s.append("| ").append(f[0]).append(" | ").append(f[2]).append(" (`").append(f[3]).append("`) | ")
                        .append(v(f[1])).append(" |\n");
            }
        }
        return s.append('\n').toString();
    }

    /**
     * @return the rows of a before-rows file: lines {@code id=what | this run's key | before | commit}, in file order
     * @throws IllegalArgumentException naming the line when one does not have four fields
     */
    static List<String[]> beforeRows(String file) throws java.io.IOException {
        List<String[]> rows = new java.util.ArrayList<>();
        if (file == null || file.isBlank()) return rows;
        for (String line : Files.readAllLines(Path.of(file))) {
            if (line.isBlank() || line.startsWith("#")) continue;
            String[] f = line.substring(line.indexOf('=') + 1).split("\\|");
            if (f.length != 4) throw new IllegalArgumentException(file + ": want 'id=what | key | before | commit', got: " + line);
            for (int i = 0; i < 4; i++) f[i] = f[i].trim();
            rows.add(f);
        }
        return rows;
    }

    private void row(StringBuilder s, String what, String key, double after) {
        s.append("| ").append(what).append(" |");
        for (Properties b : before) s.append(' ').append(Bench.f(d(b, key))).append(" |");
        s.append(' ').append(Bench.f(after)).append(" |\n");
    }

    /** @return the file named by system property {@code property} (default {@code file}), or "" when unreadable */
    private static String read(String property, String file) {
        try {
            return Files.readString(Path.of(System.getProperty(property, file)));
        } catch (Exception e) {
            return "";
        }
    }
}
