package io.mesh.apply;

import io.mesh.freeze.FreezeGate;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.FreezeRecord;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.WindowRecord;
import io.mesh.zk.MeshStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link LockedRead} against a real ZooKeeper: what the apply reads under the lock, in one {@code multi}, is what the
 * separate reads it replaces gave: the held nodes in force (an unreadable one still holds, an expired operator hold
 * does not), the freeze in force, the module's window node; and nothing there reads as nothing.
 */
class LockedReadTest {
    @RegisterExtension
    static final ZooKeeperExtension zk = new ZooKeeperExtension().resetBeforeEach();
    private static final Instant NOW = Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS);

    private LockedRead read(String host, String module) throws Exception {
        MeshStore store = new MeshStore(zk.client(), zk.paths());
        return LockedRead.read(store, new FreezeGate(store, Clock.fixed(NOW, ZoneOffset.UTC)), host, module, NOW);
    }

    private static void write(String path, byte[] data) throws Exception {
        zk.client().create().orSetData().creatingParentsIfNeeded().forPath(path, data);
    }

    @Test
    void nothingThereReadsAsNothing() throws Exception {
        LockedRead r = read("h1", "store");
        assertThat(r.held()).isEmpty();
        assertThat(r.frozen()).isEmpty();
        assertThat(r.window()).isNull();
    }

    @Test
    void heldNodesFreezesAndTheWindowNodeAreReadAsTheirOwnReadersReadThem() throws Exception {
        ProcessRef by = new ProcessRef(42, "mesh-agent run");
        HeldRecord window = new HeldRecord("h1", "store", "store-db", "c1", "nightly", "w-1", NOW.minusSeconds(5), by, null);
        write(zk.paths().held("h1", "store-db"), Json.bytes(window));
        HeldRecord expired = HeldRecord.operator("h1", "store", "store-web", "c2", by,
                new HeldRecord.OperatorHold("ops", "disk", NOW.minusSeconds(600), NOW.minusSeconds(1), null, null));
        write(zk.paths().held("h1", "store-web"), Json.bytes(expired));
        HeldRecord operator = HeldRecord.operator("h1", "web", "web-app", "c3", by,
                new HeldRecord.OperatorHold("ops", "disk", NOW.minusSeconds(600), NOW.plusSeconds(600), null, null));
        write(zk.paths().held("h1", "web-app"), Json.bytes(operator));
        write(zk.paths().held("h1", "web-side"), "not json".getBytes(StandardCharsets.UTF_8));
        write(zk.paths().held("h2", "store-db"), Json.bytes(window)); // another host's
        FreezeRecord all = new FreezeRecord("token", "weekend", NOW.minusSeconds(60), NOW.plusSeconds(7200));
        write(zk.paths().freezeAll(), Json.bytes(all));
        WindowRecord open = new WindowRecord("h1", "store", "nightly", "w-1", NOW.minusSeconds(5), List.of("store-db"), by);
        write(zk.paths().window("h1", "store"), Json.bytes(open));

        LockedRead r = read("h1", "store");
        assertThat(r.held()).containsOnlyKeys("store-db", "web-app", "web-side");
        assertThat(r.held().get("store-db")).isEqualTo(window);
        assertThat(r.held().get("web-app")).isEqualTo(operator);
        assertThat(r.held().get("web-side")).as("unreadable: still held").isEqualTo(HeldRecord.unreadable("h1", "web-side"));
        assertThat(r.frozen()).contains(all);
        assertThat(r.window()).isEqualTo(open);

        assertThat(read("h1", "web").window()).as("another module's window node").isNull();
    }
}
