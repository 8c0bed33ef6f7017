package io.mesh.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.model.Container;
import io.mesh.coordinator.OpsFixture;
import io.mesh.testing.TestDocker;
import io.mesh.testing.TestZk;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.ContainerAction;
import io.mesh.wire.Json;
import io.mesh.wire.PushAction;
import io.mesh.wire.PushRecord;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.mesh.coordinator.OpsFixture.HOST;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code mesh history}, {@code mesh rollback} and {@code mesh delete} against a running coordinator and a running
 * agent (real ZooKeeper, real Docker engine; what runs is checked with Docker's own API, not mesh's): a rollback
 * restores the previous spec, is marked {@code rollbackOf} and is deferred while a window holds the module; a delete
 * leaves a held container alone until its window ends, then removes it; bad input exits 2 and writes nothing. The
 * methods run in order on one fleet.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 150, unit = TimeUnit.SECONDS)
@Tag("slow") // an agent daemon and windows on the real engine: the full run, not --fast
class HistoryCommandsTest {
    @RegisterExtension
    static final OpsFixture fx = new OpsFixture();
    static final DockerClient docker = TestDocker.engine().client();
    /** Push ids of r1 and r2, in order. */
    static final List<String> pushes = new ArrayList<>();

    static ClientRun mesh(String... args) { return ClientRun.of(fx.api.uri().toString(), args); }

    static CompletableFuture<ClientRun> meshAsync(String... args) { return CompletableFuture.supplyAsync(() -> mesh(args)); }

    static final String[] WAIT = {"--wait", "--timeout", "90s", "--interval", "200ms"};

    static String[] with(String[] head, String... tail) {
        List<String> all = new ArrayList<>(List.of(head));
        all.addAll(List.of(tail));
        return all.toArray(String[]::new);
    }

    Path manifest(String rev) throws Exception {
        Path f = Files.createTempFile("mesh-history", ".yaml");
        Files.writeString(f, fx.manifest(rev, "[" + HOST + "]"));
        return f;
    }

    static String container() { return fx.module + "-app"; }

    /** @return the module's container as Docker sees it */
    static InspectContainerResponse inspect() { return docker.inspectContainerCmd(container()).exec(); }

    static List<String> env() { return List.of(inspect().getConfig().getEnv()); }

    /** @return every managed container of the module (its label, no window step's), as Docker lists them */
    static List<Container> labelled() {
        return docker.listContainersCmd().withShowAll(true).withLabelFilter(Map.of("mesh.module", fx.module)).exec()
                .stream().filter(c -> c.getLabels() == null || !c.getLabels().containsKey("mesh.window")).toList();
    }

    /** @return the first word of the first line: the push id a push, rollback or delete printed */
    static String pushId(ClientRun r) { return r.out().lines().findFirst().orElseThrow().split("\\s+")[0]; }

    int pushCount() throws Exception { return fx.zk.client().getChildren().forPath(fx.zk.paths().pushes()).size(); }

    @Test
    @Order(1)
    void twoRevisionsArePushedAndListedNewestFirst() throws Exception {
        for (String rev : List.of("r1", "r2")) {
            ClientRun r = mesh(with(new String[]{"push", manifest(rev).toString(), "--revision", rev}, WAIT));
            assertThat(r.code()).as(r.toString()).isZero();
            pushes.add(pushId(r));
        }
        assertThat(env()).contains("REV=r2");

        ClientRun h = mesh("history", fx.module);
        assertThat(h.code()).as(h.toString()).isZero();
        List<String> lines = h.out().lines().toList();
        assertThat(lines.get(0)).contains("PUSH", "REVISION", "ACTION", "PUSHED AT", "BY", "SOURCE", "HOSTS");
        assertThat(lines.get(1).split("\\s+")).startsWith(pushes.get(1), "r2", "push");
        assertThat(lines.get(2).split("\\s+")).startsWith(pushes.get(0), "r1", "push");
        assertThat(lines.get(1)).contains(System.getProperty("user.name") + " from 127.0.0.1", HOST);

        ClientRun json = mesh("history", fx.module, "--json");
        assertThat(json.code()).isZero();
        JsonNode history = Json.MAPPER.readTree(json.out()).path("history");
        assertThat(history).hasSize(2);
        assertThat(history.get(0).path("spec").path("containers").path("app").path("env").path("REV").asText()).isEqualTo("r2");
    }

    @Test
    @Order(2)
    void rollbackRestoresThePreviousSpecAndIsMarkedRollbackOf() throws Exception {
        ClientRun r = mesh(with(new String[]{"rollback", fx.module}, WAIT));
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(r.out()).contains("rollback of " + fx.module + " to " + pushes.get(0), "revision r1",
                HOST + "  " + fx.module + "  applied r1", "applied on every host");
        // Docker runs the r1 spec again.
        assertThat(env()).contains("REV=r1").doesNotContain("REV=r2");
        assertThat(inspect().getState().getRunning()).isTrue();

        String push = pushId(r);
        PushRecord record = Json.read(fx.zk.client().getData().forPath(fx.zk.paths().push(push)), PushRecord.class);
        assertThat(record.action()).isEqualTo(PushAction.ROLLBACK);
        assertThat(record.rollbackOf()).isEqualTo(pushes.get(0));
        ClientRun status = mesh("status", push);
        assertThat(status.code()).as(status.toString()).isZero();
        assertThat(status.out()).contains(push, "state applied");
        assertThat(mesh("history", fx.module).out().lines().skip(1).findFirst().orElseThrow())
                .contains(push, "r1", "rollback of " + pushes.get(0));
    }

    @Test
    @Order(3)
    void aRollbackMeetingAWindowIsDeferredAndLandsAfterIt() throws Exception {
        CompletableFuture<ClientRun> window = meshAsync("window", "run", fx.module + "/sweep", "--host", HOST, "--interval", "200ms", "--timeout", "90s");
        fx.awaitHeld();
        String held = inspect().getId();

        CompletableFuture<ClientRun> rollback = meshAsync(with(new String[]{"rollback", fx.module, "--to", pushes.get(1)}, WAIT));
        fx.awaitReport(ApplyOutcome.DEFERRED, "r2");
        // The held container is left alone: the same one, still stopped, still r1.
        Thread.sleep(1500); // let a wrong apply have its chance
        assertThat(inspect().getId()).isEqualTo(held);
        assertThat(inspect().getState().getRunning()).isFalse();
        assertThat(env()).contains("REV=r1");

        fx.release();
        ClientRun w = window.get(90, TimeUnit.SECONDS);
        assertThat(w.code()).as(w.toString()).isZero();
        ClientRun r = rollback.get(90, TimeUnit.SECONDS);
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(r.out()).contains("rollback of " + fx.module + " to " + pushes.get(1), "deferred (window sweep w-",
                HOST + "  " + fx.module + "  applied r2");
        assertThat(r.out().indexOf("deferred (window sweep")).isLessThan(r.out().indexOf("applied r2"));
        assertThat(env()).contains("REV=r2");
        assertThat(inspect().getState().getRunning()).isTrue();
    }

    @Test
    @Order(4)
    void deleteLeavesAHeldContainerAloneUntilItsWindowEndsThenRemovesIt() throws Exception {
        CompletableFuture<ClientRun> window = meshAsync("window", "run", fx.module + "/sweep", "--host", HOST, "--interval", "200ms", "--timeout", "90s");
        fx.awaitHeld();
        String held = inspect().getId();

        CompletableFuture<ClientRun> delete = meshAsync(with(new String[]{"delete", fx.module}, WAIT));
        fx.awaitReport(ApplyOutcome.DEFERRED, "deleted");
        Thread.sleep(1500); // let a wrong apply have its chance
        assertThat(labelled()).extracting(Container::getId).containsExactly(held);
        assertThat(inspect().getState().getRunning()).isFalse();
        assertThat(fx.report().containers()).extracting(ApplyReport.ContainerResult::action).containsExactly(ContainerAction.HELD);

        fx.release();
        ClientRun w = window.get(90, TimeUnit.SECONDS);
        assertThat(w.code()).as(w.toString()).isZero();
        ClientRun d = delete.get(90, TimeUnit.SECONDS);
        assertThat(d.code()).as(d.toString()).isZero();
        assertThat(d.out()).contains("deletes module " + fx.module, "hosts " + HOST, "deferred (window sweep w-",
                HOST + "  " + fx.module + "  applied deleted", "applied on every host");
        // Docker has nothing of the module left; the report says removed.
        assertThat(labelled()).isEmpty();
        ApplyReport report = fx.report();
        assertThat(report.outcome()).isEqualTo(ApplyOutcome.APPLIED);
        assertThat(report.push()).isEqualTo(pushId(d));
        assertThat(report.containers()).extracting(ApplyReport.ContainerResult::action).containsExactly(ContainerAction.REMOVED);
        // The fleet view no longer shows the module on the host; the history shows the delete.
        ClientRun status = mesh("status");
        assertThat(status.out()).doesNotContain(fx.module);
        assertThat(mesh("history", fx.module).out().lines().skip(1).findFirst().orElseThrow()).contains(pushId(d), "deleted", "delete");
        assertThat(mesh("status", pushId(d)).out()).contains("state applied");
    }

    @Test
    @Order(5)
    void badInputExitsTwoNamingTheFieldAndTheFixAndWritesNothing() throws Exception {
        int before = pushCount();
        ClientRun again = mesh("delete", fx.module);
        assertThat(again.code()).as(again.toString()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(again.err()).contains("mesh delete: the coordinator answered 404", "deleted already", "mesh rollback " + fx.module);

        ClientRun unknown = mesh("rollback", "nosuch");
        assertThat(unknown.code()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(unknown.err()).contains("404", "no module nosuch has been pushed", "mesh status lists the modules");
        ClientRun unknownDelete = mesh("delete", "nosuch", "--wait");
        assertThat(unknownDelete.code()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(unknownDelete.err()).contains("no module nosuch");
        ClientRun unknownHistory = mesh("history", "nosuch");
        assertThat(unknownHistory.code()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(unknownHistory.err()).contains("no module nosuch");

        ClientRun badTo = mesh("rollback", fx.module, "--to", "r1");
        assertThat(badTo.code()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(badTo.err()).contains("400", "to: 'r1' is not a push id", "push-0000000002", "mesh history " + fx.module);
        ClientRun unknownTo = mesh("rollback", fx.module, "--to", "push-0000009999");
        assertThat(unknownTo.code()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(unknownTo.err()).contains("404", "to: push-0000009999 is not in the history of module " + fx.module, "mesh history " + fx.module);
        ClientRun bad = mesh("rollback", fx.module, "--wait", "--timeout", "soon");
        assertThat(bad.code()).isEqualTo(ExitCodes.BAD_INPUT);

        assertThat(pushCount()).isEqualTo(before);
        assertThat(labelled()).isEmpty();
    }

    @Test
    @Order(6)
    void aRollbackBringsADeletedModuleBack() throws Exception {
        ClientRun r = mesh(with(new String[]{"rollback", fx.module}, WAIT));
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(r.out()).contains("revision r2", HOST + "  " + fx.module + "  applied r2");
        assertThat(env()).contains("REV=r2");
        assertThat(inspect().getState().getRunning()).isTrue();
    }

    @Test
    @Order(7)
    void theCommandsHaveHelpWithExitCodesAndExitFourWhenUnreachable() throws Exception {
        for (String cmd : List.of("history", "rollback", "delete")) {
            ClientRun help = mesh(cmd, "--help");
            assertThat(help.code()).as(cmd).isZero();
            assertThat(help.out()).as(cmd).contains("Usage:", "Exit codes:", "MODULE");
            ClientRun r = mesh(cmd, fx.module, "--coordinator=http://127.0.0.1:" + TestZk.freePort());
            assertThat(r.code()).as(cmd + ": " + r).isEqualTo(ExitCodes.UNREACHABLE);
            assertThat(r.err()).contains("cannot reach the coordinator");
        }
        assertThat(mesh("--help").out()).contains("history", "rollback", "delete");
    }
}
