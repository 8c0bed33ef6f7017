package io.mesh.hold;

import io.mesh.manifest.ManifestParser;
import io.mesh.manifest.ModuleSpec;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.DrainRecord;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.Times;
import io.mesh.zk.MeshStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A drain's holds are placed only from the drain node as read (decision 37): against a real ZooKeeper, a drain undrained
 * or replaced after it was read places nothing (a reviewer found a hold an apply made after the undrain, whose
 * {@code --stop} stopped its container again for good).
 */
class HostDrainsPlaceTest {
    @RegisterExtension
    static final ZooKeeperExtension zk = new ZooKeeperExtension().resetBeforeEach();
    private static final String HOST = "host-d";

    private ModuleSpec spec() throws Exception {
        return new ManifestParser().parse("module: dm\nhosts: [" + HOST + "]\ncontainers:\n  a1:\n    image: mesh-demo/busybox:1\n"
                + "  b2:\n    image: mesh-demo/busybox:1\n").get(0);
    }

    @Test
    void aDrainUndrainedOrReplacedSinceItWasReadPlacesNothing() throws Exception {
        MeshStore store = new MeshStore(zk.client(), zk.paths());
        DrainRecord d = new DrainRecord("ops", "kernel", Times.now(), null, Boolean.TRUE);
        zk.client().create().creatingParentsIfNeeded().forPath(zk.paths().drain(HOST), Json.bytes(d));
        int read = zk.client().checkExists().forPath(zk.paths().drain(HOST)).getVersion();
        ProcessRef me = new ProcessRef(1, "test");

        // replaced since it was read: nothing placed
        zk.client().setData().forPath(zk.paths().drain(HOST), Json.bytes(d));
        assertThat(HostDrains.place(store, HOST, me, spec(), d, read, Map.of())).isFalse();
        assertThat(store.held(HOST)).isEmpty();

        // as read: both held, marked drain
        int now = zk.client().checkExists().forPath(zk.paths().drain(HOST)).getVersion();
        assertThat(HostDrains.place(store, HOST, me, spec(), d, now, Map.of())).isTrue();
        Map<String, HeldRecord> held = store.held(HOST);
        assertThat(held).containsOnlyKeys("dm-a1", "dm-b2");
        assertThat(held.get("dm-a1").hold().ofDrain()).isTrue();
        assertThat(held.get("dm-a1").hold().stops()).isTrue();

        // undrained (the node and its holds gone, as mesh undrain does) after an apply read it: nothing placed
        zk.client().delete().forPath(zk.paths().held(HOST, "dm-a1"));
        zk.client().delete().forPath(zk.paths().held(HOST, "dm-b2"));
        zk.client().delete().forPath(zk.paths().drain(HOST));
        assertThat(HostDrains.place(store, HOST, me, spec(), d, now, Map.of())).isFalse();
        assertThat(store.held(HOST)).as("no hold left behind the undrain").isEmpty();
    }
}
