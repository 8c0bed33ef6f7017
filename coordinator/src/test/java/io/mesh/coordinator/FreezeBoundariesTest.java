package io.mesh.coordinator;

import io.mesh.curator.EventOutbox;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.EventType;
import io.mesh.wire.FreezeRecord;
import io.mesh.wire.Json;
import io.mesh.wire.MeshEvent;
import io.mesh.wire.Times;
import io.mesh.wire.ZkPaths;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link FreezeBoundaries} on a real ZooKeeper: a freeze reaching its {@code until} and each span of a recurring freeze
 * are announced once in the coordinators' outbox, however many coordinators look at once, and not again.
 */
class FreezeBoundariesTest {
    @RegisterExtension
    static final ZooKeeperExtension zk = new ZooKeeperExtension().resetBeforeEach();

    private FreezeBoundaries coordinator() {
        return new FreezeBoundaries(zk.client(), zk.paths(), new EventOutbox(zk.client(), zk.paths(), ZkPaths.COORDINATOR_EVENTS), Duration.ofSeconds(1));
    }

    private List<MeshEvent> events() throws Exception {
        String dir = zk.paths().events(ZkPaths.COORDINATOR_EVENTS);
        if (zk.client().checkExists().forPath(dir) == null) return List.of();
        List<MeshEvent> out = new ArrayList<>();
        for (String n : zk.client().getChildren().forPath(dir).stream().sorted().toList()) {
            out.add(Json.read(zk.client().getData().forPath(dir + "/" + n), MeshEvent.class));
        }
        return out;
    }

    /** Three coordinators looking at once announce each boundary once. */
    private int lookTogether() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            List<Callable<Integer>> looks = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                FreezeBoundaries c = coordinator();
                looks.add(c::look);
            }
            int wrote = 0;
            for (Future<Integer> f : pool.invokeAll(looks)) wrote += f.get();
            return wrote;
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aFreezesUntilIsAnnouncedOnceAsItsEnd() throws Exception {
        Instant now = Times.now();
        zk.client().create().creatingParentsIfNeeded().forPath(zk.paths().freeze("store"),
                Json.bytes(new FreezeRecord("alice", "release", now, now.plusMillis(800))));
        assertThat(lookTogether()).as("before its until").isZero();
        Thread.sleep(1_000);
        assertThat(lookTogether()).isEqualTo(1);
        assertThat(lookTogether()).as("announced already").isZero();
        assertThat(events()).singleElement().satisfies(e -> {
            assertThat(e.type()).isEqualTo(EventType.FREEZE_ENDED);
            assertThat(e.module()).isEqualTo("store");
            assertThat(e.reason()).contains("until passed", "release");
            assertThat(e.time()).isEqualTo(now.plusMillis(800));
        });
    }

    @Test
    void eachSpanOfARecurringFreezeIsAnnouncedOnceAndAFreezeWrittenAgainStartsAfresh() throws Exception {
        Instant since = Times.now().minusSeconds(150);
        FreezeRecord everyMinute = new FreezeRecord("bob", "nightly", since, null, "* * * * *", null, "30s");
        zk.client().create().creatingParentsIfNeeded().forPath(zk.paths().freeze(FreezeRecord.ALL), Json.bytes(everyMinute));
        List<FreezeRecord.Boundary> expected = everyMinute.boundaries(since, io.mesh.curator.ZkClock.earliest(), FreezeBoundaries.MOST);
        assertThat(expected).hasSizeGreaterThanOrEqualTo(4);
        int wrote = lookTogether();
        assertThat(wrote).isBetween(expected.size(), expected.size() + 1); // a boundary may pass between the two reads of the clock
        assertThat(lookTogether()).as("announced already").isLessThanOrEqualTo(1);
        List<MeshEvent> events = events();
        assertThat(events).extracting(MeshEvent::time).doesNotHaveDuplicates().isSorted();
        assertThat(events).extracting(MeshEvent::type).startsWith(expected.stream()
                .map(b -> b.started() ? EventType.FREEZE_STARTED : EventType.FREEZE_ENDED).toArray(EventType[]::new));
        MeshEvent start = events.stream().filter(e -> e.type() == EventType.FREEZE_STARTED).findFirst().orElseThrow();
        assertThat(start.until()).isEqualTo(start.time().plusSeconds(30));
        assertThat(start.module()).isEqualTo(FreezeRecord.ALL);

        // thawed and frozen again: the new freeze's own boundaries, from its write
        zk.client().delete().forPath(zk.paths().freeze(FreezeRecord.ALL));
        Instant again = Times.now();
        zk.client().create().forPath(zk.paths().freeze(FreezeRecord.ALL), Json.bytes(new FreezeRecord("bob", "again", again, again.plusMillis(500))));
        int before = events().size();
        Thread.sleep(700);
        assertThat(lookTogether()).isEqualTo(1);
        assertThat(events().subList(before, events().size())).extracting(MeshEvent::reason).singleElement().asString().contains("again");
    }

    /**
     * A rule changed in place (the node keeps its creation) announces its new spans from its write, not over the past;
     * a freeze written long ago announces at most the last hour's boundaries (a reviewer saw 86 000 events queued).
     */
    @Test
    void aRuleChangedInPlaceAnnouncesNothingOfThePastAndALongAgoFreezeOnlyItsLastHour() throws Exception {
        Instant now = Times.now();
        zk.client().create().creatingParentsIfNeeded().forPath(zk.paths().freeze("web"),
                Json.bytes(new FreezeRecord("alice", "short", now.minusSeconds(10_800), now.minusSeconds(10_000))));
        assertThat(lookTogether()).as("its until passed hours ago: before the last hour").isZero();
        zk.client().setData().forPath(zk.paths().freeze("web"),
                Json.bytes(new FreezeRecord("alice", "every ten minutes", now, null, "*/10 * * * *", null, "5m")));
        lookTogether();
        assertThat(events()).as("nothing of the new rule before its write").allSatisfy(e -> assertThat(e.time()).isAfterOrEqualTo(now));

        zk.client().create().forPath(zk.paths().freeze("db"),
                Json.bytes(new FreezeRecord("bob", "every minute for a month", now.minus(Duration.ofDays(30)), null, "* * * * *", null, "30s")));
        int wrote = 0;
        for (int i = 0; i < 10; i++) wrote += lookTogether();
        assertThat(wrote).as("the last hour's spans: 60 starts and 60 ends at most").isBetween(100, 122);
        assertThat(events()).filteredOn(e -> "db".equals(e.module()))
                .allSatisfy(e -> assertThat(e.time()).isAfter(now.minus(FreezeBoundaries.CATCH_UP).minusSeconds(5)));
    }
}
