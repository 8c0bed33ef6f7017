package io.mesh.coordinator;

import io.mesh.coordinator.CoordinatorExtension.Answer;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.AuditReport;
import io.mesh.wire.AuditReport.Item;
import io.mesh.wire.AuditReport.Violation;
import io.mesh.wire.AuditViolationKind;
import io.mesh.wire.WindowResult;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import static io.mesh.coordinator.OpsFixture.HOST;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The coordinator's page ({@code GET /}) in a real headless Chromium (Debian's {@code chromium}, installed by
 * {@code deploy/dev/chromium.sh}), against a running coordinator and agent with a window really open: the page names
 * the window, the held container and the deferred push, in text and colour, and refreshes by itself. Screenshots
 * (phone and desktop sizes) are kept as test artifacts: {@code coordinator/target/dashboard-phone.png},
 * {@code coordinator/target/dashboard-desktop.png}; and of its "Last 24 hours" fed by a fixed {@link AuditSource}:
 * {@code coordinator/target/dashboard-timeline-desktop.png}, {@code coordinator/target/dashboard-timeline-phone.png}.
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
@Tag("slow") // a headless Chromium: the full run, not --fast
class DashboardBrowserTest {
    @RegisterExtension
    static final OpsFixture fx = new OpsFixture();

    /** Runs chromium headless with a fresh profile; returns its stdout. Fails (never skips) when it is missing or fails. */
    static String chromium(List<String> extra, String url) throws Exception {
        Path profile = Files.createTempDirectory("mesh-chromium");
        List<String> cmd = new ArrayList<>(List.of("chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--hide-scrollbars", "--user-data-dir=" + profile));
        cmd.addAll(extra);
        cmd.add(url);
        Path log = Files.createTempFile("mesh-chromium", ".log");
        Process p;
        try {
            p = new ProcessBuilder(cmd).redirectError(log.toFile()).start();
        } catch (IOException e) {
            throw new AssertionError("chromium is not installed: run deploy/dev/chromium.sh (deploy/dev/test.sh does)", e);
        }
        byte[] out;
        try {
            out = p.getInputStream().readAllBytes();
            if (!p.waitFor(60, TimeUnit.SECONDS)) throw new AssertionError("chromium did not finish within 60s");
        } finally {
            p.destroyForcibly();
            try (Stream<Path> s = Files.walk(profile)) {
                s.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
        }
        assertThat(p.exitValue()).as("chromium exit; its log:\n%s", Files.readString(log)).isZero();
        return new String(out, StandardCharsets.UTF_8);
    }

    @Test
    void thePageShowsTheOpenWindowTheHeldContainerAndThePendingPushAndRefreshesItself() throws Exception {
        String container = fx.module + "-app";
        Answer first = fx.api.push(fx.manifest("r1", "[" + HOST + "]"));
        assertThat(first.status()).isEqualTo(202);
        fx.awaitReport(ApplyOutcome.APPLIED, first.json().get("revision").asText());
        Future<WindowResult> window = fx.daemon().runWindow(fx.module, "sweep");
        fx.awaitHeld();
        Answer second = fx.api.push(fx.manifest("r2", "[" + HOST + "]"));
        assertThat(second.status()).isEqualTo(202);
        String r2 = second.json().get("revision").asText();
        fx.awaitReport(ApplyOutcome.DEFERRED, r2);

        String url = fx.api.uri() + "/";
        // The virtual time budget lets the page's script run its refresh loop (every 3 s) before the DOM is dumped.
        String dom = chromium(List.of("--virtual-time-budget=10000", "--dump-dom"), url);
        assertThat(dom).contains("<main id=\"fleet\"", "WINDOW OPEN", "HELD", container, "sweep", "DEFERRED", "push-0000000001",
                "waiting on it: push-0000000001 (revision " + r2 + "), deferred", "1 open window", "1 held container", "1 pending push", "agent online");
        // The older push is not applied either: the deferred report of the newer one stands for it (docs/design.md, "Push status").
        assertThat(dom).contains("class=\"st-deferred has-window has-held\"");
        int refreshes = Integer.parseInt(dom.replaceAll("(?s).*data-refreshes=\"(\\d+)\".*", "$1"));
        assertThat(refreshes).as("refreshes done by the page's script").isGreaterThanOrEqualTo(1);

        Path target = Path.of("target").toAbsolutePath();
        Files.createDirectories(target);
        for (String[] shot : List.of(new String[]{"dashboard-phone.png", "412,915"}, new String[]{"dashboard-desktop.png", "1280,800"})) {
            Path png = target.resolve(shot[0]);
            Files.deleteIfExists(png);
            chromium(List.of("--screenshot=" + png, "--window-size=" + shot[1]), url);
            byte[] bytes = Files.readAllBytes(png);
            assertThat(bytes.length).as(shot[0]).isGreaterThan(5_000);
            assertThat(new String(bytes, 1, 3, StandardCharsets.US_ASCII)).isEqualTo("PNG");
        }

        fx.release();
        assertThat(window.get(60, TimeUnit.SECONDS).succeeded()).isTrue();
        fx.awaitReport(ApplyOutcome.APPLIED, r2);
        String after = chromium(List.of("--dump-dom"), url);
        assertThat(after).contains("0 open windows", "0 held containers", "APPLIED", r2).doesNotContain("WINDOW OPEN");
    }

    /**
     * Two hosts' audit over the span the page asks for: on {@value OpsFixture#HOST} a window of the fixture's module
     * with a touched-while-held violation (at a whole second, 90 minutes before the span's end) and an open operator
     * hold; on {@code host-b} a freeze and an apply of {@code billing}.
     */
    static List<AuditReport> fixedAudit(String module, Instant from, Instant to) {
        Instant end = to.truncatedTo(ChronoUnit.SECONDS);
        Instant violation = end.minus(Duration.ofMinutes(90));
        Item window = new Item("window", "w-0001", module, "sweep", null, null, end.minus(Duration.ofHours(2)), end.minus(Duration.ofHours(1)),
                List.of(module + "-app"), 1, 1, "violations");
        Item hold = new Item("hold", "hold:" + module + "-app:ann", module, null, "ann", "disk <swap>", end.minus(Duration.ofMinutes(30)), null,
                List.of(module + "-app"), 1, 0, "open");
        Violation touched = new Violation(AuditViolationKind.TOUCHED_WHILE_HELD, module, module + "-app", violation, "w-0001",
                module + "-app was started by no call of window w-0001 while it held it", null);
        Item freeze = new Item("freeze", "freeze:billing:" + end.minus(Duration.ofHours(5)), "billing", null, "ops", "quarter close",
                end.minus(Duration.ofHours(5)), end.minus(Duration.ofHours(3)), List.of(), 0, 0, "ok");
        Item apply = new Item("apply", "apply:billing:push-0000000007", "billing", null, "push-0000000007", null,
                end.minus(Duration.ofHours(2)), end.minus(Duration.ofHours(2)).plusSeconds(40), List.of("billing-api"), 1, 1, "ok");
        return List.of(new AuditReport(HOST, from, to, from.minus(Duration.ofDays(3)), List.of(window, hold), List.of(touched), null),
                new AuditReport("host-b", from, to, from.minus(Duration.ofDays(3)), List.of(freeze, apply), List.of(), null));
    }

    @Test
    void theLast24HoursShowsEachHostsAuditOnOneAxisWithLinksToTheViolations() throws Exception {
        AtomicReference<Instant> askedTo = new AtomicReference<>();
        fx.api.api().auditSource((from, to) -> {
            askedTo.set(to);
            return fixedAudit(fx.module, from, to);
        });
        try {
            String url = fx.api.uri() + "/";
            // A few seconds of virtual time: the page's script refreshes <main> once, and the section comes back with it.
            String dom = chromium(List.of("--virtual-time-budget=4000", "--dump-dom"), url);
            assertThat(dom).contains("<section id=\"audit\"><h2>Last 24 hours</h2>", "<div class=\"timeline\"",
                    "data-host=\"" + HOST + "\" data-module=\"" + fx.module + "\"", "data-host=\"host-b\" data-module=\"billing\"",
                    "tl-bar tl-window tl-bad", "tl-bar tl-hold tl-open", "tl-bar tl-freeze", "tl-bar tl-apply",
                    ">window sweep</span>", ">hold by ann</span>", ">apply push-0000000007</span>", "reason: disk &lt;swap&gt;");
            assertThat(dom).doesNotContain("audit unavailable", "The audit failed");
            int refreshes = Integer.parseInt(dom.replaceAll("(?s).*data-refreshes=\"(\\d+)\".*", "$1"));
            assertThat(refreshes).as("refreshes done by the page's script").isGreaterThanOrEqualTo(1);

            Instant at = askedTo.get().truncatedTo(ChronoUnit.SECONDS).minus(Duration.ofMinutes(90));
            String href = "/v1/audit?host=" + HOST + "&amp;module=" + fx.module + "&amp;since=" + at.minus(Duration.ofMinutes(5))
                    + "&amp;until=" + at.plus(Duration.ofMinutes(5));
            assertThat(dom).contains("<a class=\"tl-mark tl-v-touched-while-held\" href=\"" + href + "\"");
            // 90 minutes before the end of a 24 h span.
            assertThat(dom).containsPattern("tl-v-touched-while-held\" href=\"[^\"]+\" style=\"left:93\\.7[45][0-9]%\"");

            Path target = Path.of("target").toAbsolutePath();
            Files.createDirectories(target);
            for (String[] shot : List.of(new String[]{"dashboard-timeline-desktop.png", "1280,1100"}, new String[]{"dashboard-timeline-phone.png", "412,1600"})) {
                Path png = target.resolve(shot[0]);
                Files.deleteIfExists(png);
                chromium(List.of("--screenshot=" + png, "--window-size=" + shot[1]), url);
                byte[] bytes = Files.readAllBytes(png);
                assertThat(bytes.length).as(shot[0]).isGreaterThan(5_000);
                assertThat(new String(bytes, 1, 3, StandardCharsets.US_ASCII)).isEqualTo("PNG");
            }
        } finally {
            fx.api.api().auditSource(null);
        }
    }
}
