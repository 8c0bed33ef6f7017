package io.mesh.wire;

import io.mesh.manifest.CronTimes;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A recurring freeze's rule (decision 37): in force from each cron time for {@code for}; a start judged by ZooKeeper's
 * clock at its latest, an end at its earliest (decision 27); {@code until} ends the recurrence; a rule that cannot be
 * read holds, as an unreadable node does.
 */
class RecurringFreezeRuleTest {
    private static final Instant SINCE = Instant.parse("2026-12-04T00:00:00Z"); // a Friday
    private static final FreezeRecord FRIDAYS = new FreezeRecord("alice", "weekends", SINCE, null, "0 18 * * 5", null, "14h");

    private static Instant t(String iso) { return Instant.parse(iso); }

    @Test
    void inForceFromEachStartForItsLength() {
        assertThat(FRIDAYS.inForce(t("2026-12-04T17:59:59Z"), t("2026-12-04T17:59:59Z"))).isEmpty();
        FreezeRecord span = FRIDAYS.inForce(t("2026-12-04T18:00:00Z"), t("2026-12-04T18:00:00Z")).orElseThrow();
        assertThat(span.since()).isEqualTo(t("2026-12-04T18:00:00Z"));
        assertThat(span.until()).as("the span's end, as a report names it").isEqualTo(t("2026-12-05T08:00:00Z"));
        assertThat(span.cron()).isEqualTo("0 18 * * 5");
        assertThat(FRIDAYS.inForce(t("2026-12-05T07:59:59Z"), t("2026-12-05T07:59:59Z"))).isPresent();
        assertThat(FRIDAYS.inForce(t("2026-12-05T08:00:00Z"), t("2026-12-05T08:00:00Z"))).isEmpty();
        assertThat(FRIDAYS.inForce(t("2026-12-11T18:30:00Z"), t("2026-12-11T18:30:00Z")).orElseThrow().until()).isEqualTo(t("2026-12-12T08:00:00Z"));
    }

    @Test
    void aStartIsJudgedAtTheLatestAndAnEndAtTheEarliest() {
        // 300 ms either way: the latest has reached the start, the earliest not yet
        assertThat(FRIDAYS.inForce(t("2026-12-04T17:59:59.700Z"), t("2026-12-04T18:00:00.300Z"))).as("obeyed early").isPresent();
        // the earliest has not reached the end, the latest has passed it
        assertThat(FRIDAYS.inForce(t("2026-12-05T07:59:59.700Z"), t("2026-12-05T08:00:00.300Z"))).as("ended late").isPresent();
        assertThat(FRIDAYS.inForce(t("2026-12-05T08:00:00.000Z"), t("2026-12-05T08:00:00.600Z"))).isEmpty();
    }

    @Test
    void untilEndsTheRecurrenceAndTheZoneReadsTheFields() {
        FreezeRecord twice = new FreezeRecord("a", "r", SINCE, t("2026-12-11T18:00:00Z"), "0 18 * * 5", null, "14h");
        assertThat(twice.inForce(t("2026-12-04T19:00:00Z"), t("2026-12-04T19:00:00Z"))).isPresent();
        assertThat(twice.inForce(t("2026-12-11T19:00:00Z"), t("2026-12-11T19:00:00Z"))).as("a start at until is not one").isEmpty();
        assertThat(twice.nextStart(t("2026-12-05T00:00:00Z"))).isEmpty();
        assertThat(FRIDAYS.nextStart(t("2026-12-05T00:00:00Z"))).contains(t("2026-12-11T18:00:00Z"));
        FreezeRecord berlin = new FreezeRecord("a", "r", SINCE, null, "0 18 * * 5", "Europe/Berlin", "1h");
        assertThat(berlin.nextStart(t("2026-12-05T00:00:00Z"))).as("18:00 in Berlin is 17:00 UTC in winter").contains(t("2026-12-11T17:00:00Z"));
    }

    @Test
    void aRuleThatCannotBeReadHolds() {
        FreezeRecord bad = new FreezeRecord("a", "r", SINCE, null, "not a cron", null, "1h");
        assertThat(bad.inForce(t("2026-12-04T19:00:00Z"), t("2026-12-04T19:00:00Z"))).contains(bad);
        // with an until passed, in force with no end: the agent's timer at until would fire for ever (a reviewer's find)
        FreezeRecord badEnded = new FreezeRecord("a", "r", SINCE, t("2026-11-01T00:00:00Z"), "0 18 * * FRI#2", null, "1h");
        assertThat(badEnded.inForce(t("2026-12-04T19:00:00Z"), t("2026-12-04T19:00:00Z")).orElseThrow().until()).isNull();
        FreezeRecord badLength = new FreezeRecord("a", "r", SINCE, null, "0 18 * * 5", null, "soon");
        assertThat(badLength.activeAt(t("2026-12-08T10:00:00Z"))).isTrue();
        FreezeRecord oneSpan = new FreezeRecord("a", "r", SINCE, t("2026-12-04T01:00:00Z"));
        assertThat(oneSpan.activeAt(t("2026-12-04T00:59:59Z"))).isTrue();
        assertThat(oneSpan.activeAt(t("2026-12-04T01:00:00Z"))).isFalse();
        assertThat(Json.read(Json.bytes(FRIDAYS), FreezeRecord.class)).isEqualTo(FRIDAYS);
        assertThat(new String(Json.bytes(FRIDAYS))).contains("\"for\":\"14h\"").doesNotContain("timezone");
        assertThat(new String(Json.bytes(oneSpan))).doesNotContain("cron").doesNotContain("for");
    }

    /**
     * Across the night the clock goes back, the span in force is the one its start announced (a reviewer saw it move to
     * the second 02:00 and end an hour late); the night a clock change skips its start has no span, as a schedule's
     * window does not run then.
     */
    @Test
    void clockChangesKeepTheSpanItsStartAnnounced() {
        FreezeRecord nightly = new FreezeRecord("ops", "nightly", t("2026-10-01T00:00:00Z"), null, "0 2 * * *", "Europe/Berlin", "4h");
        // 2026-10-25: 02:00 CEST is 00:00Z; at 01:00Z it is 02:00 again (CET)
        for (String at : List.of("2026-10-25T00:00:00Z", "2026-10-25T01:00:00Z", "2026-10-25T03:59:59Z")) {
            assertThat(nightly.inForce(t(at), t(at)).orElseThrow().until()).as(at).isEqualTo(t("2026-10-25T04:00:00Z"));
        }
        assertThat(nightly.inForce(t("2026-10-25T04:00:00Z"), t("2026-10-25T04:00:00Z"))).isEmpty();
        assertThat(nightly.nextStart(t("2026-10-25T00:00:00Z"))).contains(t("2026-10-26T01:00:00Z"));
    }

    @Test
    void cronTimesAreAtOrBeforeAndStrictlyAfter() {
        ZoneId utc = ZoneOffset.UTC;
        assertThat(CronTimes.last("* * * * *", utc, t("2026-12-04T10:00:00Z"))).contains(t("2026-12-04T10:00:00Z"));
        assertThat(CronTimes.last("* * * * *", utc, t("2026-12-04T10:00:00.999Z"))).contains(t("2026-12-04T10:00:00Z"));
        assertThat(CronTimes.last("* * * * *", utc, t("2026-12-04T09:59:59.999Z"))).contains(t("2026-12-04T09:59:00Z"));
        assertThat(CronTimes.next("* * * * *", utc, t("2026-12-04T10:00:00Z")).orElseThrow().toInstant()).isEqualTo(t("2026-12-04T10:01:00Z"));
    }

    /** The moments the webhooks announce (freeze.started, freeze.ended): each span's start and end, one freeze's until. */
    @Test
    void theBoundariesAreEachSpansStartAndEndAndAOneSpanFreezesUntil() {
        FreezeRecord everyMinute = new FreezeRecord("a", "r", t("2026-12-07T10:00:00Z"), null, "* * * * *", null, "30s");
        List<FreezeRecord.Boundary> b = everyMinute.boundaries(t("2026-12-07T10:00:10Z"), t("2026-12-07T10:02:45Z"), 10);
        assertThat(b).extracting(FreezeRecord.Boundary::at, FreezeRecord.Boundary::started).containsExactly(
                org.assertj.core.api.Assertions.tuple(t("2026-12-07T10:00:30Z"), false), org.assertj.core.api.Assertions.tuple(t("2026-12-07T10:01:00Z"), true),
                org.assertj.core.api.Assertions.tuple(t("2026-12-07T10:01:30Z"), false), org.assertj.core.api.Assertions.tuple(t("2026-12-07T10:02:00Z"), true),
                org.assertj.core.api.Assertions.tuple(t("2026-12-07T10:02:30Z"), false));
        assertThat(b.get(1).span().until()).isEqualTo(t("2026-12-07T10:01:30Z"));
        assertThat(everyMinute.boundaries(t("2026-12-07T10:00:10Z"), t("2026-12-07T10:02:45Z"), 2)).hasSize(2);
        assertThat(everyMinute.boundaries(t("2026-12-07T10:00:30Z"), t("2026-12-07T10:00:59Z"), 10)).as("between spans").isEmpty();

        FreezeRecord once = new FreezeRecord("a", "r", t("2026-12-07T10:00:00Z"), t("2026-12-07T11:00:00Z"));
        assertThat(once.boundaries(t("2026-12-07T10:00:00Z"), t("2026-12-07T10:59:59Z"), 10)).isEmpty();
        assertThat(once.boundaries(t("2026-12-07T10:00:00Z"), t("2026-12-07T11:00:00Z"), 10)).extracting(FreezeRecord.Boundary::started)
                .containsExactly(false);
        assertThat(once.boundaries(t("2026-12-07T11:00:00Z"), t("2026-12-07T12:00:00Z"), 10)).as("announced already").isEmpty();
        assertThat(new FreezeRecord("a", "r", t("2026-12-07T10:00:00Z"), null).boundaries(t("2026-12-07T10:00:00Z"), t("2027-01-01T00:00:00Z"), 10))
                .as("until thawed").isEmpty();
    }
}
