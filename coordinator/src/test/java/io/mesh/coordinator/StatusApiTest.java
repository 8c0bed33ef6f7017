package io.mesh.coordinator;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.wire.AgentRecord;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.ContainerAction;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.WindowRecord;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Push status, held containers and hosts, derived from nodes the test writes as agents would. */
public class StatusApiTest {
    @RegisterExtension
    static final CoordinatorFixture fx = new CoordinatorFixture();

    static final Instant T0 = Instant.parse("2026-11-30T03:30:00Z");
    static final ApplyReport.WindowRef WINDOW = new ApplyReport.WindowRef("garbage-collect", "w-20261130T033000Z-3f2a", T0, List.of("store-registry"));

    public static ApplyReport report(String host, String module, String revision, String push, ApplyOutcome outcome, String error) {
        return new ApplyReport(host, module, revision, push, outcome, T0, T0.plusSeconds(2),
                outcome == ApplyOutcome.DEFERRED ? WINDOW : null,
                List.of(new ApplyReport.ContainerResult("registry", module + "-registry",
                        outcome == ApplyOutcome.DEFERRED ? ContainerAction.HELD : ContainerAction.RECREATED, List.of("image: a -> b"), "3f2a")),
                error, null, null, null);
    }

    /** @return the push id of a push of {@link Manifests#store} for host-a, with that revision */
    private String pushStore(String revision) throws Exception {
        return fx.api.post("/v1/pushes", Manifests.store("[host-a]").getBytes(), java.util.Map.of("X-Mesh-Revision", revision)).json().get("push").asText();
    }

    /** @return the state of host-a's store in a push's status */
    private String storeState(String push) throws Exception {
        return target(fx.api.get("/v1/pushes/" + push).json(), "host-a", "store").get("state").asText();
    }

    /** This test's agent-side store (JUnit makes an instance per test): it carries each report into the next. */
    private io.mesh.zk.MeshStore agentStore;

    /** Writes a report as an agent does ({@code MeshStore}), and waits until the coordinator serves it. */
    private void served(ApplyReport r) throws Exception {
        if (agentStore == null) agentStore = new io.mesh.zk.MeshStore(fx.zk.client(), fx.zk.paths());
        agentStore.writeReport(r);
        fx.awaitServed(fx.zk.paths().report(r.host(), r.module()));
    }

    static void writeAgent(String host) throws Exception {
        fx.zk.client().create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL)
                .forPath(fx.zk.paths().agent(host), Json.bytes(new AgentRecord(host, "0.1.0", 4242, T0)));
        fx.awaitServed(fx.zk.paths().agent(host));
    }

    private JsonNode target(JsonNode view, String host, String module) {
        for (JsonNode t : view.get("targets")) {
            if (t.get("host").asText().equals(host) && t.get("module").asText().equals(module)) return t;
        }
        throw new AssertionError("no target " + host + "/" + module + " in " + view);
    }

    @Test
    void pushStatusFollowsReports() throws Exception {
        // push-0: store on host-a; push-1: store on host-a, web on host-a and host-b.
        assertThat(fx.api.push(Manifests.store("[host-a]")).status()).isEqualTo(202);
        String push = fx.api.post("/v1/pushes", Manifests.TWO.getBytes(), java.util.Map.of("X-Mesh-Revision", "r2")).json().get("push").asText();
        assertThat(push).isEqualTo("push-0000000001");

        JsonNode v = fx.api.get("/v1/pushes/" + push).json();
        assertThat(v.get("state").asText()).isEqualTo("pending");
        assertThat(v.get("done").asBoolean()).isFalse();
        assertThat(v.get("targets")).extracting(t -> t.get("host").asText() + "/" + t.get("module").asText() + "=" + t.get("state").asText())
                .containsExactly("host-a/store=pending", "host-a/web=pending", "host-b/web=pending");

        // An older push's report leaves it pending; this push's reports give their outcomes.
        fx.writeReport(report("host-a", "store", "r1", "push-0000000000", ApplyOutcome.APPLIED, null));
        fx.writeReport(report("host-a", "web", "r2", push, ApplyOutcome.DEFERRED, null));
        fx.writeReport(report("host-b", "web", "r2", push, ApplyOutcome.FAILED, "pull mesh-demo/busybox:1: not found"));
        v = fx.api.get("/v1/pushes/" + push).json();
        JsonNode store = target(v, "host-a", "store");
        assertThat(store.get("state").asText()).isEqualTo("pending");
        assertThat(store.get("push").asText()).isEqualTo("push-0000000000");
        JsonNode web = target(v, "host-a", "web");
        assertThat(web.get("state").asText()).isEqualTo("deferred");
        assertThat(web.at("/window/schedule").asText()).isEqualTo("garbage-collect");
        assertThat(web.at("/window/window").asText()).isEqualTo("w-20261130T033000Z-3f2a");
        assertThat(web.at("/window/since").asText()).isEqualTo("2026-11-30T03:30:00Z");
        assertThat(web.at("/containers/0/action").asText()).isEqualTo("held");
        JsonNode failed = target(v, "host-b", "web");
        assertThat(failed.get("state").asText()).isEqualTo("failed");
        assertThat(failed.get("error").asText()).contains("not found");
        assertThat(failed.get("revision").asText()).isEqualTo("r2");
        assertThat(failed.get("finishedAt").asText()).isEqualTo("2026-11-30T03:30:02Z");
        assertThat(v.get("state").asText()).isEqualTo("failed");
        assertThat(v.get("failed").asBoolean()).isTrue();
        assertThat(v.get("done").asBoolean()).isFalse();
        assertThat(v.at("/counts/pending").asInt()).isEqualTo(1);

        // A newer push's report supersedes this push there (it does not lend it its outcome); the rest applied -> done.
        fx.writeReport(report("host-a", "store", "r3", "push-0000000007", ApplyOutcome.APPLIED, null));
        fx.writeReport(report("host-a", "web", "r2", push, ApplyOutcome.APPLIED, null));
        fx.writeReport(report("host-b", "web", "r2", push, ApplyOutcome.APPLIED, null));
        v = fx.api.get("/v1/pushes/" + push).json();
        assertThat(v.get("state").asText()).isEqualTo("superseded");
        assertThat(v.get("done").asBoolean()).isTrue();
        assertThat(v.get("failed").asBoolean()).isFalse();
        assertThat(v.at("/counts/superseded").asInt()).isEqualTo(1);
        assertThat(v.at("/counts/applied").asInt()).isEqualTo(2);
        store = target(v, "host-a", "store");
        assertThat(store.get("state").asText()).isEqualTo("superseded");
        assertThat(store.get("supersededBy").asText()).isEqualTo("push-0000000007");
        assertThat(store.get("revision").asText()).isEqualTo("r3");
        assertThat(target(v, "host-a", "web").has("supersededBy")).isFalse();
        // The older push is done too: every report is of it or newer; a newer one runs there.
        JsonNode old = fx.api.get("/v1/pushes/push-0000000000").json();
        assertThat(old.get("state").asText()).isEqualTo("superseded");
        assertThat(old.get("done").asBoolean()).isTrue();
    }

    /**
     * Applied, then a newer push applied over it: the older still reads {@code applied}, since it ran there (SPEC.md:
     * superseded is a push replaced before it ran; decision 24). The agent's store carries what was applied.
     */
    @Test
    void anAppliedPushStaysAppliedAfterANewerOneAppliedOverIt() throws Exception {
        String p0 = pushStore("r1");
        String p1 = pushStore("r2");
        served(report("host-a", "store", "r1", p0, ApplyOutcome.APPLIED, null));
        assertThat(fx.api.get("/v1/pushes/" + p0).json().get("state").asText()).isEqualTo("applied");
        assertThat(fx.api.get("/v1/pushes/" + p1).json().get("state").asText()).isEqualTo("pending");

        served(report("host-a", "store", "r2", p1, ApplyOutcome.APPLIED, null));
        JsonNode v0 = fx.api.get("/v1/pushes/" + p0).json();
        JsonNode t = target(v0, "host-a", "store");
        assertThat(t.get("state").asText()).isEqualTo("applied");
        assertThat(t.has("supersededBy")).isFalse();
        assertThat(t.get("push").asText()).isEqualTo(p1);
        assertThat(v0.get("state").asText()).isEqualTo("applied");
        assertThat(v0.get("done").asBoolean()).isTrue();
        assertThat(v0.at("/counts/applied").asInt()).isEqualTo(1);
        assertThat(v0.at("/counts/superseded").asInt()).isZero();
        JsonNode v1 = fx.api.get("/v1/pushes/" + p1).json();
        assertThat(v1.get("state").asText()).isEqualTo("applied");
        assertThat(target(v1, "host-a", "store").has("supersededBy")).isFalse();
    }

    /**
     * A canary that applied a push and then went back to the previous revision (its rollout reverted, decision 13): the
     * push it left reads {@code failed} there, not {@code applied}, and still {@code failed} once a newer push lands
     * (it ran there: failure model row 83); the previous one, which runs there again, reads {@code applied}. (The
     * review's case for decision 24.)
     */
    @Test
    void aPushACanaryWentBackFromNeverReadsAppliedThere() throws Exception {
        String p0 = pushStore("r1");
        String p1 = pushStore("r2");
        served(report("host-a", "store", "r1", p0, ApplyOutcome.APPLIED, null));
        served(report("host-a", "store", "r2", p1, ApplyOutcome.APPLIED, null));
        assertThat(storeState(p1)).isEqualTo("applied");

        // As Applier writes it: the apply ran the kept revision (r1) again, reported against the push it left.
        served(report("host-a", "store", "r2", p1, ApplyOutcome.APPLIED, null)
                .withRollout(ApplyOutcome.FAILED, "rollout reverted").withKept(new io.mesh.wire.DesiredRecord("store", "r1", p0, null, null)));
        assertThat(storeState(p1)).isEqualTo("failed");
        assertThat(storeState(p0)).isEqualTo("applied");

        String p2 = pushStore("r3");
        served(report("host-a", "store", "r3", p2, ApplyOutcome.APPLIED, null));
        JsonNode t1 = target(fx.api.get("/v1/pushes/" + p1).json(), "host-a", "store");
        assertThat(t1.get("state").asText()).isEqualTo("failed");
        assertThat(t1.get("error").asText()).contains("rollout reverted");
        assertThat(t1.get("supersededBy").asText()).isEqualTo(p2);
        assertThat(storeState(p0)).isEqualTo("applied");
    }

    /**
     * A newer push deferred keeps {@code lastApplied}: the push it names reads {@code applied} (its spec runs there),
     * and so does an older one that ran there too; one that never ran reads {@code superseded} by the push that runs.
     */
    @Test
    void aNewerPushDeferredLeavesTheAppliedOnesAppliedAndOneThatNeverRanSupersededByWhatRuns() throws Exception {
        String p0 = pushStore("r1");
        String skipped = pushStore("r1b");
        String p1 = pushStore("r2");
        String p2 = pushStore("r3");
        served(report("host-a", "store", "r1", p0, ApplyOutcome.APPLIED, null));
        served(report("host-a", "store", "r2", p1, ApplyOutcome.APPLIED, null));
        served(report("host-a", "store", "r3", p2, ApplyOutcome.DEFERRED, null));

        JsonNode t1 = target(fx.api.get("/v1/pushes/" + p1).json(), "host-a", "store");
        assertThat(t1.get("state").asText()).isEqualTo("applied");
        assertThat(t1.has("supersededBy")).isFalse();
        assertThat(storeState(p0)).isEqualTo("applied");
        JsonNode ts = target(fx.api.get("/v1/pushes/" + skipped).json(), "host-a", "store");
        assertThat(ts.get("state").asText()).isEqualTo("superseded");
        assertThat(ts.get("supersededBy").asText()).isEqualTo(p1);
        assertThat(storeState(p2)).isEqualTo("deferred");
    }

    /**
     * Failure model row 83 (the review's case): an apply that failed (its new container reverted), then a fix applied.
     * The failed push read {@code superseded} by the fix there, and {@code mesh push --wait} of it said "superseded"; it
     * ran there and failed, so it reads {@code failed}, with its own error and the push that replaced it, never
     * {@code applied}. A push a newer one replaced before it ran (the newer one deferred, nothing of either applied)
     * still reads {@code superseded} by the newer one. Reports are written as the agent's store writes them.
     */
    @Test
    void aFailedPushThenReplacedReadsFailedOneThatNeverRanSuperseded() throws Exception {
        String bad = pushStore("rv2");
        String fix = pushStore("w-fix2");
        ApplyReport failed = report("host-a", "store", "rv2", bad, ApplyOutcome.FAILED, "store-registry not ready by its deadline: reverted");
        failed = new ApplyReport(failed.host(), failed.module(), failed.revision(), failed.push(), failed.outcome(), failed.startedAt(),
                failed.finishedAt(), null, List.of(new ApplyReport.ContainerResult("registry", "store-registry", ContainerAction.REVERTED,
                List.of("not ready"), "3f2a")), failed.error(), null, null, null);
        served(failed);
        JsonNode v = fx.api.get("/v1/pushes/" + bad).json();
        assertThat(v.get("state").asText()).isEqualTo("failed");

        served(report("host-a", "store", "w-fix2", fix, ApplyOutcome.APPLIED, null));
        v = fx.api.get("/v1/pushes/" + bad).json();
        JsonNode t = target(v, "host-a", "store");
        assertThat(t.get("state").asText()).isEqualTo("failed");
        assertThat(t.get("error").asText()).isEqualTo("store-registry not ready by its deadline: reverted");
        assertThat(t.get("supersededBy").asText()).isEqualTo(fix);
        assertThat(v.get("state").asText()).isEqualTo("failed");
        assertThat(v.get("failed").asBoolean()).isTrue();
        assertThat(v.get("done").asBoolean()).isTrue();
        assertThat(v.at("/counts/superseded").asInt()).isZero();
        assertThat(fx.api.get("/v1/pushes/" + fix).json().get("state").asText()).isEqualTo("applied");

        // Failed, then applied by a retry of the same push: it ran, so applied, even once a newer one replaced it.
        String flaky = pushStore("r4");
        served(report("host-a", "store", "r4", flaky, ApplyOutcome.FAILED, "dockerd did not answer"));
        served(report("host-a", "store", "r4", flaky, ApplyOutcome.APPLIED, null));
        String next = pushStore("r5");
        served(report("host-a", "store", "r5", next, ApplyOutcome.APPLIED, null));
        assertThat(storeState(flaky)).isEqualTo("applied");
        assertThat(storeState(bad)).as("still remembered").isEqualTo("failed");

        // Never ran: host-b's report is of a newer push that waits on a window, and nothing was applied before.
        fx.writeReport(report("host-b", "web", "r9", "push-0000000009", ApplyOutcome.DEFERRED, null));
        String web = fx.api.post("/v1/pushes", Manifests.web("[host-b]").getBytes(), java.util.Map.of("X-Mesh-Revision", "r8")).json().get("push").asText();
        JsonNode w = target(fx.api.get("/v1/pushes/" + web).json(), "host-b", "web");
        assertThat(w.get("state").asText()).isEqualTo("superseded");
        assertThat(w.get("supersededBy").asText()).isEqualTo("push-0000000009");
    }

    @Test
    void anOlderPushStaysAppliedWhileANewerOneWaitsOnAWindow() throws Exception {
        String p0 = pushStore("r1");
        String p1 = pushStore("r2");
        // Written as the agent writes them: MeshStore carries the last applied push through a deferral.
        served(report("host-a", "store", "r1", p0, ApplyOutcome.APPLIED, null));
        served(report("host-a", "store", "r2", p1, ApplyOutcome.DEFERRED, null));
        assertThat(storeState(p0)).isEqualTo("applied");
        assertThat(storeState(p1)).isEqualTo("deferred");
        ApplyReport stored = Json.read(fx.zk.client().getData().forPath(fx.zk.paths().report("host-a", "store")), ApplyReport.class);
        assertThat(stored.lastApplied().push()).isEqualTo(p0);
        assertThat(stored.lastApplied().revision()).isEqualTo("r1");
    }

    @Test
    void starHostsMeansEveryAgentOrReportingHost() throws Exception {
        String push = fx.api.push(Manifests.web("[\"*\"]")).json().get("push").asText();
        JsonNode v = fx.api.get("/v1/pushes/" + push).json();
        assertThat(v.get("targets")).isEmpty();
        assertThat(v.get("done").asBoolean()).isFalse();

        writeAgent("host-a");
        writeAgent("host-b");
        fx.writeReport(report("host-c", "web", "r0", "push-0000000000", ApplyOutcome.APPLIED, null)); // no agent, but a report
        fx.writeReport(report("host-d", "other", "r0", push, ApplyOutcome.APPLIED, null)); // a report of another module only
        fx.writeReport(report("host-b", "web", "x", push, ApplyOutcome.APPLIED, null));
        v = fx.api.get("/v1/pushes/" + push).json();
        assertThat(v.get("targets")).extracting(t -> t.get("host").asText() + "=" + t.get("state").asText())
                .containsExactly("host-a=pending", "host-b=applied", "host-c=applied");
        assertThat(v.get("state").asText()).isEqualTo("pending");
    }

    /**
     * Failure model row 84: {@code hosts: ["*"]} counted only the hosts with an agent node (or a report) when the status
     * was read, so a host registered when the push was taken whose agent then went before it answered dropped out of
     * the push, which read {@code applied} and done (and {@code mesh push --wait} exited 0). The push node records the
     * hosts registered then; each stays a target, {@code pending} (its {@code agent} false), until it answers, and the
     * push is not done meanwhile. A host that registers after the push is a target too.
     */
    @Test
    void starHostsCountEveryHostRegisteredAtPushTimeAndThePushWaitsForEach() throws Exception {
        writeAgent("host-a");
        writeAgent("host-b");
        String push = fx.api.push(Manifests.web("[\"*\"]")).json().get("push").asText();

        // host-b's agent goes before it answers; host-a applies; host-c registers after the push.
        fx.zk.client().delete().forPath(fx.zk.paths().agent("host-b"));
        fx.awaitServed(fx.zk.paths().agent("host-b"));
        fx.writeReport(report("host-a", "web", "x", push, ApplyOutcome.APPLIED, null));
        writeAgent("host-c");
        JsonNode v = fx.api.get("/v1/pushes/" + push).json();
        assertThat(v.get("targets")).extracting(t -> t.get("host").asText() + "=" + t.get("state").asText() + ":" + t.get("agent").asBoolean())
                .containsExactly("host-a=applied:true", "host-b=pending:false", "host-c=pending:true");
        assertThat(v.get("done").asBoolean()).isFalse();
        assertThat(v.get("state").asText()).isEqualTo("pending");
        assertThat(Json.MAPPER.readTree(fx.zk.client().getData().forPath(fx.zk.paths().push(push))).get("agents"))
                .as("the hosts registered when the push was taken").extracting(JsonNode::asText).containsExactly("host-a", "host-b");

        // Each answers (host-b's agent is back): done.
        writeAgent("host-b");
        fx.writeReport(report("host-b", "web", "x", push, ApplyOutcome.APPLIED, null));
        fx.writeReport(report("host-c", "web", "x", push, ApplyOutcome.APPLIED, null));
        v = fx.api.get("/v1/pushes/" + push).json();
        assertThat(v.get("state").asText()).isEqualTo("applied");
        assertThat(v.get("done").asBoolean()).isTrue();
    }

    @Test
    void heldListsEveryHeldContainerAndOpenWindow() throws Exception {
        assertThat(fx.api.get("/v1/held").json().get("held")).isEmpty();
        ProcessRef by = new ProcessRef(777, "mesh-agent window");
        HeldRecord h1 = new HeldRecord("host-a", "store", "store-registry", "3f2a", "garbage-collect", "w-1", T0, by);
        HeldRecord h2 = new HeldRecord("host-b", "store", "store-registry", "9c1d", "garbage-collect", "w-2", T0.plusSeconds(60), by);
        for (HeldRecord h : List.of(h1, h2)) {
            fx.zk.client().create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(fx.zk.paths().held(h.host(), h.container()), Json.bytes(h));
        }
        WindowRecord w = new WindowRecord("host-a", "store", "garbage-collect", "w-1", T0, List.of("store-registry"), by);
        fx.zk.client().create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(fx.zk.paths().window("host-a", "store"), Json.bytes(w));
        // An empty host node left behind (parents are persistent) is fine.
        fx.zk.client().create().creatingParentsIfNeeded().forPath(fx.zk.paths().held("host-z"), "{}".getBytes());

        JsonNode held = fx.api.get("/v1/held").json();
        assertThat(held.get("held")).hasSize(2);
        assertThat(Json.MAPPER.treeToValue(held.get("held").get(0), HeldRecord.class)).isEqualTo(h1);
        assertThat(Json.MAPPER.treeToValue(held.get("held").get(1), HeldRecord.class)).isEqualTo(h2);
        assertThat(Json.MAPPER.treeToValue(held.get("windows").get(0), WindowRecord.class)).isEqualTo(w);
        assertThat(fx.api.get("/metrics").body()).contains("mesh_held_containers 2\n");
    }

    /** Decision 19: host A writes only under its own paths, so a record naming another host is read as its path's. */
    @Test
    void aHeldOrWindowNodeNamingAnotherHostIsShownUnderItsPath() throws Exception {
        ProcessRef by = new ProcessRef(777, "mesh-agent window");
        // host-a forges records that claim host-b's containers and window, each written under host-a's own paths
        HeldRecord forgedHeld = new HeldRecord("host-b", "web", "web-api", "9c1d", "garbage-collect", "w-2", T0, by);
        fx.zk.client().create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL)
                .forPath(fx.zk.paths().held("host-a", "store-registry"), Json.bytes(forgedHeld));
        WindowRecord forgedWindow = new WindowRecord("host-b", "web", "garbage-collect", "w-2", T0, List.of("web-api"), by);
        fx.zk.client().create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL)
                .forPath(fx.zk.paths().window("host-a", "store"), Json.bytes(forgedWindow));
        fx.awaitServed(fx.zk.paths().window("host-a", "store"));

        JsonNode held = fx.api.get("/v1/held").json();
        assertThat(held.get("held")).hasSize(1);
        assertThat(Json.MAPPER.treeToValue(held.get("held").get(0), HeldRecord.class))
                .isEqualTo(HeldRecord.unreadable("host-a", "store-registry"));
        WindowRecord shown = Json.MAPPER.treeToValue(held.get("windows").get(0), WindowRecord.class);
        assertThat(List.of(shown.host(), shown.module())).containsExactly("host-a", "store");
        assertThat(held.get("windows")).hasSize(1);

        JsonNode fleet = fx.api.get("/v1/fleet").json();
        assertThat(fleet.get("hosts").findValuesAsText("host")).doesNotContain("host-b").contains("host-a");
        assertThat(fleet.get("windows").get(0).get("host").asText()).isEqualTo("host-a");
        assertThat(fleet.get("held").get(0).get("host").asText()).isEqualTo("host-a");
        assertThat(fleet.get("held").get(0).get("container").asText()).isEqualTo("store-registry");
    }

    @Test
    void hostsListsAgentsAndTheirReports() throws Exception {
        writeAgent("host-a");
        fx.writeReport(report("host-a", "store", "r1", "push-0000000000", ApplyOutcome.APPLIED, null));
        fx.writeReport(report("host-b", "web", "r1", "push-0000000000", ApplyOutcome.FAILED, "boom"));
        JsonNode hosts = fx.api.get("/v1/hosts").json().get("hosts");
        assertThat(hosts).extracting(h -> h.get("host").asText() + ":" + h.get("online").asBoolean())
                .containsExactly("host-a:true", "host-b:false");
        assertThat(hosts.get(0).at("/agent/pid").asLong()).isEqualTo(4242);
        assertThat(hosts.get(0).at("/modules/0/outcome").asText()).isEqualTo("applied");
        assertThat(hosts.get(1).at("/modules/0/error").asText()).isEqualTo("boom");
    }
}
