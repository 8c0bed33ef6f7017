package io.mesh.wire;

import io.mesh.manifest.WireName;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The JSON of reports, window results and window requests, byte for byte as docs/zkcli.md shows it. */
class WireJsonTest {
    /** docs/zkcli.md, "Read a report". */
    static final String REPORT = "{\"host\":\"host-a\",\"module\":\"opsdemo\",\"revision\":\"r1\",\"push\":\"push-0000000000\","
            + "\"outcome\":\"applied\",\"startedAt\":\"2026-11-30T10:22:45.325Z\",\"finishedAt\":\"2026-11-30T10:22:45.369Z\","
            + "\"window\":null,\"containers\":[{\"name\":\"web\",\"container\":\"opsdemo-web\",\"action\":\"unchanged\",\"reasons\":[],"
            + "\"id\":\"036119cd2413ce7c47b9329dc00ed886d67fdeff742d86371d1a3857899c766b\"}],"
            + "\"lastWindow\":{\"schedule\":\"sweep\",\"window\":\"w-20261130T102230Z-de84\",\"startedAt\":\"2026-11-30T10:22:30.085Z\","
            + "\"finishedAt\":\"2026-11-30T10:22:45.306Z\",\"outcome\":\"failed\",\"exitCode\":null,\"held\":[\"opsdemo-web\"],"
            + "\"logTail\":[],\"error\":\"java.net.SocketException: No such file or directory\"},"
            + "\"lastApplied\":{\"push\":\"push-0000000000\",\"revision\":\"r1\",\"at\":\"2026-11-30T10:22:45.369Z\"},"
            + "\"appliedPushes\":[\"push-0000000000\"]}";

    /** SPEC.md, "Apply": a deferred report, with its window and a held container, and an error. */
    static final String DEFERRED = "{\"host\":\"host-a\",\"module\":\"store\",\"revision\":\"r2\",\"push\":\"push-0000000002\","
            + "\"outcome\":\"deferred\",\"startedAt\":\"2026-11-30T03:30:01Z\",\"finishedAt\":\"2026-11-30T03:30:03Z\","
            + "\"window\":{\"schedule\":\"garbage-collect\",\"window\":\"w-1\",\"since\":\"2026-11-30T03:30:00Z\",\"held\":[\"store-registry\"]},"
            + "\"containers\":[{\"name\":\"registry\",\"container\":\"store-registry\",\"action\":\"held\","
            + "\"reasons\":[\"held by window garbage-collect since 2026-11-30T03:30:00Z\"],\"id\":\"3f2a\"}],"
            + "\"lastApplied\":{\"push\":\"push-0000000001\",\"revision\":\"r1\",\"at\":\"2026-11-30T03:00:00Z\"},"
            + "\"appliedPushes\":[\"push-0000000001\"]}";

    /** A report with no apply yet, only the last window (written by a window before any apply). */
    static final String NO_APPLY = "{\"host\":\"host-a\",\"module\":\"store\",\"revision\":null,\"push\":null,\"outcome\":null,"
            + "\"startedAt\":null,\"finishedAt\":null,\"window\":null,\"containers\":[],"
            + "\"lastWindow\":{\"schedule\":\"gc\",\"window\":\"w-1\",\"startedAt\":\"2026-11-30T03:30:00Z\",\"finishedAt\":\"2026-11-30T03:31:00Z\","
            + "\"outcome\":\"succeeded\",\"exitCode\":0,\"held\":[],\"logTail\":[\"swept\"],\"error\":null}}";

    /** docs/zkcli.md, "Window requests". */
    static final String REQUEST = "{\"module\":\"opsdemo\",\"schedule\":\"sweep\",\"requestedAt\":\"2026-11-30T10:21:46.056Z\","
            + "\"by\":{\"pid\":18951,\"process\":\"mesh window run by root from 127.0.0.1 via mesh-coordinator\"},\"state\":\"running\","
            + "\"runner\":{\"pid\":29182,\"process\":\"mesh-agent run\"},\"startedAt\":\"2026-11-30T10:21:46.072Z\"}";

    /** docs/zkcli.md, "Other nodes" (freezes): a frozen module's report, deferred with its freeze; nothing was done. */
    static final String FROZEN = "{\"host\":\"host-a\",\"module\":\"store\",\"revision\":\"r3\",\"push\":\"push-0000000003\","
            + "\"outcome\":\"deferred\",\"startedAt\":\"2026-11-30T03:30:01Z\",\"finishedAt\":\"2026-11-30T03:30:01.010Z\","
            + "\"window\":null,\"containers\":[],"
            + "\"lastApplied\":{\"push\":\"push-0000000002\",\"revision\":\"r2\",\"at\":\"2026-11-30T03:00:00Z\"},"
            + "\"freeze\":{\"by\":\"token\",\"reason\":\"release weekend\",\"since\":\"2026-11-30T02:00:00Z\",\"until\":\"2026-11-30T06:00:00Z\"}}";

    /** docs/zkcli.md, "Other nodes" (freezes): the data of /mesh/freezes/store. */
    static final String FREEZE = "{\"by\":\"token\",\"reason\":\"release weekend\",\"since\":\"2026-11-30T02:00:00Z\",\"until\":\"2026-11-30T06:00:00Z\"}";

    @Test
    void aFrozenReportAndAFreezeNodeReadAndWriteTheSameJson() {
        assertThat(roundTrip(FROZEN, ApplyReport.class)).isEqualTo(FROZEN);
        assertThat(roundTrip(FREEZE, FreezeRecord.class)).isEqualTo(FREEZE);
        ApplyReport r = Json.read(FROZEN.getBytes(StandardCharsets.UTF_8), ApplyReport.class);
        // A frozen host reads deferred in push status, not waiting (that is a rollout's wave).
        assertThat(PushState.of(r)).isEqualTo(PushState.DEFERRED);
        assertThat(r.freeze().activeAt(Instant.parse("2026-11-30T05:59:59Z"))).isTrue();
        assertThat(r.freeze().activeAt(Instant.parse("2026-11-30T06:00:00Z"))).isFalse();
        // The carrying methods keep the freeze.
        assertThat(r.withLastWindow(null).withLastApplied(null, List.of()).freeze()).isEqualTo(r.freeze());
        assertThat(Json.text(r.withFreeze(null))).doesNotContain("freeze");
    }

    /**
     * Decision 24: a report carries the pushes its host applied, newest first, at most {@link ApplyReport#APPLIED_KEPT};
     * a failed or deferred apply adds none, a rollout's kept revision adds none it already has.
     */
    @Test
    void aReportCarriesThePushesItsHostAppliedNewestFirstAndBounded() {
        Instant t = Instant.parse("2026-11-30T03:30:00Z");
        ApplyReport r = null;
        for (int i = 1; i <= ApplyReport.APPLIED_KEPT + 3; i++) {
            ApplyReport next = ApplyReport.applied("host-a", "store", "r" + i, ZkPaths.pushName(i), t, null, List.of());
            r = r == null ? next.withLastApplied(null, List.of()) : next.withLastApplied(r.lastApplied(), r.appliedPushes());
        }
        assertThat(r.appliedPushes()).hasSize(ApplyReport.APPLIED_KEPT)
                .startsWith(ZkPaths.pushName(ApplyReport.APPLIED_KEPT + 3)).endsWith(ZkPaths.pushName(4));
        assertThat(r.applied(ZkPaths.pushName(4))).isTrue();
        assertThat(r.applied(ZkPaths.pushName(3))).isFalse();

        ApplyReport failed = ApplyReport.failed("host-a", "store", "bad", ZkPaths.pushName(40), t, "boom")
                .withLastApplied(r.lastApplied(), r.appliedPushes());
        assertThat(failed.appliedPushes()).isEqualTo(r.appliedPushes());
        assertThat(failed.applied(ZkPaths.pushName(40))).isFalse();
        ApplyReport deferred = ApplyReport.deferred("host-a", "store", "r41", ZkPaths.pushName(41), t, null, List.of())
                .withLastApplied(failed.lastApplied(), failed.appliedPushes());
        assertThat(deferred.appliedPushes()).isEqualTo(r.appliedPushes());
        // A rollout that went back to the previous revision on a host that had applied the push (Applier: withRollout,
        // then withKept): the push it left is no longer among those applied there (decision 13).
        ApplyReport canary = ApplyReport.applied("host-a", "store", "r42", ZkPaths.pushName(42), t, null, List.of())
                .withLastApplied(deferred.lastApplied(), deferred.appliedPushes());
        assertThat(canary.applied(ZkPaths.pushName(42))).isTrue();
        ApplyReport reverted = ApplyReport.applied("host-a", "store", "r42", ZkPaths.pushName(42), t, null, List.of())
                .withRollout(ApplyOutcome.FAILED, "reverted").withKept(new DesiredRecord("store", r.revision(), r.push(), null, null))
                .withLastApplied(canary.lastApplied(), canary.appliedPushes());
        assertThat(reverted.lastApplied().push()).isEqualTo(r.push());
        assertThat(reverted.applied(ZkPaths.pushName(42))).isFalse();
        assertThat(reverted.appliedPushes()).isEqualTo(canary.appliedPushes().subList(1, canary.appliedPushes().size()));
        // Newest first by push sequence, whatever order they came in; nulls (a node edited by hand) dropped.
        ApplyReport kept = ApplyReport.deferred("host-a", "store", "r50", ZkPaths.pushName(50), t, null, List.of())
                .withRollout(ApplyOutcome.DEFERRED, "waiting").withKept(new DesiredRecord("store", "r1", ZkPaths.pushName(1), null, null))
                .withLastApplied(null, java.util.Arrays.asList(ZkPaths.pushName(7), null, ZkPaths.pushName(9)));
        assertThat(kept.appliedPushes()).containsExactly(ZkPaths.pushName(9), ZkPaths.pushName(7), ZkPaths.pushName(1));
        // Entries that are not push names, or newer than what the report names, are not carried (a node edited by
        // hand, or forged by its host, cannot push the real ones out).
        ApplyReport next = ApplyReport.applied("host-a", "store", "r51", ZkPaths.pushName(51), t, null, List.of())
                .withLastApplied(kept.lastApplied(), List.of(ZkPaths.pushName(5999), "foo", "push-", "push--1", ZkPaths.pushName(9)));
        assertThat(next.appliedPushes()).containsExactly(ZkPaths.pushName(51), ZkPaths.pushName(9));
        // A report of a version before appliedPushes: its lastApplied is taken in.
        ApplyReport old = ApplyReport.deferred("host-a", "store", "r2", ZkPaths.pushName(2), t, null, List.of())
                .withLastApplied(new ApplyReport.Applied(ZkPaths.pushName(1), "r1", t), List.of());
        assertThat(old.appliedPushes()).containsExactly(ZkPaths.pushName(1));
    }

    /**
     * Failure model row 83: a report carries the pushes whose apply failed on its host and that it has not applied
     * since, with their errors (cut), newest first, at most {@link ApplyReport#FAILED_KEPT}; forged or newer entries are
     * not carried, and the list reads back as written.
     */
    @Test
    void aReportCarriesThePushesThatFailedOnItsHostUntilTheyRun() {
        Instant t = Instant.parse("2026-11-30T03:30:00Z");
        ApplyReport r = ApplyReport.failed("host-a", "store", "r1", ZkPaths.pushName(1), t, "x".repeat(500))
                .withLastApplied(null, List.of()).withFailedPushes(List.of());
        assertThat(r.failed(ZkPaths.pushName(1)).error()).hasSize(ApplyReport.FAILED_ERROR_CHARS).endsWith("...");
        // Replaced by a push that applied: still remembered as failed.
        ApplyReport next = ApplyReport.applied("host-a", "store", "r2", ZkPaths.pushName(2), t, null, List.of())
                .withLastApplied(r.lastApplied(), r.appliedPushes()).withFailedPushes(r.failedPushes());
        assertThat(next.failed(ZkPaths.pushName(1))).isNotNull();
        assertThat(next.failed(ZkPaths.pushName(2))).isNull();
        assertThat(Json.read(Json.bytes(next), ApplyReport.class)).isEqualTo(next);
        // Failed, then applied by a retry: it ran, so no longer failed.
        ApplyReport retried = ApplyReport.failed("host-a", "store", "r3", ZkPaths.pushName(3), t, "boom")
                .withLastApplied(next.lastApplied(), next.appliedPushes()).withFailedPushes(next.failedPushes());
        assertThat(retried.failedPushes()).extracting(ApplyReport.Failed::push).containsExactly(ZkPaths.pushName(3), ZkPaths.pushName(1));
        ApplyReport ran = ApplyReport.applied("host-a", "store", "r3", ZkPaths.pushName(3), t, null, List.of())
                .withLastApplied(retried.lastApplied(), retried.appliedPushes()).withFailedPushes(retried.failedPushes());
        assertThat(ran.failed(ZkPaths.pushName(3))).isNull();
        assertThat(ran.failedPushes()).extracting(ApplyReport.Failed::push).containsExactly(ZkPaths.pushName(1));
        // Bounded, newest first; entries that are not push names or are newer than the report are dropped.
        ApplyReport many = ran;
        for (int i = 10; i < 10 + ApplyReport.FAILED_KEPT + 2; i++) {
            many = ApplyReport.failed("host-a", "store", "r" + i, ZkPaths.pushName(i), t, "e" + i)
                    .withLastApplied(many.lastApplied(), many.appliedPushes()).withFailedPushes(many.failedPushes());
        }
        assertThat(many.failedPushes()).hasSize(ApplyReport.FAILED_KEPT).first()
                .isEqualTo(new ApplyReport.Failed(ZkPaths.pushName(11 + ApplyReport.FAILED_KEPT), "e" + (11 + ApplyReport.FAILED_KEPT)));
        ApplyReport forged = ApplyReport.deferred("host-a", "store", "r5", ZkPaths.pushName(5), t, null, List.of())
                .withFailedPushes(java.util.Arrays.asList(new ApplyReport.Failed(ZkPaths.pushName(999), "x"), new ApplyReport.Failed("foo", "x"),
                        null, new ApplyReport.Failed(ZkPaths.pushName(4), "e4")));
        assertThat(forged.failedPushes()).containsExactly(new ApplyReport.Failed(ZkPaths.pushName(4), "e4"));
        // Not written when empty: the documented JSON stays as it was.
        assertThat(Json.text(ran.withFailedPushes(List.of()).withFailedPushes(null))).doesNotContain("failedPushes");
    }

    static <T> String roundTrip(String json, Class<T> type) {
        return Json.text(Json.read(json.getBytes(StandardCharsets.UTF_8), type));
    }

    @Test
    void reportsReadAndWriteTheSameJson() {
        assertThat(roundTrip(REPORT, ApplyReport.class)).isEqualTo(REPORT);
        assertThat(roundTrip(DEFERRED, ApplyReport.class)).isEqualTo(DEFERRED);
        assertThat(roundTrip(NO_APPLY, ApplyReport.class)).isEqualTo(NO_APPLY);
    }

    @Test
    void windowRequestsReadAndWriteTheSameJson() {
        assertThat(roundTrip(REQUEST, WindowRequest.class)).isEqualTo(REQUEST);
    }

    @Test
    void everyWindowOutcomeAndRequestStateIsSpecs() {
        for (String o : new String[]{"succeeded", "step-failed", "timed-out", "failed", "skipped", "recovered"}) {
            String w = "{\"schedule\":\"gc\",\"window\":\"w-1\",\"startedAt\":null,\"finishedAt\":null,\"outcome\":\"" + o
                    + "\",\"exitCode\":null,\"held\":[],\"logTail\":[],\"error\":null}";
            assertThat(roundTrip(w, WindowResult.class)).isEqualTo(w);
        }
        for (String s : new String[]{"requested", "running", "done"}) {
            String r = "{\"module\":\"m\",\"schedule\":\"gc\",\"state\":\"" + s + "\"}";
            assertThat(roundTrip(r, WindowRequest.class)).isEqualTo(r);
        }
        for (String a : new String[]{"unchanged", "created", "recreated", "removed", "held", "failed"}) {
            String c = "{\"name\":\"web\",\"container\":\"m-web\",\"action\":\"" + a + "\",\"reasons\":[],\"id\":null}";
            assertThat(roundTrip(c, ApplyReport.ContainerResult.class)).isEqualTo(c);
        }
    }

    @Test
    void anOutcomeThisVersionDoesNotKnowIsReadAsUnknownNotAsAnError() {
        ApplyReport r = Json.read(REPORT.replace("\"outcome\":\"applied\"", "\"outcome\":\"reverted\"").getBytes(StandardCharsets.UTF_8),
                ApplyReport.class);
        assertThat(r.outcome()).isEqualTo(ApplyOutcome.UNKNOWN);
        assertThat(PushState.of(r)).isEqualTo(PushState.UNKNOWN);
        assertThat(Json.read(NO_APPLY.getBytes(StandardCharsets.UTF_8), ApplyReport.class).outcome()).isNull();
        ApplyReport.ContainerResult c = Json.read("{\"name\":\"web\",\"action\":\"migrated\"}".getBytes(StandardCharsets.UTF_8),
                ApplyReport.ContainerResult.class);
        assertThat(c.action()).isEqualTo(ContainerAction.UNKNOWN);
        WindowResult w = Json.read("{\"schedule\":\"gc\",\"outcome\":\"postponed\"}".getBytes(StandardCharsets.UTF_8), WindowResult.class);
        assertThat(w.outcome()).isEqualTo(WindowOutcome.UNKNOWN);
        assertThat(w.succeeded()).isFalse();
        WindowRequest q = Json.read("{\"module\":\"m\",\"state\":\"paused\"}".getBytes(StandardCharsets.UTF_8), WindowRequest.class);
        assertThat(q.state()).isEqualTo(WindowRequestState.UNKNOWN);
    }

    @Test
    void pushStatesAreSpecs() {
        for (PushState s : PushState.values()) {
            assertThat(Json.text(s)).isEqualTo("\"" + s.wire() + "\"");
            assertThat(WireName.of(PushState.class, s.wire())).isEqualTo(s);
        }
        assertThat(WireName.of(PushState.class, "paused")).isEqualTo(PushState.UNKNOWN); // as Jackson reads it
        assertThat(WireName.of(WindowOutcome.class, "")).isEqualTo(WindowOutcome.UNKNOWN);
        assertThat(WireName.of(PushState.class, null)).isNull();
        assertThat(PushState.values()).extracting(PushState::wire).containsExactly("pending", "applied", "deferred", "waiting", "failed", "drained", "superseded", "cancelled", "expired", "unknown");
        assertThat(Json.read("\"superseded\"".getBytes(), PushState.class)).isEqualTo(PushState.SUPERSEDED);
        assertThat(PushState.of(null)).isEqualTo(PushState.PENDING);
        ApplyReport deferred = Json.read(REPORT.replace("\"outcome\":\"applied\"", "\"outcome\":\"deferred\"").getBytes(StandardCharsets.UTF_8),
                ApplyReport.class);
        assertThat(PushState.of(deferred)).isEqualTo(PushState.DEFERRED);
        // SPEC keeps a report's outcome to applied | deferred | failed: a host its rollout keeps waiting reads deferred,
        // with rollout saying why, and push status calls it waiting
        ApplyReport kept = deferred.withRollout(ApplyOutcome.DEFERRED, "waiting for the canaries [h1]");
        assertThat(Json.text(kept)).contains("\"outcome\":\"deferred\"", "\"rollout\":\"waiting for the canaries [h1]\"");
        assertThat(PushState.of(kept)).isEqualTo(PushState.WAITING);
    }

    /** Log lines and metrics labels print the enums: {@code outcome=applied}, as operators grep them. */
    @Test
    void enumsPrintTheirWireNames() {
        for (Enum<?>[] values : new Enum<?>[][]{ApplyOutcome.values(), ContainerAction.values(), WindowOutcome.values(),
                WindowRequestState.values(), PushState.values()}) {
            for (Enum<?> e : values) assertThat(e.toString()).isEqualTo(Json.text(e).replace("\"", ""));
        }
        assertThat("outcome=" + ApplyOutcome.APPLIED).isEqualTo("outcome=applied");
        assertThat("outcome=" + WindowOutcome.STEP_FAILED).isEqualTo("outcome=step-failed");
    }

    /** Reports built by the factories have the same JSON as the ones read above (finishedAt aside: they read the clock). */
    @Test
    void factoriesBuildTheSameJson() {
        Instant t = Instant.parse("2026-11-30T03:30:00Z");
        ApplyReport.WindowRef window = new ApplyReport.WindowRef("garbage-collect", "w-1", t, List.of("store-registry"));
        ApplyReport deferred = ApplyReport.deferred("host-a", "store", "r2", "push-0000000002", Instant.parse("2026-11-30T03:30:01Z"),
                        window, List.of(ApplyReport.ContainerResult.held("registry", "store-registry", "held by window garbage-collect since " + t, "3f2a")))
                .withLastApplied(new ApplyReport.Applied("push-0000000001", "r1", Instant.parse("2026-11-30T03:00:00Z")), List.of());
        assertThat(withoutFinishedAt(Json.text(deferred))).isEqualTo(withoutFinishedAt(DEFERRED));

        WindowResult w = Json.read(NO_APPLY.getBytes(StandardCharsets.UTF_8), ApplyReport.class).lastWindow();
        assertThat(Json.text(ApplyReport.noApply("host-a", "store", null, null).withLastWindow(w))).isEqualTo(NO_APPLY);

        assertThat(withoutFinishedAt(Json.text(ApplyReport.failed("host-a", "store", null, null, t, "boom")))).isEqualTo(
                "{\"host\":\"host-a\",\"module\":\"store\",\"revision\":null,\"push\":null,\"outcome\":\"failed\","
                        + "\"startedAt\":\"2026-11-30T03:30:00Z\",\"finishedAt\":\"-\",\"window\":null,\"containers\":[],\"error\":\"boom\"}");
        assertThat(withoutFinishedAt(Json.text(WindowResult.failed("gc", "w-1", t, List.of(), "no lock")))).isEqualTo(
                "{\"schedule\":\"gc\",\"window\":\"w-1\",\"startedAt\":\"2026-11-30T03:30:00Z\",\"finishedAt\":\"-\","
                        + "\"outcome\":\"failed\",\"exitCode\":null,\"held\":[],\"logTail\":[],\"error\":\"no lock\"}");
    }

    /**
     * SPEC.md, "ZooKeeper layout": an operator's held node carries hold {by, reason, since, until} instead of schedule
     * and window; a window's held node is written as before (decision 0015).
     */
    @Test
    void heldNodesOfAWindowAndOfAnOperator() {
        String window = "{\"host\":\"host-a\",\"module\":\"store\",\"container\":\"store-registry\",\"containerId\":\"3f2a\","
                + "\"schedule\":\"garbage-collect\",\"window\":\"w-1\",\"since\":\"2026-11-30T03:30:00Z\",\"by\":{\"pid\":7,\"process\":\"mesh-agent run\"}}";
        assertThat(roundTrip(window, HeldRecord.class)).isEqualTo(window);
        String operator = "{\"host\":\"host-a\",\"module\":\"store\",\"container\":\"store-registry\",\"since\":\"2026-11-30T03:30:00Z\","
                + "\"by\":{\"pid\":9,\"process\":\"mesh-coordinator\"},\"hold\":{\"by\":\"alice\",\"reason\":\"disk swap\","
                + "\"since\":\"2026-11-30T03:30:00Z\",\"until\":\"2026-11-30T05:30:00Z\"}}";
        assertThat(roundTrip(operator, HeldRecord.class)).isEqualTo(operator);
        Instant t = Instant.parse("2026-11-30T03:30:00Z");
        HeldRecord h = HeldRecord.operator("host-a", "store", "store-registry", null, new ProcessRef(9, "mesh-coordinator"),
                new HeldRecord.OperatorHold("alice", "disk swap", t, t.plusSeconds(7200), null, null));
        assertThat(Json.text(h)).isEqualTo(operator);
        assertThat(h.operatorHold()).isTrue();
        assertThat(h.reason()).isEqualTo("held by operator alice: disk swap (since 2026-11-30T03:30:00Z, until 2026-11-30T05:30:00Z)");
        assertThat(h.expiredAt(t.plusSeconds(7199))).isFalse();
        assertThat(h.expiredAt(t.plusSeconds(7200))).isTrue();
        assertThat(Json.read(window.getBytes(StandardCharsets.UTF_8), HeldRecord.class).expiredAt(t.plusSeconds(1_000_000))).isFalse();
        assertThat(WindowResult.skipped("gc", "w-1", t, "held by operator: store-registry").outcome().wire()).isEqualTo("skipped");
    }

    private static String withoutFinishedAt(String json) {
        return json.replaceFirst("\"finishedAt\":\"[^\"]*\"", "\"finishedAt\":\"-\"");
    }
}
