package io.mesh.client;

import io.mesh.coordinator.CoordinatorFixture;
import io.mesh.wire.FreezeRecord;
import io.mesh.wire.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code mesh freeze}, {@code mesh thaw} and {@code mesh freezes} (decision 14): the body the client sends, its
 * refusals before anything is sent (exit 2), its output against a real coordinator, and how push status prints a host
 * a freeze defers.
 */
class FreezeCommandsTest {
    @RegisterExtension
    static final CoordinatorFixture fx = new CoordinatorFixture();
    /** An end within a freeze's longest length (366 days), whole seconds. */
    static final String LATER = java.time.Instant.now().plus(java.time.Duration.ofDays(200)).truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString();

    /** Freezes are of modules that were pushed: {@code store}'s desired node exists. */
    @org.junit.jupiter.api.BeforeEach
    void storeWasPushed() throws Exception {
        fx.zk.client().create().creatingParentsIfNeeded().forPath(fx.zk.paths().desired("store"), "{}".getBytes(StandardCharsets.UTF_8));
    }

    private ClientRun mesh(String... args) { return ClientRun.of(fx.api.uri().toString(), args); }

    @Test
    void theBodyIsCheckedBeforeItIsSent() {
        assertThat(FreezeCommands.Freeze.body("store", false, "2h", null, "weekend"))
                .containsExactly(Map.entry("module", "store"), Map.entry("for", "2h"), Map.entry("reason", "weekend"));
        assertThat(FreezeCommands.Freeze.body(null, true, null, LATER, "r"))
                .containsExactly(Map.entry("all", true), Map.entry("until", LATER), Map.entry("reason", "r"));
        assertThatThrownBy(() -> FreezeCommands.Freeze.body("store", true, "2h", null, "r")).hasMessageContaining("MODULE or --all, not both");
        assertThatThrownBy(() -> FreezeCommands.Freeze.body(null, false, "2h", null, "r")).hasMessageContaining("--all");
        assertThatThrownBy(() -> FreezeCommands.Freeze.body("store", false, null, null, "r")).hasMessageContaining("--for DURATION");
        assertThatThrownBy(() -> FreezeCommands.Freeze.body("store", false, "2h", LATER, "r")).hasMessageContaining("not both");
        assertThatThrownBy(() -> FreezeCommands.Freeze.body("store", false, "2 hours", null, "r")).hasMessageContaining("--for:");
        assertThatThrownBy(() -> FreezeCommands.Freeze.body("store", false, null, "monday", "r")).hasMessageContaining("--until:");
        assertThatThrownBy(() -> FreezeCommands.Freeze.body("store", false, "2h", null, " ")).hasMessageContaining("--reason");
        // a recurring freeze (decision 37)
        assertThat(FreezeCommands.Freeze.body("store", false, "14h", null, "weekends", "0 18 * * 5", "Europe/Berlin"))
                .containsExactly(Map.entry("module", "store"), Map.entry("cron", "0 18 * * 5"), Map.entry("timezone", "Europe/Berlin"),
                        Map.entry("for", "14h"), Map.entry("reason", "weekends"));
        assertThat(FreezeCommands.Freeze.body("store", false, "14h", LATER, "r", "0 18 * * 5", null)).containsEntry("until", LATER);
        assertThatThrownBy(() -> FreezeCommands.Freeze.body("store", false, null, null, "r", "0 18 * * 5", null)).hasMessageContaining("--for: missing");
        assertThatThrownBy(() -> FreezeCommands.Freeze.body("store", false, "2h", null, "r", null, "UTC")).hasMessageContaining("--timezone: only a recurring");
    }

    /** {@code mesh freeze --cron} and what {@code mesh freezes} and {@code mesh status} say of it (decision 37). */
    @Test
    void aRecurringFreezeIsShownWithItsRule() throws Exception {
        // every minute for 50 s
        ClientRun f = mesh("freeze", "store", "--cron", "* * * * *", "--for", "50s", "--reason", "minutely");
        assertThat(f.code()).as(f.err()).isEqualTo(ExitCodes.OK);
        assertThat(f.out()).contains("store frozen every '* * * * *' UTC for 50s").contains("minutely").contains("mesh thaw store ends it");
        ClientRun list = mesh("freezes");
        assertThat(list.out()).contains("every '* * * * *' for 50s");
        ClientRun never = mesh("freeze", "store", "--cron", "* * * * *", "--for", "60s", "--reason", "r");
        assertThat(never.code()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(never.err()).contains("for: 60s is as long as the shortest gap");
        // Fridays at 18:00 in Berlin for 14 h, not in force on a Monday
        ClientRun fridays = mesh("freeze", "--all", "--cron", "0 18 * * 5", "--timezone", "Europe/Berlin", "--for", "14h", "--reason", "weekends");
        assertThat(fridays.code()).as(fridays.err()).isEqualTo(ExitCodes.OK);
        assertThat(mesh("freezes").out()).contains("every '0 18 * * 5' Europe/Berlin for 14h");
    }

    /**
     * SPEC.md "Freezes": a freeze stops changes that begin after it. An apply holding the module lock (a real Curator
     * lock, as the agent takes it) began before, and still lands: {@code mesh freeze} says so; a window's lock is no
     * apply, and with the lock released nothing is said.
     */
    @Test
    void freezeSaysAnApplyInProgressStillLands() throws Exception {
        fx.zk.client().create().creatingParentsIfNeeded().forPath(fx.zk.paths().desired("web"), "{}".getBytes(StandardCharsets.UTF_8));
        io.mesh.section.ModuleLock apply = new io.mesh.section.ModuleLock(fx.zk.client(), fx.zk.paths(), "store", "host-a",
                io.mesh.wire.ProcessRef.current("mesh-agent run (test)"), io.mesh.wire.LockHolder.APPLY);
        io.mesh.section.ModuleLock window = new io.mesh.section.ModuleLock(fx.zk.client(), fx.zk.paths(), "web", "host-a",
                io.mesh.wire.ProcessRef.current("mesh-agent run (test)"), io.mesh.wire.LockHolder.windowPurpose("sweep"));
        assertThat(apply.acquire(java.time.Duration.ofSeconds(10))).isTrue();
        assertThat(window.acquire(java.time.Duration.ofSeconds(10))).isTrue();
        try {
            ClientRun f = mesh("freeze", "store", "--for", "2h", "--reason", "release weekend");
            assertThat(f.code()).as(f.err()).isEqualTo(ExitCodes.OK);
            assertThat(f.out()).contains("an apply of store is in progress on host-a (since ", "changes it has already begun will still land");
            ClientRun web = mesh("freeze", "web", "--for", "2h", "--reason", "r");
            assertThat(web.out()).as("a window holds web's lock, not an apply").doesNotContain("in progress");
            ClientRun all = mesh("freeze", "--all", "--for", "2h", "--reason", "r");
            assertThat(all.out()).contains("an apply of store is in progress on host-a").doesNotContain("apply of web");
        } finally {
            apply.release();
            window.release();
        }
        ClientRun after = mesh("freeze", "store", "--for", "1h", "--reason", "again");
        assertThat(after.code()).as(after.err()).isEqualTo(ExitCodes.OK);
        assertThat(after.out()).doesNotContain("in progress");
    }

    @Test
    void freezeFreezesAndThawAgainstACoordinator() throws Exception {
        ClientRun bad = mesh("freeze", "store", "--reason", "r");
        assertThat(bad.code()).as(bad.err()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(bad.err()).contains("--for DURATION");
        assertThat(fx.zk.client().checkExists().forPath(fx.zk.paths().freezes())).as("nothing sent").isNull();

        ClientRun f = mesh("freeze", "store", "--for", "2h", "--reason", "release weekend");
        assertThat(f.code()).as(f.err()).isEqualTo(ExitCodes.OK);
        assertThat(f.out()).contains("store frozen until").contains("release weekend").contains("mesh thaw store");
        FreezeRecord r = Json.read(fx.zk.client().getData().forPath(fx.zk.paths().freeze("store")), FreezeRecord.class);
        assertThat(r.reason()).isEqualTo("release weekend");

        ClientRun all = mesh("freeze", "--all", "--until", LATER, "--reason", "year end");
        assertThat(all.code()).as(all.err()).isEqualTo(ExitCodes.OK);
        ClientRun list = mesh("freezes");
        assertThat(list.code()).isEqualTo(ExitCodes.OK);
        assertThat(list.out()).contains("(all)").contains(LATER).contains("store").contains("release weekend");

        ClientRun status = mesh("status");
        assertThat(status.code()).as(status.err()).isEqualTo(ExitCodes.OK);
        assertThat(status.out()).contains("frozen: every module until " + LATER).contains("frozen: store until")
                .contains("mesh thaw store");

        ClientRun refused = mesh("freeze", "store", "--until", "2001-01-01T00:00:00Z", "--reason", "r");
        assertThat(refused.code()).as("the coordinator's 400").isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(refused.err()).contains("has passed");

        assertThat(mesh("thaw", "store").code()).isEqualTo(ExitCodes.OK);
        assertThat(mesh("thaw", "store").code()).as("no freeze left: 404").isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(mesh("thaw", "--all").code()).isEqualTo(ExitCodes.OK);
        assertThat(mesh("freezes").out()).contains("nothing is frozen");
    }

    @Test
    void aHostAFreezeDefersReadsDeferredFrozenWithTheReasonAndEnd() throws Exception {
        var target = Json.MAPPER.readTree("{\"host\":\"h\",\"module\":\"m\",\"state\":\"deferred\",\"revision\":\"r2\","
                + "\"freeze\":{\"by\":\"token\",\"reason\":\"release weekend\",\"since\":\"2026-12-01T10:00:00Z\",\"until\":\"2026-12-01T12:00:00Z\"}}");
        assertThat(ClientText.describe(target)).isEqualTo("deferred (frozen: release weekend, until 2026-12-01T12:00:00Z)");
    }
}
