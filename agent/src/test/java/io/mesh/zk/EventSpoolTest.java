package io.mesh.zk;

import io.mesh.curator.EventOutbox;
import io.mesh.curator.MeshZk;
import io.mesh.testing.Outboxes;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.EventType;
import io.mesh.wire.Json;
import io.mesh.wire.MeshEvent;
import io.mesh.wire.Times;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A host's events while ZooKeeper is down (decision 34): posted without waiting, kept in {@code <state-dir>/events}
 * on disk, and written, in the order posted, before the next event once ZooKeeper answers; a spooled event a process
 * claimed and then died with is written by another. Real ZooKeeper server, stopped and started again.
 */
class EventSpoolTest {
    private static final String HOST = "spool-a";
    @RegisterExtension
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @TempDir
    Path stateDir;

    private static MeshEvent window(EventType type, String window) {
        return MeshEvent.of(type, Times.now(), HOST, "store").withWindow("gc", window);
    }

    private long spooled(Path dir) throws Exception {
        if (!Files.isDirectory(dir)) return 0;
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().contains(".json")).count();
        }
    }

    @Test
    void eventsPostedWhileZooKeeperIsDownAreKeptOnDiskAndWrittenInOrderOnceItAnswers() throws Exception {
        CuratorFramework client = MeshZk.connect(zk.connect(), Duration.ofSeconds(20), null, zk.paths());
        Path spool = EventOutbox.spoolOf(stateDir);
        try (client; EventOutbox outbox = new EventOutbox(client, zk.paths(), HOST).spoolIn(spool)) {
            outbox.write(window(EventType.WINDOW_ENDED, "w-0"));

            zk.server().stop();
            await().atMost(Duration.ofSeconds(10)).until(() -> !client.getZookeeperClient().isConnected());
            long before = System.nanoTime();
            outbox.post(window(EventType.WINDOW_STARTED, "w-1"));
            outbox.post(window(EventType.WINDOW_ENDED, "w-1"));
            assertThat(Duration.ofNanos(System.nanoTime() - before)).as("posting never waits").isLessThan(Duration.ofSeconds(1));
            await().atMost(Duration.ofSeconds(10)).until(() -> spooled(spool) == 2);

            zk.server().restart();
            await().atMost(Duration.ofSeconds(30)).until(() -> client.getZookeeperClient().isConnected());
            outbox.post(window(EventType.WINDOW_STARTED, "w-2"));
            await().atMost(Duration.ofSeconds(20)).until(() -> Outboxes.events(zk, HOST).size() == 4);
            List<MeshEvent> events = Outboxes.events(zk, HOST);
            assertThat(events).extracting(e -> e.type() + " " + e.window()).containsExactly(
                    "window.ended w-0", "window.started w-1", "window.ended w-1", "window.started w-2");
            assertThat(spooled(spool)).isZero();

            // A spooled event claimed by a process that died before it wrote it: the next drain takes it over.
            Process gone = new ProcessBuilder("true").start();
            gone.waitFor();
            Files.write(spool.resolve("0000000000001-orphan.json." + gone.pid()), Json.bytes(window(EventType.WINDOW_FAILED, "w-3")));
            outbox.drainSoon();
            await().atMost(Duration.ofSeconds(10)).until(() -> Outboxes.events(zk, HOST).size() == 5);
            assertThat(Outboxes.events(zk, HOST).get(4).window()).isEqualTo("w-3");
            assertThat(spooled(spool)).isZero();
        }
    }
}
