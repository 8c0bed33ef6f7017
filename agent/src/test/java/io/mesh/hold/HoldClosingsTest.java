package io.mesh.hold;

import io.mesh.wire.HeldRecord;
import io.mesh.wire.ProcessRef;
import org.junit.jupiter.api.Test;

import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;

/** Each operator hold's ledger interval closes once, and one hold's end never stands for another's. */
class HoldClosingsTest {
    private static final Instant T0 = Instant.parse("2026-12-06T14:25:12.203Z");

    private static HeldRecord hold(Instant since, Instant until) {
        return HeldRecord.operator("fleet-2", "he5b9-b", "he5b9-b-api", null, new ProcessRef(5929, "mesh-coordinator"),
                new HeldRecord.OperatorHold("anonymous from 127.0.0.1", "history hold", since, until, Boolean.TRUE, null));
    }

    @Test
    void aHoldWithAnUntilClosesOnceWhicheverOfItsExpiryAndItsEndComesFirst() {
        HoldClosings c = new HoldClosings();
        HeldRecord h = hold(T0, T0.plusSeconds(28));
        assertThat(c.close(h)).as("expired").isTrue();
        assertThat(c.close(h)).as("then its node deleted").isFalse();

        HoldClosings d = new HoldClosings();
        assertThat(d.close(h)).as("replaced by another hold while its expiry timer ran").isTrue();
        assertThat(d.close(h)).as("the timer, a moment later").isFalse();
    }

    /**
     * The fleet history's agent, paused past its session: the first hold (until passed) was released and a second placed
     * by the same operator on the same container; its cache met one change. The first's expiry must not swallow the
     * second's release.
     */
    @Test
    void anExpiredHoldWhoseDeleteWasNeverSeenDoesNotSwallowTheNextHoldsEnd() {
        HoldClosings c = new HoldClosings();
        HeldRecord first = hold(T0, T0.plusSeconds(28));
        HeldRecord second = hold(T0.plusSeconds(29), null);
        assertThat(c.close(first)).isTrue();
        assertThat(HoldClosings.same(first, second)).isFalse();
        assertThat(c.close(second)).as("the second hold's release closes it").isTrue();
        HeldRecord third = hold(T0.plusSeconds(60), T0.plusSeconds(90));
        assertThat(c.close(third)).as("nor does it swallow a later hold's expiry").isTrue();
    }

    @Test
    void aHoldConfirmedOrStoppedIsTheSameHold() {
        HeldRecord h = hold(T0, null);
        HeldRecord confirmed = HeldRecord.operator("fleet-2", "he5b9-b", "he5b9-b-api", null, new ProcessRef(5929, "mesh-coordinator"),
                new HeldRecord.OperatorHold("anonymous from 127.0.0.1", "history hold", T0, null, Boolean.TRUE, T0.plusSeconds(3), T0.plusSeconds(2)));
        assertThat(HoldClosings.same(h, confirmed)).isTrue();
        assertThat(new HoldClosings().close(h)).as("released, never expired").isTrue();
    }
}
