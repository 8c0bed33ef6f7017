package io.mesh.wire;

import io.mesh.wire.AuditReport.Item;
import io.mesh.wire.AuditReport.Violation;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** The rules of SPEC.md's "Audit" table, as {@link AuditChecker} applies them to a host's ledger lines. */
class AuditCheckerTest {
    private static final Instant T0 = Instant.parse("2026-12-06T03:30:00Z");
    private static final ProcessRef WINDOW_PROC = new ProcessRef(41, "mesh-agent window");
    private static final ProcessRef DAEMON = new ProcessRef(40, "mesh-agent run");
    private static final String REG = "store-registry", ID = "3f2a9c", W = "w-20261206T033000Z-1";

    private static Instant t(double seconds) { return T0.plusMillis((long) (seconds * 1000)); }

    private static LedgerEntry ev(double s, String action) { return LedgerEntry.event(t(s), "store", REG, ID, action, null, null); }

    private static LedgerEntry windowCall(double s, double e, String action) {
        return LedgerEntry.call(t(s), "store", REG, ID, action, "window:garbage-collect", W, "garbage-collect", WINDOW_PROC).ended(t(e), null, null);
    }

    /** A window of the store's registry as it goes right: held, stopped, step, started, released. */
    private static List<LedgerEntry> cleanWindow() {
        List<LedgerEntry> l = new ArrayList<>();
        l.add(LedgerEntry.held(LedgerKind.HELD_OPEN, t(0), "store", REG, ID, LedgerEntry.WINDOW, W, "garbage-collect", null, null, null));
        l.add(windowCall(0.1, 0.2, "update"));
        l.add(ev(0.15, "update"));
        l.add(windowCall(0.3, 2.4, "stop"));
        l.add(ev(0.4, "kill"));
        l.add(ev(2.2, "die"));
        l.add(ev(2.3, "stop"));
        l.add(windowCall(10, 10.5, "start"));
        l.add(ev(10.4, "start"));
        l.add(LedgerEntry.held(LedgerKind.HELD_CLOSE, t(11), "store", REG, ID, LedgerEntry.WINDOW, W, "garbage-collect", null, null, null));
        return l;
    }

    private static AuditReport check(List<LedgerEntry> lines) {
        return AuditChecker.check("host-a", lines, T0.minusSeconds(3600), t(600), null, t(600));
    }

    private static AuditReport checkSpan(List<LedgerEntry> lines, Instant from, Instant to) {
        return AuditChecker.check("host-a", lines, from, to, null, to);
    }

    private static final ProcessRef ROGUE_PROC = new ProcessRef(77, "mesh-agent run");

    private static LedgerEntry heldLine(LedgerKind k, double s) {
        return LedgerEntry.held(k, t(s), "store", REG, ID, LedgerEntry.WINDOW, W, "garbage-collect", null, null, null);
    }

    @Test
    void aWindowThatStopsAndStartsItsOwnContainerIsOkWithItsStopsAndStarts() {
        AuditReport r = check(cleanWindow());
        assertThat(r.violations()).isEmpty();
        assertThat(r.items()).singleElement().satisfies(i -> {
            assertThat(i.type()).isEqualTo("window");
            assertThat(i.id()).isEqualTo(W);
            assertThat(i.containers()).containsExactly(REG);
            assertThat(i.stops()).isEqualTo(1);
            assertThat(i.starts()).isEqualTo(1);
            assertThat(i.status()).isEqualTo("ok");
        });
        assertThat(AuditReport.exitCode(List.of(r))).isZero();
    }

    /** A daemon started again replays the engine's events from its anchor: one written twice is still one event. */
    @Test
    void anEventWrittenTwiceByAReplayIsOneEvent() {
        List<LedgerEntry> l = cleanWindow();
        l.add(ev(10.4, "start"));
        l.add(ev(2.3, "stop"));
        AuditReport r = check(l);
        assertThat(r.violations()).isEmpty();
        assertThat(r.items()).singleElement().satisfies(i -> {
            assertThat(i.stops()).isEqualTo(1);
            assertThat(i.starts()).isEqualTo(1);
        });
        l.add(ev(10.41, "start")); // another start, a hundredth of a second later, still held: not the same event
        assertThat(check(l).violations()).extracting(Violation::kind).containsExactlyInAnyOrder(
                AuditViolationKind.TOUCHED_WHILE_HELD, AuditViolationKind.OUTSIDE_MESH);
    }

    /**
     * A container's hooks (decision 38) are {@code docker exec}s: Docker's {@code exec_create}, {@code exec_start} and
     * {@code exec_die} events (as dockerd names them, with the command after the colon) touch nothing, whoever made them,
     * inside a window's held interval or out of it; and an {@code exec} call accounts for no touch of its container.
     */
    @Test
    void aHooksExecEventsAreNeitherOutsideMeshNorTouchedWhileHeld() {
        List<LedgerEntry> l = cleanWindow();
        // pre-stop before the held interval, by the window's process, with its call line
        l.add(0, LedgerEntry.call(t(-1), "store", REG, ID, "exec", "window:garbage-collect", W, "garbage-collect", WINDOW_PROC)
                .ended(t(-0.5), null, null));
        l.add(ev(-0.9, "exec_create: sh -c echo drained"));
        l.add(ev(-0.8, "exec_start: sh -c echo drained"));
        l.add(ev(-0.6, "exec_die"));
        // post-start inside the held interval, once the container runs again
        l.add(windowCall(10.6, 10.9, "exec"));
        l.add(ev(10.7, "exec_create: sh -c echo warm"));
        l.add(ev(10.7, "exec_start: sh -c echo warm"));
        l.add(ev(10.8, "exec_die"));
        // and a docker exec by hand mid-step, no call at all: an exec is not among SPEC's touches
        l.add(ev(5, "exec_create: sh"));
        l.add(ev(5.1, "exec_start: sh"));
        l.add(ev(6, "exec_die"));
        AuditReport r = check(l);
        assertThat(r.violations()).isEmpty();
        assertThat(r.items()).singleElement().satisfies(i -> {
            assertThat(i.stops()).isEqualTo(1);
            assertThat(i.starts()).isEqualTo(1);
            assertThat(i.status()).isEqualTo("ok");
        });
        // An exec call does not account for a start it happened to overlap: a hook that started nothing.
        l.add(windowCall(20, 21, "exec"));
        l.add(ev(20.5, "start"));
        assertThat(check(l).violations()).extracting(Violation::kind).containsExactly(AuditViolationKind.OUTSIDE_MESH);
        assertThat(AuditChecker.makes("exec")).isEmpty();
        assertThat(LedgerEntry.CALL_ACTIONS).contains("exec");
    }

    @Test
    void aStartByHandWhileHeldIsTouchedWhileHeldAndOutsideMesh() {
        List<LedgerEntry> l = cleanWindow();
        l.add(ev(5, "start")); // docker start by hand, mid-step
        AuditReport r = check(l);
        assertThat(r.violations()).extracting(Violation::kind)
                .containsExactlyInAnyOrder(AuditViolationKind.TOUCHED_WHILE_HELD, AuditViolationKind.OUTSIDE_MESH);
        assertThat(r.violations()).allSatisfy(v -> {
            assertThat(v.evidence().at()).isEqualTo(t(5));
            assertThat(v.container()).isEqualTo(REG);
        });
        assertThat(r.items()).singleElement().extracting(Item::status).isEqualTo("violations");
        assertThat(AuditReport.exitCode(List.of(r))).isEqualTo(AuditReport.VIOLATIONS);
    }

    @Test
    void anApplysCallOnAHeldContainerIsTouchedWhileHeldThoughMeshMadeIt() {
        List<LedgerEntry> l = cleanWindow();
        l.add(LedgerEntry.call(t(5), "store", REG, ID, "remove", "push-0000000007", null, null, DAEMON).ended(t(5.5), null, null));
        l.add(ev(5.2, "destroy"));
        AuditReport r = check(l);
        assertThat(r.violations()).singleElement().satisfies(v -> {
            assertThat(v.kind()).isEqualTo(AuditViolationKind.TOUCHED_WHILE_HELD);
            assertThat(v.message()).contains("push-0000000007");
        });
    }

    /**
     * The fleet history's agent whose clock ran 5 minutes ahead: its lines are stamped by the engine's time as it read
     * it, some 50 ms behind dockerd's own stamps, so an apply's last events read as just inside the window's interval
     * that began after the apply's calls had ended.
     */
    @Test
    void aTouchWhoseCallEndedBeforeTheHoldBeganIsJudgedAtItsCallsTime() {
        List<LedgerEntry> l = cleanWindow();
        l.add(LedgerEntry.call(t(-0.06), "store", REG, ID, "update", "push-0000000103", null, null, DAEMON).ended(t(-0.05), null, null));
        l.add(ev(0.01, "update"));
        assertThat(check(l).violations()).isEmpty();

        l.add(LedgerEntry.call(t(-0.02), "store", REG, ID, "rename", "push-0000000103", null, null, DAEMON).ended(t(0.02), null, null));
        l.add(ev(0.03, "rename")); // its call ended inside the interval: a touch while held
        assertThat(check(l).violations()).singleElement().extracting(Violation::kind).isEqualTo(AuditViolationKind.TOUCHED_WHILE_HELD);
    }

    /**
     * A call that made no event (a start of a container already running) just before a window's interval must not
     * claim the event of a later call inside it, which the interval would then not judge.
     */
    @Test
    void aCallThatMadeNoEventDoesNotClaimALaterCallsTouchWhileHeld() {
        List<LedgerEntry> l = cleanWindow();
        l.add(LedgerEntry.call(t(-0.5), "store", REG, ID, "start", "push-0000000001", null, null, DAEMON).ended(t(-0.2), null, null));
        l.add(LedgerEntry.call(t(0.5), "store", REG, ID, "start", "push-0000000002", null, null, DAEMON).ended(t(0.7), null, null));
        l.add(ev(0.6, "start"));
        assertThat(check(l).violations()).singleElement().satisfies(v -> {
            assertThat(v.kind()).isEqualTo(AuditViolationKind.TOUCHED_WHILE_HELD);
            assertThat(v.message()).contains("push-0000000002");
        });
    }

    /**
     * The fleet history's planted rogue stop of an operator-held container, the hold's node then deleted by hand: the
     * apply that came a moment later stopped the container again (already stopped: no event). Its call must not claim
     * the rogue stop's events, made before it was asked.
     */
    @Test
    void aCallDoesNotClaimAnEventMadeBeforeItWasAsked() {
        List<LedgerEntry> l = new ArrayList<>();
        l.add(LedgerEntry.held(LedgerKind.HELD_OPEN, t(0), "store", REG, ID, LedgerEntry.OPERATOR, null, null, "ops", "planted", null));
        l.add(ev(0.1, "kill"));
        l.add(ev(0.6, "stop"));
        l.add(LedgerEntry.held(LedgerKind.HELD_CLOSE, t(0.8), "store", REG, ID, LedgerEntry.OPERATOR, null, null, "ops", "planted", null));
        l.add(LedgerEntry.call(t(0.95), "store", REG, ID, "stop", "push-0000000012", null, null, DAEMON).ended(t(1.0), null, null));
        assertThat(check(l).violations()).extracting(Violation::kind).containsExactlyInAnyOrder(
                AuditViolationKind.TOUCHED_WHILE_HELD, AuditViolationKind.OUTSIDE_MESH,
                AuditViolationKind.TOUCHED_WHILE_HELD, AuditViolationKind.OUTSIDE_MESH);
    }

    /**
     * A call written ahead and then refused by the module section (its lock lapsed) never reached Docker: an apply's
     * refused remove during a freeze changes nothing, and accounts for nothing either.
     */
    @Test
    void aCallTheSectionRefusedIsNoCall() {
        List<LedgerEntry> l = new ArrayList<>();
        l.add(LedgerEntry.freeze(LedgerKind.FREEZE_OPEN, t(0), "store", "ops", "release night", null));
        LedgerEntry remove = LedgerEntry.call(t(1), "store", REG, ID, "remove", "push-0000000048", null, null, DAEMON);
        l.add(remove);
        l.add(remove.ended(t(1.2), null, "ZooKeeper is not connected (SUSPENDED); stopped before the next Docker call", CallOutcome.REFUSED));
        assertThat(check(l).violations()).isEmpty();
        l.add(ev(1.1, "destroy")); // someone else's
        assertThat(check(l).violations()).singleElement().extracting(Violation::kind).isEqualTo(AuditViolationKind.OUTSIDE_MESH);

        List<LedgerEntry> failed = new ArrayList<>(l.subList(0, 2));
        failed.add(remove.ended(t(1.2), null, "Status 409: removal already in progress")); // Docker was asked
        assertThat(check(failed).violations()).singleElement().extracting(Violation::kind).isEqualTo(AuditViolationKind.CHANGED_WHILE_FROZEN);
    }

    @Test
    void aRestartByDockersPolicyOfAContainerNobodyHoldsIsOutsideMeshOnly() {
        AuditReport r = check(List.of(ev(30, "die"), ev(31, "start")));
        assertThat(r.violations()).singleElement().satisfies(v -> {
            assertThat(v.kind()).isEqualTo(AuditViolationKind.OUTSIDE_MESH);
            assertThat(v.message()).contains("restart policy");
        });
    }

    @Test
    void aDieAloneIsNoTouch() {
        assertThat(check(List.of(ev(30, "die"))).violations()).isEmpty();
    }

    @Test
    void oneCallAccountsForOneEventOfEachAction() {
        List<LedgerEntry> l = new ArrayList<>();
        l.add(LedgerEntry.call(t(1), "store", REG, ID, "start", "push-0000000001", null, null, DAEMON).ended(t(3), null, null));
        l.add(ev(2, "start"));
        l.add(ev(2.5, "start")); // a second start inside the same call: not the call's
        assertThat(check(l).violations()).extracting(Violation::kind).containsExactly(AuditViolationKind.OUTSIDE_MESH);
    }

    @Test
    void aCallWrittenAheadAndAgainAtItsEndIsOneCall() {
        LedgerEntry ahead = LedgerEntry.call(t(1), "store", REG, ID, "start", "push-0000000001", null, null, DAEMON);
        List<LedgerEntry> l = List.of(ahead, ahead.ended(t(3), null, null), ev(2, "start"), ev(2.5, "start"));
        assertThat(check(l).violations()).extracting(Violation::kind).containsExactly(AuditViolationKind.OUTSIDE_MESH);
    }

    @Test
    void aCallWhoseProcessDiedInItStillAccountsForItsEvents() {
        List<LedgerEntry> l = List.of(LedgerEntry.call(t(1), "store", REG, ID, "stop", "window:gc", W, "gc", WINDOW_PROC),
                ev(1.5, "kill"), ev(3, "die"), ev(3.1, "stop"));
        assertThat(check(l).violations()).isEmpty();
    }

    /**
     * A window killed in its stop leaves a call with no end, which may account for kills a while after. The next
     * window's own stop, ended around the kill, made it: the call whose span holds the event wins over an unended one.
     */
    @Test
    void aLaterWindowsOwnStopWinsItsKillOverAnEarlierWindowsUnendedStop() {
        String w2 = "w-20261206T033100Z-2";
        ProcessRef second = new ProcessRef(52, "mesh-agent window");
        List<LedgerEntry> l = new ArrayList<>();
        l.add(LedgerEntry.held(LedgerKind.HELD_OPEN, t(0), "store", REG, ID, LedgerEntry.WINDOW, W, "garbage-collect", null, null, null));
        l.add(LedgerEntry.call(t(0.3), "store", REG, ID, "stop", "window:garbage-collect", W, "garbage-collect", WINDOW_PROC));
        l.add(ev(0.4, "kill")); // the window process is killed here; its recovery starts the container and releases it
        l.add(ev(0.6, "die"));
        l.add(ev(0.7, "stop"));
        l.add(LedgerEntry.call(t(20), "store", REG, ID, "start", "window:garbage-collect", W, "garbage-collect", DAEMON).ended(t(20.5), null, null));
        l.add(ev(20.2, "start"));
        l.add(LedgerEntry.held(LedgerKind.HELD_CLOSE, t(21), "store", REG, ID, LedgerEntry.WINDOW, W, "garbage-collect", null, null, null));
        l.add(LedgerEntry.held(LedgerKind.HELD_OPEN, t(40), "store", REG, ID, LedgerEntry.WINDOW, w2, "garbage-collect", null, null, null));
        l.add(LedgerEntry.call(t(40.2), "store", REG, ID, "stop", "window:garbage-collect", w2, "garbage-collect", second).ended(t(42.5), null, null));
        l.add(ev(40.3, "kill"));
        l.add(ev(42.2, "die"));
        l.add(ev(42.3, "stop"));
        l.add(LedgerEntry.call(t(50), "store", REG, ID, "start", "window:garbage-collect", w2, "garbage-collect", second).ended(t(50.5), null, null));
        l.add(ev(50.2, "start"));
        l.add(LedgerEntry.held(LedgerKind.HELD_CLOSE, t(51), "store", REG, ID, LedgerEntry.WINDOW, w2, "garbage-collect", null, null, null));
        AuditReport r = check(l);
        assertThat(r.violations()).isEmpty();
        assertThat(r.items()).filteredOn(i -> i.id().equals(w2)).singleElement().satisfies(i -> {
            assertThat(i.stops()).isEqualTo(1);
            assertThat(i.starts()).isEqualTo(1);
        });
    }

    @Test
    void aCallThatDidNotMakeThatActionDoesNotAccountForIt() {
        List<LedgerEntry> l = new ArrayList<>();
        l.add(LedgerEntry.call(t(1), "store", REG, ID, "update", "push-0000000001", null, null, DAEMON).ended(t(3), null, null));
        l.add(ev(2, "start"));
        assertThat(check(l).violations()).extracting(Violation::kind).containsExactly(AuditViolationKind.OUTSIDE_MESH);
    }

    @Test
    void aWindowWhoseContainerIsNotRunning60sAfterItEndedLeftItStopped() {
        List<LedgerEntry> l = cleanWindow();
        l.removeIf(e -> e.kind() == LedgerKind.EVENT && "start".equals(e.action()));
        l.removeIf(e -> e.kind() == LedgerKind.CALL && "start".equals(e.action()));
        AuditReport r = check(l);
        assertThat(r.violations()).singleElement().satisfies(v -> {
            assertThat(v.kind()).isEqualTo(AuditViolationKind.LEFT_STOPPED);
            assertThat(v.item()).isEqualTo(W);
        });
    }

    @Test
    void leftStoppedIsJudgedOnly60sAfterTheWindowEnded() {
        List<LedgerEntry> l = cleanWindow();
        l.removeIf(e -> "start".equals(e.action()));
        AuditReport r = AuditChecker.check("host-a", l, T0.minusSeconds(60), t(30), null, t(30));
        assertThat(r.violations()).isEmpty();
        assertThat(r.items()).singleElement().extracting(Item::status).isEqualTo("open");
        AuditReport running = AuditChecker.check("host-a", cleanWindow(), T0.minusSeconds(60), t(30), null, t(30));
        assertThat(running.items()).singleElement().extracting(Item::status).as("running again: ok before the 60 s").isEqualTo("ok");
    }

    @Test
    void anOperatorsHoldByThenExcusesAContainerLeftStopped() {
        List<LedgerEntry> l = cleanWindow();
        l.removeIf(e -> "start".equals(e.action()));
        l.add(LedgerEntry.held(LedgerKind.HELD_OPEN, t(8), "store", REG, ID, LedgerEntry.OPERATOR, null, null, "ops", "disk swap", null));
        l.add(LedgerEntry.call(t(10), "store", REG, ID, "update", "window:garbage-collect", W, "garbage-collect", WINDOW_PROC).ended(t(10.2), null, null));
        l.add(ev(10.1, "update")); // the window puts the restart policy back as it keeps the container stopped
        AuditReport r = check(l);
        assertThat(r.violations()).isEmpty();
        assertThat(r.items()).extracting(Item::type).containsExactly("window", "hold");
    }

    @Test
    void anOperatorsHoldAllowsOnlyItsOwnStop() {
        List<LedgerEntry> l = new ArrayList<>();
        l.add(LedgerEntry.held(LedgerKind.HELD_OPEN, t(0), "store", REG, ID, LedgerEntry.OPERATOR, null, null, "ops", "disk swap", null));
        l.add(LedgerEntry.call(t(1), "store", REG, ID, "stop", "hold", null, null, DAEMON).ended(t(3), null, null));
        l.add(ev(1.5, "kill"));
        l.add(ev(2, "die"));
        l.add(ev(2.1, "stop"));
        l.add(LedgerEntry.call(t(20), "store", REG, ID, "start", "repair", null, null, DAEMON).ended(t(21), null, null));
        l.add(ev(20.5, "start"));
        AuditReport r = check(l);
        assertThat(r.violations()).singleElement().satisfies(v -> {
            assertThat(v.kind()).isEqualTo(AuditViolationKind.TOUCHED_WHILE_HELD);
            assertThat(v.evidence().at()).isEqualTo(t(20.5));
            assertThat(v.message()).contains("held by operator ops").contains("repair");
        });
    }

    @Test
    void anApplysCreateDuringAFreezeIsChangedWhileFrozenAndOneAfterTheThawIsNot() {
        List<LedgerEntry> l = new ArrayList<>();
        l.add(LedgerEntry.freeze(LedgerKind.FREEZE_OPEN, t(0), "store", "ops", "release night", null));
        l.add(LedgerEntry.event(t(5), "store", REG, ID, "destroy", null, null)); // docker rm by hand
        l.add(LedgerEntry.call(t(10), "store", REG, null, "create", "push-0000000009", null, null, DAEMON).ended(t(10.5), "b00b1e", null));
        l.add(LedgerEntry.event(t(10.2), "store", REG, "b00b1e", "create", null, null));
        l.add(LedgerEntry.freeze(LedgerKind.FREEZE_CLOSE, t(20), "store", "ops", "release night", null));
        l.add(LedgerEntry.call(t(30), "store", REG, null, "create", "push-0000000009", null, null, DAEMON).ended(t(30.5), "c0ffee", null));
        l.add(LedgerEntry.event(t(30.2), "store", REG, "c0ffee", "create", null, null));
        AuditReport r = check(l);
        assertThat(r.violations()).extracting(Violation::kind)
                .containsExactly(AuditViolationKind.OUTSIDE_MESH, AuditViolationKind.CHANGED_WHILE_FROZEN);
        assertThat(r.violations().get(1).evidence().at()).isEqualTo(t(10.2));
        assertThat(r.items()).filteredOn(i -> i.type().equals("freeze")).singleElement().extracting(Item::status).isEqualTo("violations");
    }

    @Test
    void aFreezeEndsAtItsUntilThoughTheAgentWritesItsEndAMomentLater() {
        // the agent's thaw timer writes the closing a little after the until; an apply may begin in between
        List<LedgerEntry> l = new ArrayList<>();
        l.add(LedgerEntry.freeze(LedgerKind.FREEZE_OPEN, t(0), "store", "ops", "release night", t(8)));
        l.add(LedgerEntry.call(t(8.1), "store", REG, null, "create", "push-0000000009", null, null, DAEMON).ended(t(8.3), "c0ffee", null));
        l.add(LedgerEntry.event(t(8.2), "store", REG, "c0ffee", "create", null, null));
        l.add(LedgerEntry.freeze(LedgerKind.FREEZE_CLOSE, t(8.4), "store", "ops", "release night", t(8)));
        AuditReport r = check(l);
        assertThat(r.violations()).isEmpty();
        assertThat(r.items()).filteredOn(i -> i.type().equals("freeze")).singleElement().extracting(Item::to).isEqualTo(t(8));
        // one at 7.9, inside the until, is still judged
        l.add(LedgerEntry.call(t(7.9), "store", REG, null, "create", "push-0000000010", null, null, DAEMON).ended(t(7.95), "d00d", null));
        l.add(LedgerEntry.event(t(7.92), "store", REG, "d00d", "create", null, null));
        assertThat(check(l).violations()).extracting(Violation::kind).containsExactly(AuditViolationKind.CHANGED_WHILE_FROZEN);
    }

    /**
     * A push's reconcile a minute after its apply is a new apply: begun during the freeze (its apply line says so), its
     * change is judged, though its calls follow the first apply's within {@link AuditChecker#APPLY_PAUSE}.
     */
    @Test
    void aReconcileThatBeganDuringTheFreezeIsJudgedThoughItFollowsTheApplySoon() {
        List<LedgerEntry> l = new ArrayList<>();
        l.add(LedgerEntry.apply(t(0), "store", "push-0000000009", DAEMON));
        l.add(LedgerEntry.call(t(1), "store", REG, ID, "stop", "push-0000000009", null, null, DAEMON).ended(t(2), null, null));
        l.add(ev(1.5, "stop"));
        l.add(LedgerEntry.freeze(LedgerKind.FREEZE_OPEN, t(10), "store", "ops", "release night", null));
        l.add(LedgerEntry.apply(t(60), "store", "push-0000000009", DAEMON));
        l.add(LedgerEntry.call(t(61), "store", REG, ID, "kill", "push-0000000009", null, null, DAEMON).ended(t(61.5), null, null));
        l.add(ev(61.2, "kill"));
        assertThat(check(l).violations()).extracting(Violation::kind).containsExactly(AuditViolationKind.CHANGED_WHILE_FROZEN);
        // the same calls without apply lines (a ledger written before them): one run of calls, one apply, begun before
        l.removeIf(e -> e.kind() == LedgerKind.APPLY);
        assertThat(check(l).violations()).isEmpty();
    }

    @Test
    void anApplyUnderWayWhenTheFreezeCameFinishesItsContainer() {
        List<LedgerEntry> l = new ArrayList<>();
        l.add(LedgerEntry.call(t(0), "store", REG, ID, "stop", "push-0000000009", null, null, DAEMON).ended(t(2), null, null));
        l.add(ev(0.5, "kill"));
        l.add(ev(1.5, "die"));
        l.add(ev(1.6, "stop"));
        l.add(LedgerEntry.freeze(LedgerKind.FREEZE_OPEN, t(1), "store", "ops", "release night", null));
        l.add(LedgerEntry.call(t(3), "store", REG, ID, "rename", "push-0000000009", null, null, DAEMON).ended(t(3.2), null, null));
        l.add(ev(3.1, "rename"));
        assertThat(check(l).violations()).isEmpty();
    }

    @Test
    void aContainerStartedAgainAndStoppedByTheNextWindowWasNotLeftStopped() {
        List<LedgerEntry> l = cleanWindow();
        l.add(ev(50, "kill")); // a later window's stop, 39 s after this one ended
        l.add(ev(51, "die"));
        l.add(ev(51.1, "stop"));
        assertThat(check(l).violations()).extracting(Violation::kind).doesNotContain(AuditViolationKind.LEFT_STOPPED);
    }

    @Test
    void aCallThatNamedItsContainerByShortIdOrNameAccountsForItsEvents() {
        LedgerEntry byShortId = LedgerEntry.call(t(1), "store", null, "3f2a", "start", "push-0000000001", null, null, DAEMON).ended(t(2), null, null);
        LedgerEntry byName = LedgerEntry.call(t(5), "store", null, REG, "start", "push-0000000001", null, null, DAEMON).ended(t(6), null, null);
        AuditReport r = check(List.of(byShortId, LedgerEntry.event(t(1.5), "store", REG, "3f2a9c", "start", null, null),
                byName, LedgerEntry.event(t(5.5), "store", REG, "3f2a9c", "start", null, null)));
        assertThat(r.violations()).isEmpty();
    }

    @Test
    void aStopThatEndsInSigkillAccountsForBothKills() {
        List<LedgerEntry> l = cleanWindow();
        l.add(ev(2.1, "kill")); // SIGKILL after the stop timeout, inside the same stop call
        assertThat(check(l).violations()).isEmpty();
    }

    @Test
    void aContainerWhoseStartMayLieInAGapIsNotCalledLeftStopped() {
        List<LedgerEntry> l = cleanWindow();
        l.removeIf(e -> "start".equals(e.action()));
        l.add(LedgerEntry.gap(t(9), t(12), "corrupt: a line that does not verify"));
        AuditReport r = check(l);
        assertThat(r.violations()).extracting(Violation::kind).containsExactly(AuditViolationKind.GAP);
        assertThat(r.items()).filteredOn(i -> i.type().equals("window")).singleElement().extracting(Item::status).isEqualTo("open");
    }

    @Test
    void aFreezeLetsRepairsThrough() {
        List<LedgerEntry> l = new ArrayList<>();
        l.add(LedgerEntry.freeze(LedgerKind.FREEZE_OPEN, t(0), LedgerEntry.ALL_MODULES, "ops", "audit", null));
        l.add(LedgerEntry.call(t(10), "store", REG, ID, "start", "repair", null, null, DAEMON).ended(t(10.5), null, null));
        l.add(ev(10.2, "start"));
        assertThat(check(l).violations()).isEmpty();
    }

    @Test
    void aGapIsAGapAndOnlyGapsExit3() {
        AuditReport r = check(List.of(LedgerEntry.gap(t(100), t(200), "dockerd restarted: its events before 03:31:40 are gone")));
        assertThat(r.violations()).singleElement().satisfies(v -> {
            assertThat(v.kind()).isEqualTo(AuditViolationKind.GAP);
            assertThat(v.message()).contains("dockerd restarted");
        });
        assertThat(AuditReport.exitCode(List.of(r))).isEqualTo(AuditReport.GAPS_ONLY);
        assertThat(AuditReport.exitCode(List.of(check(cleanWindow()), AuditReport.unanswered("host-b", T0, t(1), "did not answer"))))
                .isEqualTo(AuditReport.GAPS_ONLY);
    }

    @Test
    void aModuleFilterKeepsOtherModulesOut() {
        List<LedgerEntry> l = cleanWindow();
        l.add(LedgerEntry.event(t(5), "web", "web-nginx", "aa", "start", null, null));
        assertThat(AuditChecker.check("host-a", l, T0, t(600), Set.of("store"), t(600)).violations()).isEmpty();
        assertThat(AuditChecker.check("host-a", l, T0, t(600), Set.of("web"), t(600)).violations()).hasSize(1);
    }

    @Test
    void aHeldIntervalOpenedBeforeTheSpanStillCounts() {
        List<LedgerEntry> l = cleanWindow();
        l.add(ev(5, "start"));
        AuditReport r = AuditChecker.check("host-a", l, t(4), t(600), null, t(600));
        assertThat(r.violations()).extracting(Violation::kind).contains(AuditViolationKind.TOUCHED_WHILE_HELD);
    }

    @Test
    void theLedgerRoundTripsAsOneLineOfJsonWithoutAbsentFields() {
        LedgerEntry e = windowCall(1, 2, "stop");
        String json = Json.text(e);
        assertThat(json).doesNotContain("\n").doesNotContain("null").contains("\"kind\":\"call\"").contains("\"outcome\":\"made\"");
        assertThat(Json.read(json.getBytes(java.nio.charset.StandardCharsets.UTF_8), LedgerEntry.class)).isEqualTo(e);
        LedgerEntry refused = e.ended(t(2), null, "no lock", CallOutcome.REFUSED);
        assertThat(Json.read(Json.text(refused).getBytes(java.nio.charset.StandardCharsets.UTF_8), LedgerEntry.class)).isEqualTo(refused);
        assertThat(Json.text(refused)).contains("\"outcome\":\"refused\"");
        assertThat(Json.text(LedgerEntry.held(LedgerKind.HELD_OPEN, t(0), "s", "c", "i", "window", "w", "s", null, null, null)))
                .contains("\"kind\":\"held-open\"");
    }

    /**
     * A process that called without the module's lock (what the audit exists to catch) and died in its kill: the kill
     * of the held container read as the window's own because the window's stop began 50 ms after it. A call that began
     * sooner than a session after the dead one cannot be a lawful next holder's, so it does not cut the dead call short.
     */
    @Test
    void aDeadRoguesKillOfAHeldContainerIsNotExcusedByTheWindowsStopThatBeganJustAfter() {
        List<LedgerEntry> l = new ArrayList<>();
        l.add(heldLine(LedgerKind.HELD_OPEN, 0));
        l.add(LedgerEntry.call(t(0.25), "store", REG, ID, "kill", "push-0000000009", null, null, ROGUE_PROC)); // no end: it died
        l.add(LedgerEntry.call(t(0.3), "store", REG, ID, "stop", "window:garbage-collect", W, "garbage-collect", WINDOW_PROC).ended(t(2.4), null, null));
        l.add(ev(0.35, "kill"));
        l.add(ev(0.36, "die"));
        l.add(LedgerEntry.call(t(10), "store", REG, ID, "start", "window:garbage-collect", W, "garbage-collect", WINDOW_PROC).ended(t(10.5), null, null));
        l.add(ev(10.4, "start"));
        l.add(heldLine(LedgerKind.HELD_CLOSE, 11));
        assertThat(check(l).violations()).extracting(Violation::kind)
                .contains(AuditViolationKind.TOUCHED_WHILE_HELD);
    }

    /**
     * A name in a call's id field matches only itself: a call on store-registry-mirror is no call on store-registry, and
     * does not cut a dead window's stop of it short (its SIGKILL would read as a touch by no mesh call).
     */
    @Test
    void aCallOnAnotherContainerWhoseNameExtendsThisOnesDoesNotCutADeadCallShort() {
        List<LedgerEntry> l = new ArrayList<>();
        l.add(heldLine(LedgerKind.HELD_OPEN, 0));
        l.add(LedgerEntry.call(t(0.3), "store", REG, REG, "stop", "window:garbage-collect", W, "garbage-collect", WINDOW_PROC)); // died in it
        l.add(ev(0.4, "kill")); // SIGTERM
        l.add(LedgerEntry.call(t(5), "store", null, "store-registry-mirror", "start", "push-0000000008", null, null, DAEMON).ended(t(5.2), null, null));
        l.add(LedgerEntry.event(t(5.1), "store", "store-registry-mirror", "77aa00", "start", null, null));
        l.add(ev(10.3, "kill")); // SIGKILL after the 10 s stop timeout: still the dead window's stop
        l.add(ev(10.31, "die"));
        l.add(ev(10.32, "stop"));
        l.add(LedgerEntry.call(t(20), "store", REG, ID, "start", "window:garbage-collect", W, "garbage-collect", DAEMON).ended(t(20.5), null, null));
        l.add(ev(20.2, "start"));
        l.add(heldLine(LedgerKind.HELD_CLOSE, 21));
        assertThat(check(l).violations()).isEmpty();
    }

    /**
     * The ledger stamps by the engine's clock, whose offset is re-read each minute and applied only from 500 ms
     * (Ledger.CLOCK_FLOOR): a step back puts an apply's first call before its own apply line. It is still that
     * apply's, not the one an hour before the freeze of the same pid, push and module.
     */
    @Test
    void aCallStampedJustBeforeItsApplyLineIsNotHandedToAnApplyAnHourOld() {
        List<LedgerEntry> l = new ArrayList<>();
        l.add(LedgerEntry.apply(t(0), "store", "push-0000000009", DAEMON));
        l.add(LedgerEntry.call(t(1), "store", REG, ID, "stop", "push-0000000009", null, null, DAEMON).ended(t(2), null, null));
        l.add(ev(1.5, "stop"));
        l.add(LedgerEntry.freeze(LedgerKind.FREEZE_OPEN, t(10), "store", "ops", "release night", null));
        l.add(LedgerEntry.apply(t(3600.6), "store", "push-0000000009", DAEMON)); // stamped before the offset stepped back 0.5 s
        l.add(LedgerEntry.call(t(3600.2), "store", REG, ID, "kill", "push-0000000009", null, null, DAEMON).ended(t(3600.4), null, null));
        l.add(ev(3600.3, "kill"));
        Instant to = t(7200);
        List<LedgerEntry> noApplyLines = new ArrayList<>(l);
        noApplyLines.removeIf(e -> e.kind() == LedgerKind.APPLY);
        assertThat(checkSpan(noApplyLines, T0.minusSeconds(60), to).violations()).extracting(Violation::kind)
                .contains(AuditViolationKind.CHANGED_WHILE_FROZEN); // the old rule judges it
        assertThat(checkSpan(l, T0.minusSeconds(60), to).violations()).extracting(Violation::kind)
                .contains(AuditViolationKind.CHANGED_WHILE_FROZEN);
    }

    /**
     * An apply under way when the freeze came finishes its container: the old one's remove after the new one's
     * readiness wait (ApplyExecution: start, readiness.await, remove(oldId)). The whole ledger reads it by its apply
     * line. A slice that begins
     * after the apply line carries it ({@code LedgerFiles.slice}), and reads the same.
     */
    @Test
    void aSliceJudgesAnApplyUnderWayAsTheWholeLedgerDoes() {
        List<LedgerEntry> l = new ArrayList<>();
        l.add(LedgerEntry.apply(t(0), "store", "push-0000000009", DAEMON));
        l.add(LedgerEntry.call(t(1), "store", REG, ID, "stop", "push-0000000009", null, null, DAEMON).ended(t(3), null, null));
        l.add(ev(1.5, "kill"));
        l.add(ev(2.5, "die"));
        l.add(ev(2.6, "stop"));
        l.add(LedgerEntry.freeze(LedgerKind.FREEZE_OPEN, t(10), "store", "ops", "release night", null));
        // the new container's readiness wait: 3 min with no call; then the old one goes
        l.add(LedgerEntry.call(t(200), "store", REG, ID, "remove", "push-0000000009", null, null, DAEMON).ended(t(200.5), null, null));
        l.add(ev(200.3, "destroy"));
        Instant from = t(150), to = t(600);
        assertThat(checkSpan(l, from, to).violations()).isEmpty(); // the whole ledger: begun before the freeze

        // without its apply line (a slice that did not carry it), the pause rule would judge the remove
        List<LedgerEntry> noApplyLine = new ArrayList<>(l);
        noApplyLine.removeIf(e -> e.kind() == LedgerKind.APPLY);
        assertThat(checkSpan(noApplyLine, from, to).violations()).extracting(Violation::kind).containsExactly(AuditViolationKind.CHANGED_WHILE_FROZEN);
    }
}
