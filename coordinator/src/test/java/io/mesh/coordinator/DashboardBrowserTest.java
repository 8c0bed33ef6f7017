package io.mesh.coordinator;

import io.mesh.coordinator.CoordinatorExtension.Answer;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.WindowResult;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static io.mesh.coordinator.OpsFixture.HOST;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The coordinator's page ({@code GET /}) in a real headless Chromium (Debian's {@code chromium}, installed by
 * {@code deploy/dev/chromium.sh}), against a running coordinator and agent with a window really open: the page names
 * the window, the held container and the deferred push, in text and colour, and refreshes by itself. Screenshots
 * (phone and desktop sizes) are kept as test artifacts: {@code coordinator/target/dashboard-phone.png},
 * {@code coordinator/target/dashboard-desktop.png}.
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
}
