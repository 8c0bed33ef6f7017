package io.mesh.testing;

import io.mesh.wire.Json;
import io.mesh.wire.MeshEvent;

import java.util.ArrayList;
import java.util.List;

/** The webhooks' outbox as tests read it (decision 34): a writer's events, oldest first, each with its id. */
public final class Outboxes {
    private Outboxes() {}

    /**
     * @param zk     the server
     * @param writer a host id, or {@code _coordinators}
     * @return its events in {@code /mesh/events/<writer>}, in sequence order; none when the parent is missing
     * @throws Exception from ZooKeeper
     */
    public static List<MeshEvent> events(ZooKeeperExtension zk, String writer) throws Exception {
        String parent = zk.paths().events(writer);
        List<MeshEvent> out = new ArrayList<>();
        if (zk.client().checkExists().forPath(parent) == null) return out;
        for (String n : zk.client().getChildren().forPath(parent).stream().sorted().toList()) {
            byte[] data;
            try {
                data = zk.client().getData().forPath(parent + "/" + n);
            } catch (org.apache.zookeeper.KeeperException.NoNodeException gone) {
                continue; // sent and deleted meanwhile
            }
            out.add(Json.read(data, MeshEvent.class).withId(writer + "/" + n));
        }
        return out;
    }
}
