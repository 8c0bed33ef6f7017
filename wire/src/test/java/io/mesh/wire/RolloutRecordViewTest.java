package io.mesh.wire;

import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.RepetitionInfo;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link RolloutRecord}: lists in order are kept, others sorted and made unique; the view equals one derived by sorting everything. */
class RolloutRecordViewTest {
    static final Instant T = Instant.parse("2026-12-01T03:30:00Z");

    private static RolloutRecord rec(List<String> hosts, List<String> done, List<String> waiting) {
        return new RolloutRecord("m", "push-0000000002", "r2", RolloutState.ROLLING, List.of(), done, List.of(), waiting, List.of(), T,
                hosts, 2, null, null, "by", null, null, null, T, null, null, null, null, null);
    }

    @Test
    void unsortedOrDuplicateListsAreSortedAndMadeUnique() {
        RolloutRecord r = rec(Arrays.asList("h2", "h1", "h2"), List.of("h1", "h1"), new ArrayList<>(List.of("b", "a")));
        assertThat(r.hosts()).containsExactly("h1", "h2");
        assertThat(r.done()).containsExactly("h1");
        assertThat(r.waiting()).containsExactly("a", "b");
        assertThat(r.names("a")).isTrue();
        assertThat(r.names("h2")).isTrue();
        assertThat(r.names("h3")).isFalse();
        assertThat(r.names("")).isFalse();
        List<String> mutable = new ArrayList<>(List.of("a", "b"));
        RolloutRecord s = rec(mutable, List.of(), List.of());
        mutable.add("0");
        assertThat(s.hosts()).as("a copy, not the caller's list").containsExactly("a", "b");
    }

    /** Random records and children (seeded by repetition): the view equals one derived by sorting everything, as before 6ce443e. */
    @RepeatedTest(200)
    void theViewMatchesTheSortingReference(RepetitionInfo repetition) {
        Random rnd = new Random(repetition.getCurrentRepetition()); // a failing repetition is the same on a rerun
        List<String> pool = new ArrayList<>();
        for (int i = 0; i < 12; i++) pool.add("h" + (char) ('a' + rnd.nextInt(26)) + i % 3);
        List<String> hosts = new ArrayList<>(pool.subList(0, rnd.nextInt(pool.size())));
        Collections.shuffle(hosts, rnd);
        RolloutRecord r = rec(hosts, List.of(), hosts);
        List<RolloutHostRecord> children = new ArrayList<>();
        RolloutHostState[] states = RolloutHostState.values();
        for (String h : pool) {
            if (rnd.nextInt(3) == 0) continue;
            String push = rnd.nextInt(5) == 0 ? "push-0000000001" : r.push();
            children.add(RolloutHostRecord.waiting(h, push, T).moved(push, states[rnd.nextInt(states.length)], "e", T.plusSeconds(rnd.nextInt(9))));
        }
        Collections.shuffle(children, rnd);
        RolloutRecord v = r.view(children);
        if (children.isEmpty() && !r.hosts().isEmpty()) return;
        // reference, written apart from the view's loop: every host sorted, grouped by its child's state
        Map<String, RolloutHostRecord> byHost = new HashMap<>();
        for (RolloutHostRecord c : children) if (r.push().equals(c.push())) byHost.put(c.host(), c);
        TreeSet<String> all = new TreeSet<>(hosts);
        all.addAll(byHost.keySet());
        Map<RolloutHostState, List<String>> listed = all.stream().collect(Collectors.groupingBy(h -> listedAs(byHost.get(h))));
        assertThat(v.done()).isEqualTo(listed.getOrDefault(RolloutHostState.DONE, List.of()));
        assertThat(v.applying()).isEqualTo(listed.getOrDefault(RolloutHostState.APPLYING, List.of()));
        assertThat(v.waiting()).isEqualTo(listed.getOrDefault(RolloutHostState.WAITING, List.of()));
        assertThat(v.failed()).isEqualTo(listed.getOrDefault(RolloutHostState.FAILED, List.of()));
        assertThat(v.drainedHosts()).isEqualTo(listed.getOrDefault(RolloutHostState.DRAINED, List.of()));
        Set<String> seen = new HashSet<>();
        for (List<String> l : List.of(v.done(), v.applying(), v.waiting(), v.failed(), v.drainedHosts())) {
            for (int i = 1; i < l.size(); i++) assertThat(l.get(i - 1).compareTo(l.get(i))).isNegative();
            for (String h : l) assertThat(seen.add(h)).as("%s in one list only", h).isTrue();
        }
        TreeSet<String> named = new TreeSet<>(v.hosts());
        for (List<String> l : List.of(v.done(), v.applying(), v.waiting(), v.failed(), v.drainedHosts())) named.addAll(l);
        for (String h : pool) assertThat(v.names(h)).as(h).isEqualTo(named.contains(h));
        assertThat(v.names("zz")).isFalse();
    }

    /** The list a host is in by its child of the push: waiting without one, or with a state no list is for. */
    private static RolloutHostState listedAs(RolloutHostRecord child) {
        RolloutHostState s = child == null ? null : child.state();
        return EnumSet.of(RolloutHostState.DONE, RolloutHostState.APPLYING, RolloutHostState.FAILED, RolloutHostState.DRAINED).contains(s)
                ? s : RolloutHostState.WAITING;
    }
}
