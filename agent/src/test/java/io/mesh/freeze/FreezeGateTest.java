package io.mesh.freeze;

import io.mesh.wire.FreezeRecord;
import org.junit.jupiter.api.Test;

import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;

/** The freeze rule without ZooKeeper (decision 14): which freeze holds a module, and when it ends. */
class FreezeGateTest {
    private static final Instant NOW = Instant.parse("2026-12-01T10:00:00Z");

    private static FreezeRecord until(String t) { return new FreezeRecord("token", "r " + t, NOW.minusSeconds(60), Instant.parse(t)); }

    @Test
    void aFreezeHoldsUntilItsEndAndNotAtIt() {
        FreezeRecord f = until("2026-12-01T10:00:01Z");
        assertThat(FreezeGate.decide(f, null, NOW)).contains(f);
        assertThat(FreezeGate.decide(f, null, Instant.parse("2026-12-01T10:00:01Z"))).isEmpty();
        assertThat(FreezeGate.decide(null, null, NOW)).isEmpty();
        assertThat(FreezeGate.decide(until("2026-12-01T09:00:00Z"), null, NOW)).as("ended: the node is left, it holds nothing").isEmpty();
    }

    @Test
    void theFreezeOfEveryModuleHoldsEachAndTheLaterEndIsNamed() {
        FreezeRecord own = until("2026-12-01T11:00:00Z"), all = until("2026-12-01T12:00:00Z");
        assertThat(FreezeGate.decide(null, all, NOW)).contains(all);
        assertThat(FreezeGate.decide(own, all, NOW)).as("the one that keeps it frozen longest").contains(all);
        assertThat(FreezeGate.decide(until("2026-12-01T13:00:00Z"), all, NOW)).contains(until("2026-12-01T13:00:00Z"));
        assertThat(FreezeGate.decide(own, until("2026-12-01T09:00:00Z"), NOW)).as("an ended _all leaves the module's own").contains(own);
    }

    @Test
    void anUnreadableFreezeHoldsUntilThawed() {
        FreezeRecord u = FreezeRecord.unreadable();
        assertThat(FreezeGate.decide(u, null, Instant.parse("2999-01-01T00:00:00Z"))).contains(u);
        assertThat(FreezeGate.decide(until("2026-12-01T11:00:00Z"), u, NOW)).contains(u);
    }
}
