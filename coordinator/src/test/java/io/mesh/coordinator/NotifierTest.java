package io.mesh.coordinator;

import io.mesh.curator.EventOutbox;
import io.mesh.curator.MeshZk;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.EventType;
import io.mesh.wire.MeshEvent;
import io.mesh.wire.Times;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The webhooks' sender (decision 34) on a real ZooKeeper server with real HTTP receivers: two coordinators' notifiers,
 * each with its own client and session; events written into the outbox as hosts write them ({@link EventOutbox}).
 */
class NotifierTest {
    @RegisterExtension
    static final ZooKeeperExtension zk = new ZooKeeperExtension().resetBeforeEach();

    @TempDir
    Path dir;

    private final List<AutoCloseable> closing = new ArrayList<>();

    @AfterEach
    void closeAll() {
        for (int i = closing.size() - 1; i >= 0; i--) {
            try {
                closing.get(i).close();
            } catch (Exception ignored) {
                // already closed by the test
            }
        }
    }

    private static final Notifier.Timing FAST = new Notifier.Timing(Duration.ofHours(24), Duration.ofMillis(100), Duration.ofMillis(400), Duration.ofMillis(100));

    private <T extends AutoCloseable> T closed(T c) {
        closing.add(c);
        return c;
    }

    private CuratorFramework coordinatorClient() throws Exception {
        return closed(MeshZk.connect(zk.connect(), Duration.ofSeconds(20), null, zk.paths()));
    }

    private Notifier notifier(CuratorFramework client, NotifyConfig config, Notifier.Timing timing) throws Exception {
        Notifier n = closed(new Notifier(client, zk.paths(), config, timing, Clock.systemUTC()));
        n.start();
        return n;
    }

    private WebhookSecret secret(String name) throws Exception {
        Path f = dir.resolve(name + ".secret");
        Files.writeString(f, "secret-of-" + name + "\n");
        return WebhookSecret.fromFile(f);
    }

    private static Webhook webhook(String name, WebhookReceiver r, WebhookSecret secret, EventType... types) {
        return new Webhook(name, java.net.URI.create(r.url()), secret, Set.copyOf(Arrays.asList(types)), NotifyFormat.JSON);
    }

    private static MeshEvent window(EventType type, String host, String module, int n) {
        return MeshEvent.of(type, Times.now(), host, module).withWindow("gc", "w-" + n);
    }

    /** @return each written id's module, in the order written */
    private static Map<String, List<String>> byModule(List<String[]> written) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        for (String[] w : written) out.computeIfAbsent(w[1], k -> new ArrayList<>()).add(w[0]);
        return out;
    }

    @Test
    void everyEventArrivesSignedWhenTheLeaderIsKilledMidStream() throws Exception {
        WebhookSecret s = secret("ops");
        WebhookReceiver r = closed(new WebhookReceiver(s).start());
        r.holdNth(15); // in flight when the leader is killed: its 2xx comes too late to be recorded
        NotifyConfig config = new NotifyConfig(List.of(webhook("ops", r, s, EventType.WINDOW_STARTED, EventType.WINDOW_ENDED)));
        CuratorFramework c1 = coordinatorClient();
        Notifier first = notifier(c1, config, FAST);
        await().atMost(Duration.ofSeconds(15)).until(first::leading);
        Notifier second = notifier(coordinatorClient(), config, FAST);
        assertThat(second.leading()).isFalse();

        EventOutbox a = closed(new EventOutbox(zk.client(), zk.paths(), "host-a"));
        EventOutbox b = closed(new EventOutbox(zk.client(), zk.paths(), "host-b"));
        List<String[]> written = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            EventOutbox out = i % 2 == 0 ? a : b;
            String module = "m" + (i % 3);
            String id = out.write(window(i % 4 < 2 ? EventType.WINDOW_STARTED : EventType.WINDOW_ENDED, i % 2 == 0 ? "host-a" : "host-b", module, i));
            written.add(new String[] {id, module});
            Thread.sleep(20); // times differ: the order of time, then id, is the order written
            if (i == 25) {
                assertThat(r.held.await(10, java.util.concurrent.TimeUnit.SECONDS)).as("the 15th POST arrived").isTrue();
                String inFlight = r.got().get(14).id();
                c1.close(); // the leader is killed mid-stream, one POST in flight: its session ends, the other leads
                await().atMost(Duration.ofSeconds(15)).until(() -> r.got().stream().filter(g -> g.id().equals(inFlight)).count() == 2);
                r.release(); // the killed leader's POST is answered now: too late to record it
            }
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> r.distinctIds() == 60);
        assertThat(second.leading()).isTrue();
        assertThat(first.leading()).isFalse();

        List<WebhookReceiver.Got> got = r.got();
        assertThat(got).allMatch(WebhookReceiver.Got::signed, "signature verifies");
        Map<String, Set<String>> bodies = got.stream().collect(Collectors.groupingBy(WebhookReceiver.Got::id,
                Collectors.mapping(g -> new String(g.body()), Collectors.toSet())));
        assertThat(bodies).as("a duplicate carries the same id and body").allSatisfy((id, bs) -> assertThat(bs).hasSize(1));
        assertThat(bodies.keySet()).containsExactlyInAnyOrderElementsOf(written.stream().map(w -> w[0]).toList());
        assertThat(r.firstArrivalsByModule()).as("in order per module").isEqualTo(byModule(written));
        // Delivered to every webhook that wants them: deleted from the outbox, delivery nodes with them.
        ZkPaths p = zk.paths();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(zk.client().getChildren().forPath(p.events("host-a"))).isEmpty();
            assertThat(zk.client().getChildren().forPath(p.events("host-b"))).isEmpty();
            assertThat(second.pending()).isZero();
        });
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(delivered(p, "ops")).isZero());
        assertThat(got.size()).as("the POST in flight at the kill was sent again by the new leader").isGreaterThan(60);
    }

    /** @return delivery nodes left under {@code /mesh/notify/<webhook>} */
    private int delivered(ZkPaths p, String webhook) throws Exception {
        if (zk.client().checkExists().forPath(p.notifications(webhook)) == null) return 0;
        int n = 0;
        for (String writer : zk.client().getChildren().forPath(p.notifications(webhook))) {
            try {
                n += zk.client().getChildren().forPath(p.notifications(webhook) + "/" + writer).size();
            } catch (org.apache.zookeeper.KeeperException.NoNodeException gone) {
                // a container node ZooKeeper removed
            }
        }
        return n;
    }

    @Test
    void aReceiverDownThenUpGetsTheEventsAfterwardsInOrderPerModuleAndBlocksNoOtherWebhook() throws Exception {
        WebhookSecret s = secret("ops");
        WebhookReceiver down = closed(new WebhookReceiver(s).start());
        WebhookReceiver up = closed(new WebhookReceiver(s).start());
        down.stop();
        NotifyConfig config = new NotifyConfig(List.of(webhook("down", down, s, EventType.WINDOW_FAILED, EventType.WINDOW_SKIPPED),
                webhook("up", up, s, EventType.WINDOW_FAILED)));
        Notifier n = notifier(coordinatorClient(), config, FAST);
        await().atMost(Duration.ofSeconds(15)).until(n::leading);
        EventOutbox a = closed(new EventOutbox(zk.client(), zk.paths(), "host-a"));
        List<String[]> written = new ArrayList<>();
        List<String> failed = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            EventType t = i % 3 == 0 ? EventType.WINDOW_SKIPPED : EventType.WINDOW_FAILED;
            String id = a.write(window(t, "host-a", i % 2 == 0 ? "store" : "web", i));
            written.add(new String[] {id, i % 2 == 0 ? "store" : "web"});
            if (t == EventType.WINDOW_FAILED) failed.add(id);
            Thread.sleep(5);
        }
        // The webhook that is up gets its events while the other's receiver is down.
        await().atMost(Duration.ofSeconds(10)).until(() -> up.distinctIds() == failed.size());
        assertThat(up.got()).extracting(WebhookReceiver.Got::id).containsExactlyInAnyOrderElementsOf(failed);
        assertThat(n.metrics()).contains("mesh_notify_pending 10").containsPattern("mesh_notify_failures_total\\{webhook=\"down\"} [1-9]");
        Thread.sleep(500);
        assertThat(down.got()).isEmpty();

        down.start(); // the same port
        await().atMost(Duration.ofSeconds(10)).until(() -> down.distinctIds() == 10);
        assertThat(down.firstArrivalsByModule()).isEqualTo(byModule(written));
        assertThat(down.got()).allMatch(WebhookReceiver.Got::signed);
        assertThat(down.got()).as("one leader all along: each event once").hasSize(10);
        assertThat(up.got()).hasSize(failed.size());
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(zk.client().getChildren().forPath(zk.paths().events("host-a"))).isEmpty();
            assertThat(n.metrics()).contains("mesh_notify_pending 0").contains("mesh_notify_sent_total{webhook=\"down\"} 10");
        });
    }

    @Test
    void anEventNotDeliveredWithinItsRetentionIsDroppedCountedAndDeleted() throws Exception {
        WebhookReceiver r = closed(new WebhookReceiver(null).start());
        r.stop();
        NotifyConfig config = new NotifyConfig(List.of(webhook("ops", r, null, EventType.HOLD_PLACED)));
        Notifier.Timing shortLived = new Notifier.Timing(Duration.ofSeconds(1), Duration.ofMillis(100), Duration.ofMillis(200), Duration.ofMillis(100));
        Notifier n = notifier(coordinatorClient(), config, shortLived);
        await().atMost(Duration.ofSeconds(15)).until(n::leading);
        EventOutbox coordinators = closed(new EventOutbox(zk.client(), zk.paths(), ZkPaths.COORDINATOR_EVENTS));
        coordinators.write(MeshEvent.of(EventType.HOLD_PLACED, Times.now(), "host-a", "store").withContainer("store-registry").withBy("ops", "disk"));
        // Nobody wants a window event here: it goes at once, and is no drop.
        coordinators.write(window(EventType.WINDOW_ENDED, "host-a", "store", 1));
        await().atMost(Duration.ofSeconds(10)).until(() -> n.droppedCount("ops") == 1);
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() ->
                assertThat(zk.client().getChildren().forPath(zk.paths().events(ZkPaths.COORDINATOR_EVENTS))).isEmpty());
        assertThat(n.metrics()).contains("mesh_notify_dropped_total{webhook=\"ops\"} 1");
    }

    @Test
    void slackFormatSendsTheEventAsOneSignedLineOfText() throws Exception {
        WebhookSecret s = secret("chat");
        WebhookReceiver r = closed(new WebhookReceiver(s).start());
        Webhook chat = new Webhook("chat", java.net.URI.create(r.url()), s, Set.of(EventType.FREEZE_STARTED), NotifyFormat.SLACK);
        Notifier n = notifier(coordinatorClient(), new NotifyConfig(List.of(chat)), FAST);
        await().atMost(Duration.ofSeconds(15)).until(n::leading);
        String id = closed(new EventOutbox(zk.client(), zk.paths(), ZkPaths.COORDINATOR_EVENTS))
                .write(MeshEvent.of(EventType.FREEZE_STARTED, Instant.parse("2026-12-07T09:00:00Z"), null, "_all").withBy("ops", "release day"));
        await().atMost(Duration.ofSeconds(10)).until(() -> r.got().size() == 1);
        WebhookReceiver.Got g = r.got().get(0);
        assertThat(g.signed()).isTrue();
        assertThat(new String(g.body())).isEqualTo("{\"text\":\"[mesh] freeze.started every module (by ops): release day [" + id + "]\"}");
    }
}
