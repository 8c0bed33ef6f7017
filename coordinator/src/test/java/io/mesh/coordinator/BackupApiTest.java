package io.mesh.coordinator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mesh.wire.AgentRecord;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.Times;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code GET /v1/backup} and {@code POST /v1/restore} against a real ZooKeeper server (SPEC.md "Running it for real";
 * docs/decisions/0039-backups-and-an-empty-ensemble.md): an admin's token only; what a backup holds and leaves out; a
 * restore into an emptied tree gives back the same nodes and the sequences go on after them; a document that is cut
 * short, edited, from a newer mesh or of an unknown format, or a restore into a tree that is not empty without
 * {@code force}, is refused naming the fix, and nothing is written.
 */
class BackupApiTest {
    @RegisterExtension
    static final CoordinatorFixture fx = new CoordinatorFixture();
    private static final Map<String, String> ADMIN = Map.of("Authorization", "Bearer tok-ops-1");

    private CoordinatorExtension.Answer restore(byte[] doc, String query) throws Exception {
        return fx.api.post("/v1/restore" + query, doc, ADMIN);
    }

    private List<String> paths(JsonNode doc) {
        List<String> out = new ArrayList<>();
        doc.path("nodes").forEach(n -> out.add(n.path("path").asText()));
        return out;
    }

    private JsonNode backup() throws Exception {
        CoordinatorExtension.Answer b = fx.api.method("GET", "/v1/backup", new byte[0], ADMIN);
        assertThat(b.status()).as(b.body()).isEqualTo(200);
        return b.json();
    }

    /** @return the document with its nodes edited by {@code edit} and summed again, as a hand that knew the sum would */
    private static byte[] resummed(JsonNode doc, java.util.function.Consumer<ArrayNode> edit) throws Exception {
        ObjectNode d = doc.deepCopy();
        edit.accept((ArrayNode) d.get("nodes"));
        List<BackupDocument.Node> nodes = new ArrayList<>();
        d.get("nodes").forEach(n -> nodes.add(new BackupDocument.Node(n.path("path").asText(), n.path("data").asText())));
        d.put("sha256", BackupDocument.sum(nodes));
        return Json.MAPPER.writeValueAsBytes(d);
    }

    @Test
    void aBackupRestoresIntoAnEmptiedTreeAndBadDocumentsWriteNothing(@TempDir Path dir) throws Exception {
        Path tokens = dir.resolve("tokens");
        Files.writeString(tokens, "ops:tok-ops-1\nci:tok-ci-1\n");
        fx.api.restart(BearerToken.fromFile(tokens).withAdmins(List.of("ops")), null);
        var c = fx.zk.client();
        var paths = fx.zk.paths();
        for (String rev : List.of("r1", "r2")) {
            CoordinatorExtension.Answer p = fx.api.post("/v1/pushes", (Manifests.TWO + (rev.equals("r2") ? "# r2\n" : "")).getBytes(StandardCharsets.UTF_8),
                    Map.of("Authorization", "Bearer tok-ci-1", "X-Mesh-Revision", rev));
            assertThat(p.status()).as(p.body()).isEqualTo(202);
        }
        c.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL)
                .forPath(paths.agent("host-a"), Json.bytes(new AgentRecord("host-a", "0.1.0", 4242, Times.now())));
        CoordinatorExtension.Answer h = fx.api.post("/v1/holds", "{\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"disk swap\"}"
                .getBytes(StandardCharsets.UTF_8), Map.of("Authorization", "Bearer tok-ci-1"));
        assertThat(h.status()).as(h.body()).isEqualTo(201);
        // A window's held node: ephemeral, a live session's; never in a backup
        c.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(paths.held("host-a", "web-web"),
                Json.bytes(new HeldRecord("host-a", "web", "web-web", "0123abcd", "nightly", "w-1", Times.now(), ProcessRef.current("test"))));
        c.create().creatingParentsIfNeeded().forPath(paths.freeze("web"), "{\"by\":\"alice\",\"reason\":\"launch\",\"since\":\"2026-12-07T10:00:00Z\"}".getBytes(StandardCharsets.UTF_8));
        c.create().creatingParentsIfNeeded().forPath(paths.drain("host-b"), "{\"by\":\"bob\",\"reason\":\"kernel\",\"since\":\"2026-12-07T10:00:00Z\"}".getBytes(StandardCharsets.UTF_8));

        // An admin's token only
        assertThat(fx.api.get("/v1/backup").status()).isEqualTo(401);
        CoordinatorExtension.Answer ci = fx.api.method("GET", "/v1/backup", new byte[0], Map.of("Authorization", "Bearer tok-ci-1"));
        assertThat(ci.status()).isEqualTo(403);
        assertThat(ci.body()).contains("not an admin's");

        JsonNode doc = backup();
        assertThat(doc.path("format").asText()).isEqualTo("mesh-backup");
        assertThat(doc.path("version").asInt()).isEqualTo(1);
        assertThat(paths(doc)).contains("/desired/store", "/desired/web", "/pushes/push-0000000000", "/pushes/push-0000000001",
                "/held/host-a/store-registry", "/freezes/web", "/drains/host-b");
        assertThat(paths(doc)).anyMatch(p -> p.startsWith("/history/web/rev-"));
        assertThat(paths(doc)).as("a window's held node, agents and reports are not backed up")
                .doesNotContain("/held/host-a/web-web").noneMatch(p -> p.startsWith("/agents") || p.startsWith("/reports"));
        byte[] bytes = Json.MAPPER.writeValueAsBytes(doc);

        // Refused, nothing written: into a tree that is not empty; cut short; edited; newer; unknown format; a path outside
        List<String> before = paths(backup());
        CoordinatorExtension.Answer full = restore(bytes, "");
        assertThat(full.status()).as(full.body()).isEqualTo(409);
        assertThat(full.body()).contains("not empty", "--force", "/desired/");
        CoordinatorExtension.Answer cut = restore(java.util.Arrays.copyOf(bytes, bytes.length / 2), "?force=true");
        assertThat(cut.status()).isEqualTo(400);
        assertThat(cut.body()).contains("not whole JSON", "take the backup again");
        ObjectNode edited = doc.deepCopy();
        ((ObjectNode) edited.get("nodes").get(0)).put("data", "{\"edited\":true}");
        CoordinatorExtension.Answer sum = restore(Json.MAPPER.writeValueAsBytes(edited), "?force=true");
        assertThat(sum.status()).isEqualTo(400);
        assertThat(sum.body()).contains("sha256", "edited or damaged");
        ObjectNode newer = doc.deepCopy();
        newer.put("mesh", "9.0.0");
        CoordinatorExtension.Answer fromNewer = restore(Json.MAPPER.writeValueAsBytes(newer), "?force=true");
        assertThat(fromNewer.status()).isEqualTo(400);
        assertThat(fromNewer.body()).contains("mesh 9.0.0", "newer than this coordinator", "mesh 9.0.0 or newer");
        ObjectNode format2 = doc.deepCopy();
        format2.put("version", 2);
        CoordinatorExtension.Answer v2 = restore(Json.MAPPER.writeValueAsBytes(format2), "?force=true");
        assertThat(v2.status()).isEqualTo(400);
        assertThat(v2.body()).contains("version 2", "reads up to version 1");
        CoordinatorExtension.Answer outside = restore(resummed(doc, n -> n.addObject().put("path", "/agents/host-z").put("data", "{}")), "?force=true");
        assertThat(outside.status()).isEqualTo(400);
        assertThat(outside.body()).contains("/agents/host-z is outside what a backup holds");
        CoordinatorExtension.Answer orphan = restore(resummed(doc, n -> n.addObject().put("path", "/held/host-z/store-registry").put("data", "{}")), "?force=true");
        assertThat(orphan.status()).isEqualTo(400);
        assertThat(orphan.body()).contains("/held/host-z/store-registry comes before its parent");
        CoordinatorExtension.Answer far = restore(resummed(doc, n -> n.addObject().put("path", "/pushes/push-2147483647").put("data", "{}")), "?force=true");
        assertThat(far.status()).isEqualTo(400);
        assertThat(far.body()).contains("/pushes/push-2147483647 has a sequence number above");
        CoordinatorExtension.Answer big = restore(resummed(doc, n -> n.addObject().put("path", "/freezes/huge").put("data", "x".repeat(1_000_001))), "?force=true");
        assertThat(big.status()).isEqualTo(400);
        assertThat(big.body()).contains("/freezes/huge holds more than");
        // content agents act on is read as they read it: a sum anyone can compute again proves nothing of it
        CoordinatorExtension.Answer garbage = restore(resummed(doc, n -> n.addObject().put("path", "/desired/garbage").put("data", "not json {")),
                "?force=true");
        assertThat(garbage.status()).isEqualTo(400);
        assertThat(garbage.body()).contains("/desired/garbage is not what mesh writes there");
        CoordinatorExtension.Answer otherModule = restore(resummed(doc, n -> {
            JsonNode first = null;
            for (JsonNode x : n) if (x.path("path").asText().startsWith("/desired/")) first = x;
            n.addObject().put("path", "/desired/other").put("data", first.path("data").asText());
        }), "?force=true");
        assertThat(otherModule.status()).isEqualTo(400);
        assertThat(otherModule.body()).contains("/desired/other is not a desired record of module other");
        CoordinatorExtension.Answer notAdmin = fx.api.post("/v1/restore?force=true", bytes, Map.of("Authorization", "Bearer tok-ci-1"));
        assertThat(notAdmin.status()).isEqualTo(403);
        assertThat(c.checkExists().forPath(paths.root() + "/agents/host-z")).isNull();
        assertThat(c.checkExists().forPath(paths.root() + "/held/host-z")).isNull();
        assertThat(c.checkExists().forPath(paths.root() + "/freezes/huge")).isNull();
        assertThat(c.checkExists().forPath(paths.root() + "/desired/garbage")).isNull();
        assertThat(c.checkExists().forPath(paths.root() + "/desired/other")).isNull();
        assertThat(paths(backup())).as("nothing written by a refused restore").isEqualTo(before);

        // The tree emptied (as an ensemble that lost its data), then restored: the same nodes, byte for byte
        for (String s : BackupDocument.SUBTREES) c.delete().deletingChildrenIfNeeded().forPath(paths.root() + s);
        CoordinatorExtension.Answer r = restore(bytes, "");
        assertThat(r.status()).as(r.body()).isEqualTo(200);
        assertThat(r.json().path("desired").asInt()).isEqualTo(2);
        assertThat(r.json().path("holds").asInt()).isEqualTo(1);
        JsonNode again = backup();
        assertThat(again.path("nodes")).isEqualTo(doc.path("nodes"));
        assertThat(again.path("sha256").asText()).isEqualTo(doc.path("sha256").asText());

        // Sequences go on after the restored ones: the next push and history node take new names
        CoordinatorExtension.Answer p3 = fx.api.post("/v1/pushes", (Manifests.TWO + "# r3\n").getBytes(StandardCharsets.UTF_8),
                Map.of("Authorization", "Bearer tok-ci-1", "X-Mesh-Revision", "r3"));
        assertThat(p3.status()).as(p3.body()).isEqualTo(202);
        assertThat(p3.json().path("push").asText()).isEqualTo("push-0000000002");
        List<String> revs = c.getChildren().forPath(paths.history("web")).stream().sorted().toList();
        assertThat(revs).hasSize(3).doesNotHaveDuplicates();

        // --force over a tree that holds them: each node as the backup says, the newer ones left
        CoordinatorExtension.Answer forced = restore(bytes, "?force=true");
        assertThat(forced.status()).as(forced.body()).isEqualTo(200);
        assertThat(forced.json().path("updated").asInt()).as("the desired nodes and /pushes went back").isPositive();
        assertThat(c.checkExists().forPath(paths.push("push-0000000002"))).as("a node the backup does not hold stays").isNotNull();
    }
}
