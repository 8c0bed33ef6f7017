package io.mesh.freeze;

import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.FreezeRecord;
import io.mesh.wire.Json;
import io.mesh.zk.MeshStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link FreezeGate#frozen} against a real ZooKeeper: the module's freeze and {@code _all} read in one round trip, a
 * missing node read as no freeze, a node that does not hold a freeze record read as frozen (fail safe).
 */
class FreezeGateZkTest {
    @RegisterExtension
    static final ZooKeeperExtension zk = new ZooKeeperExtension().resetBeforeEach();
    private static final Instant NOW = Instant.parse("2026-12-01T10:00:00Z");

    private FreezeGate gate() {
        return new FreezeGate(new MeshStore(zk.client(), zk.paths()), Clock.fixed(NOW, ZoneOffset.UTC));
    }

    private static void write(String path, byte[] data) throws Exception {
        zk.client().create().orSetData().creatingParentsIfNeeded().forPath(path, data);
    }

    @Test
    void eachNodeIsReadAndAMissingOneIsNoFreeze() throws Exception {
        assertThat(gate().frozen("store")).as("no /mesh/freezes at all").isEmpty();
        FreezeRecord own = new FreezeRecord("token", "release", NOW.minusSeconds(60), NOW.plusSeconds(3600));
        write(zk.paths().freeze("store"), Json.bytes(own));
        assertThat(gate().frozen("store")).contains(own);
        assertThat(gate().frozen("web")).as("another module's freeze").isEmpty();
        FreezeRecord all = new FreezeRecord("token", "weekend", NOW.minusSeconds(60), NOW.plusSeconds(7200));
        write(zk.paths().freezeAll(), Json.bytes(all));
        assertThat(gate().frozen("web")).contains(all);
        assertThat(gate().frozen("store")).as("the one that ends later").contains(all);
    }

    @Test
    void aNodeThatHoldsNoFreezeRecordFreezes() throws Exception {
        write(zk.paths().freeze("store"), "not json".getBytes(StandardCharsets.UTF_8));
        assertThat(gate().frozen("store")).contains(FreezeRecord.unreadable());
    }
}
