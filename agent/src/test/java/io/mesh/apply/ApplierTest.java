package io.mesh.apply;

import com.github.dockerjava.api.command.InspectContainerResponse;
import io.mesh.docker.DockerEngine;
import io.mesh.testing.ApplierExtension;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.ApplyReport.ContainerResult;
import io.mesh.wire.ContainerAction;
import io.mesh.wire.Json;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.List;
import java.util.Map;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;

/** The apply against a real Docker engine and a real ZooKeeper: create, unchanged, recreate with reasons, remove. */
class ApplierTest {
    @RegisterExtension
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    final ApplierExtension here = new ApplierExtension(zk, "ap");
    private DockerEngine docker;
    private Applier applier;
    private String module;

    @BeforeEach
    void setUp() {
        docker = here.docker();
        module = here.module();
        applier = here.applier();
    }

    private String yaml(String webImage, String webEnv, boolean withWorker) {
        return WebAndWorker.yaml(module, webImage, webEnv, withWorker);
    }

    private static Map<String, ContainerResult> byName(ApplyReport r) { return WebAndWorker.byName(r); }

    /**
     * @return the id of a container made by hand under {@code name} with {@code labels}, started and stopped once (so
     *         that {@link TestDocker#makeDead} finds its files), as a cut recreate or a dockerd restart leaves one
     */
    private String ranOnce(String name, Map<String, String> labels) {
        String id = docker.client().createContainerCmd(BUSYBOX).withName(name).withCmd("sleep", "600")
                .withHostConfig(com.github.dockerjava.api.model.HostConfig.newHostConfig().withNetworkMode("none"))
                .withLabels(labels).exec().getId();
        docker.start(id);
        docker.stop(id, 1);
        return id;
    }

    /** @return the module's Docker events from {@code from} on, to the nanosecond ({@link TestDocker#events} is by second) */
    private List<String> actionsSince(java.time.Instant from, java.util.function.Predicate<com.github.dockerjava.api.model.Event> which) {
        long fromNanos = from.getEpochSecond() * 1_000_000_000L + from.getNano();
        return TestDocker.events(module, from, java.time.Instant.now()).stream().filter(e -> e.getTimeNano() >= fromNanos && which.test(e))
                .map(TestDocker::action).toList();
    }

    @Test
    void createsThenLeavesUnchangedThenRecreatesWithReasonsThenRemoves() throws Exception {
        zk.setDesired(yaml(BUSYBOX, "one", true), "r1");
        ApplyReport first = applier.apply(module, () -> false);
        assertThat(first.outcome()).isEqualTo(ApplyOutcome.APPLIED);
        assertThat(first.revision()).isEqualTo("r1");
        assertThat(first.window()).isNull();
        assertThat(byName(first).get("web").action()).isEqualTo(ContainerAction.CREATED);
        assertThat(byName(first).get("worker").action()).isEqualTo(ContainerAction.CREATED);
        InspectContainerResponse web = docker.inspect(module + "-web");
        assertThat(web.getState().getRunning()).isTrue();
        assertThat(web.getConfig().getLabels()).containsEntry("mesh.module", module).containsEntry("mesh.container", "web")
                .containsEntry("mesh.revision", "r1").containsKey("mesh.spec-hash");

        // The report is in ZooKeeper, as SPEC's JSON.
        ApplyReport stored = Json.read(zk.client().getData().forPath(zk.paths().report("host-a", module)), ApplyReport.class);
        assertThat(stored.outcome()).isEqualTo(ApplyOutcome.APPLIED);
        assertThat(stored.containers()).hasSize(2);

        // nothing changed: the report of what the push did stays (decision 0004)
        ApplyReport second = applier.apply(module, () -> false);
        assertThat(second).isEqualTo(first);
        assertThat(docker.inspect(module + "-web").getId()).isEqualTo(web.getId());

        // env changed -> recreated, naming the variable (not its value)
        zk.setDesired(yaml(BUSYBOX, "two", true), "r2");
        ApplyReport third = applier.apply(module, () -> false);
        ContainerResult w3 = byName(third).get("web");
        assertThat(w3.action()).isEqualTo(ContainerAction.RECREATED);
        assertThat(w3.reasons()).containsExactly("env: changed MODE");
        assertThat(byName(third).get("worker").action()).isEqualTo(ContainerAction.UNCHANGED);
        assertThat(docker.inspect(module + "-web").getId()).isNotEqualTo(web.getId()).isEqualTo(w3.id());
        assertThat(docker.inspect(module + "-web").getConfig().getEnv()).contains("MODE=two");
        // The report and the release of the module lock were one transaction: the report's last change and the lock
        // parent's last child change have the same zxid.
        var lockParent = zk.client().checkExists().forPath(zk.paths().lock(module, "host-a"));
        assertThat(zk.client().getChildren().forPath(zk.paths().lock(module, "host-a"))).isEmpty();
        assertThat(lockParent.getPzxid()).isEqualTo(zk.client().checkExists().forPath(zk.paths().report("host-a", module)).getMzxid());

        // image changed -> recreated with "image: a -> b"
        docker.client().tagImageCmd(BUSYBOX, "mesh-test/busybox-retag", module).exec();
        try {
            zk.setDesired(yaml("mesh-test/busybox-retag:" + module, "two", true), "r3");
            ApplyReport fourth = applier.apply(module, () -> false);
            assertThat(byName(fourth).get("web").reasons()).containsExactly("image: " + BUSYBOX + " -> mesh-test/busybox-retag:" + module);

            // a container that dies is recreated with "not running: exited (N)"
            docker.client().killContainerCmd(module + "-worker").withSignal("KILL").exec();
            ApplyReport fifth = applier.apply(module, () -> false);
            assertThat(byName(fifth).get("worker").action()).isEqualTo(ContainerAction.RECREATED);
            assertThat(byName(fifth).get("worker").reasons()).containsExactly("not running: exited (137)");
            assertThat(docker.inspect(module + "-worker").getState().getRunning()).isTrue();

            // the spec no longer names worker -> removed
            zk.setDesired(yaml("mesh-test/busybox-retag:" + module, "two", false), "r4");
            ApplyReport sixth = applier.apply(module, () -> false);
            assertThat(byName(sixth).get("worker").action()).isEqualTo(ContainerAction.REMOVED);
            assertThat(docker.inspect(module + "-worker")).isNull();
            assertThat(docker.moduleContainers(module)).hasSize(1);
        } finally {
            TestDocker.clean(module);
            docker.client().removeImageCmd("mesh-test/busybox-retag:" + module).exec();
        }
    }

    /**
     * Containers under the recreate's temporary names are moved out of the way: an unlabelled one, and one labelled as
     * the module's (what an interrupted recreate leaves), which the plan also removes, so that both reach it.
     */
    @Test
    void aRecreateRemovesWhatAnInterruptedOneLeftUnderItsTemporaryNames() throws Exception {
        zk.setDesired(yaml(BUSYBOX, "one", false), "r1");
        assertThat(applier.apply(module, () -> false).outcome()).isEqualTo(ApplyOutcome.APPLIED);
        String next = module + "-web" + ApplyPlanner.NEXT_SUFFIX, prev = module + "-web" + ApplyPlanner.PREV_SUFFIX;
        docker.client().createContainerCmd(BUSYBOX).withName(next).withCmd("true")
                .withLabels(Map.of("mesh.module", module, "mesh.container", "web"))
                .withHostConfig(com.github.dockerjava.api.model.HostConfig.newHostConfig().withNetworkMode("none")).exec();
        docker.client().createContainerCmd(BUSYBOX).withName(prev).withCmd("true")
                .withHostConfig(com.github.dockerjava.api.model.HostConfig.newHostConfig().withNetworkMode("none")).exec();
        try {
            zk.setDesired(yaml(BUSYBOX, "two", false), "r2");
            ApplyReport r = applier.apply(module, () -> false);
            assertThat(r.outcome()).as("report %s", r).isEqualTo(ApplyOutcome.APPLIED);
            assertThat(r.containers()).extracting(ContainerResult::container, ContainerResult::action).containsExactlyInAnyOrder(
                    org.assertj.core.groups.Tuple.tuple(module + "-web", ContainerAction.RECREATED),
                    org.assertj.core.groups.Tuple.tuple(next, ContainerAction.REMOVED));
            assertThat(docker.inspect(module + "-web").getConfig().getEnv()).contains("MODE=two");
            assertThat(docker.idByName(next)).isNull();
            assertThat(docker.idByName(prev)).isNull();
        } finally {
            for (String n : java.util.List.of(next, prev)) {
                String id = docker.idByName(n);
                if (id != null) docker.remove(id);
            }
        }
    }

    /**
     * A recreate cut after it moved the old container aside (the process gone: every Docker call from then on fails)
     * leaves the old one stopped under {@code .mesh-prev} with restart policy {@code no}, so that dockerd, when it starts
     * again, does not start it next to the new one (or beside a window's step); a recreate that puts the old one back
     * puts its policy back too. Found by the fleet history checker (FleetHistoryIT): a stopped {@code always}
     * {@code .mesh-prev} started by a dockerd restart while a window held its successor.
     */
    @Test
    void aRecreateCutAfterMovingTheOldOneAsideLeavesItWithPolicyNo() throws Exception {
        String always = "    restart: always\n";
        zk.setDesired(yaml(BUSYBOX, "one", false) + always, "r1");
        assertThat(applier.apply(module, () -> false).outcome()).isEqualTo(ApplyOutcome.APPLIED);
        String web = module + "-web", prev = web + ApplyPlanner.PREV_SUFFIX;
        String oldId = docker.idByName(web);
        assertThat(docker.restartPolicy(oldId)).isEqualTo("always");
        java.util.concurrent.atomic.AtomicBoolean gone = new java.util.concurrent.atomic.AtomicBoolean();
        io.mesh.docker.ContainerRuntime cut = (io.mesh.docker.ContainerRuntime) java.lang.reflect.Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {io.mesh.docker.ContainerRuntime.class}, (p, m, args) -> {
                    if (m.getDeclaringClass() == Object.class) return m.invoke(docker, args);
                    if (gone.get()) throw new IllegalStateException("the process is gone");
                    if (m.getName().equals("rename") && web.equals(args[1])) {
                        gone.set(true); // the new one is about to take the name: the process dies here
                        throw new IllegalStateException("the process is gone");
                    }
                    try {
                        return m.invoke(docker, args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        Applier dying = here.applier(here.context().withDocker(cut));
        zk.setDesired(yaml(BUSYBOX, "two", false) + always, "r2");
        dying.apply(module, () -> false);
        assertThat(docker.idByName(prev)).as("the old container, aside").isEqualTo(oldId);
        assertThat(docker.inspect(oldId).getState().getRunning()).isFalse();
        assertThat(docker.restartPolicy(oldId)).as("its restart policy while aside").isEqualTo("no");

        // The next apply removes it (duplicate) and runs the new spec with the policy it names.
        ApplyReport r = applier.apply(module, () -> false);
        assertThat(r.outcome()).as("report %s", r).isEqualTo(ApplyOutcome.APPLIED);
        assertThat(docker.idByName(prev)).isNull();
        assertThat(docker.restartPolicy(docker.idByName(web))).isEqualTo("always");

        // A recreate whose new container cannot start puts the old one back with its own policy.
        String before = docker.idByName(web);
        zk.setDesired(yaml(BUSYBOX, "three", false).replace("command: [sh, -c,", "command: [/no/such/binary,") + always, "r3");
        assertThat(applier.apply(module, () -> false).outcome()).isEqualTo(ApplyOutcome.FAILED);
        assertThat(docker.idByName(web)).isEqualTo(before);
        assertThat(docker.inspect(before).getState().getRunning()).isTrue();
        assertThat(docker.restartPolicy(before)).isEqualTo("always");
    }

    /**
     * A container Docker left {@code Dead} (an engine killed during a removal; FleetHistoryIT seed
     * -8000834034482580827) cannot be updated, stopped for real or started: Docker answers 500. The apply removes it
     * and creates it again, whether its spec changed or not, and removes one the spec no longer names; one whose
     * removal keeps failing fails the container with what to do, and the new container made for it is not left
     * behind. Failure model row 29.
     */
    @Test
    void aContainerDockerLeftDeadIsRemovedAndCreatedAgain() throws Exception {
        zk.setDesired(yaml(BUSYBOX, "one", true), "r1");
        assertThat(applier.apply(module, () -> false).outcome()).isEqualTo(ApplyOutcome.APPLIED);
        String web = module + "-web", worker = module + "-worker";

        // same spec: the dead one is replaced
        String deadWeb = docker.idByName(web);
        TestDocker.makeDead(deadWeb, false);
        ApplyReport same = applier.apply(module, () -> false);
        assertThat(same.outcome()).as("report %s", same).isEqualTo(ApplyOutcome.APPLIED);
        assertThat(byName(same).get("web").action()).isEqualTo(ContainerAction.RECREATED);
        // Docker's list says "removing" (its view of the failed removal), its inspect "dead"
        assertThat(byName(same).get("web").reasons()).singleElement().asString().matches("not running: (dead|removing)");
        assertThat(docker.inspect(deadWeb)).as("the dead container").isNull();
        assertThat(docker.inspect(web).getState().getRunning()).isTrue();

        // spec changed: the same, with the new spec
        deadWeb = docker.idByName(web);
        TestDocker.makeDead(deadWeb, false);
        zk.setDesired(yaml(BUSYBOX, "two", true), "r2");
        ApplyReport changed = applier.apply(module, () -> false);
        assertThat(changed.outcome()).as("report %s", changed).isEqualTo(ApplyOutcome.APPLIED);
        assertThat(docker.inspect(deadWeb)).isNull();
        assertThat(docker.inspect(web).getConfig().getEnv()).contains("MODE=two");
        assertThat(docker.inspect(web).getState().getRunning()).isTrue();

        // no longer in the spec: removed
        String deadWorker = docker.idByName(worker);
        TestDocker.makeDead(deadWorker, false);
        zk.setDesired(yaml(BUSYBOX, "two", false), "r3");
        ApplyReport removed = applier.apply(module, () -> false);
        assertThat(removed.outcome()).as("report %s", removed).isEqualTo(ApplyOutcome.APPLIED);
        assertThat(byName(removed).get("worker").action()).isEqualTo(ContainerAction.REMOVED);
        assertThat(docker.inspect(deadWorker)).isNull();

        // Docker cannot remove it (failure model row 129): it is moved out of the name's way, and the new one runs
        // under the name; later applies make nothing new, and remove it once Docker can
        deadWeb = docker.idByName(web);
        java.nio.file.Path stuck = TestDocker.makeDead(deadWeb, true);
        String aside = web + ".mesh-dead-" + deadWeb.substring(0, 12);
        try {
            ApplyReport moved = applier.apply(module, () -> false);
            assertThat(moved.outcome()).as("report %s", moved).isEqualTo(ApplyOutcome.APPLIED);
            assertThat(byName(moved).get("web").reasons()).anyMatch(s -> s.contains("waits aside as " + aside));
            assertThat(docker.idByName(aside)).as("the dead one, aside").isEqualTo(deadWeb);
            String now = docker.idByName(web);
            assertThat(now).isNotEqualTo(deadWeb);
            assertThat(docker.inspect(now).getState().getRunning()).isTrue();

            java.time.Instant from = java.time.Instant.now();
            ApplyReport again = applier.apply(module, () -> false);
            assertThat(again.outcome()).as("report %s", again).isEqualTo(ApplyOutcome.APPLIED);
            assertThat(again.containers()).as("report %s", again).anySatisfy(c -> {
                assertThat(c.container()).isEqualTo(aside);
                assertThat(c.action()).isEqualTo(ContainerAction.UNCHANGED);
                assertThat(String.join("; ", c.reasons())).contains("Docker cannot remove it yet", "docker rm -f " + aside);
            });
            assertThat(docker.idByName(web)).isEqualTo(now);
            assertThat(actionsSince(from, e -> true)).as("Docker's events of the module at a later apply").doesNotContain("create", "start", "stop", "kill", "rename");
            assertThat(docker.moduleContainers(module)).extracting(io.mesh.docker.ObservedContainer::dockerName)
                    .containsExactlyInAnyOrder(web, aside);
        } finally {
            TestDocker.unstick(stuck);
        }
        ApplyReport after = applier.apply(module, () -> false);
        assertThat(after.outcome()).as("report %s", after).isEqualTo(ApplyOutcome.APPLIED);
        assertThat(after.containers()).anySatisfy(c -> {
            assertThat(c.container()).isEqualTo(aside);
            assertThat(c.action()).isEqualTo(ContainerAction.REMOVED);
        });
        assertThat(docker.inspect(deadWeb)).isNull();
        assertThat(docker.inspect(web).getState().getRunning()).isTrue();
    }

    /**
     * A recreate's previous container, left under {@code .mesh-prev} when dockerd went away at its removal and now Dead
     * and unremovable (failure model row 129): the module's container runs on untouched, the leftover is moved out of
     * the way, the module is {@code applied} with the debris named, and a reconcile after that tries its removal again.
     */
    @Test
    void aDeadLeftoverUnderPrevIsMovedAsideAndTheModuleStaysApplied() throws Exception {
        zk.setDesired(yaml(BUSYBOX, "one", false), "r1");
        assertThat(applier.apply(module, () -> false).outcome()).isEqualTo(ApplyOutcome.APPLIED);
        String web = module + "-web";
        String running = docker.idByName(web);
        String left = ranOnce(web + ".mesh-prev", docker.labels(running));
        java.nio.file.Path stuck = TestDocker.makeDead(left, true);
        String aside = web + ".mesh-dead-" + left.substring(0, 12);
        try {
            java.time.Instant from = java.time.Instant.now();
            ApplyReport r = applier.apply(module, () -> false);
            assertThat(r.outcome()).as("report %s", r).isEqualTo(ApplyOutcome.APPLIED);
            assertThat(r.containers()).as("report %s", r).anySatisfy(c -> {
                assertThat(c.name()).isEqualTo(aside);
                assertThat(c.container()).isEqualTo(aside);
                assertThat(c.action()).isEqualTo(ContainerAction.UNCHANGED);
                assertThat(String.join("; ", c.reasons())).contains("Docker cannot remove it yet");
            });
            assertThat(docker.idByName(aside)).isEqualTo(left);
            assertThat(docker.idByName(web + ".mesh-prev")).isNull();
            assertThat(docker.idByName(web)).isEqualTo(running);
            assertThat(actionsSince(from, e -> running.equals(e.getId()))).as("Docker's events of the running container").isEmpty();
            ApplyReport again = applier.apply(module, () -> false);
            assertThat(again.outcome()).as("a reconcile after it: %s", again).isEqualTo(ApplyOutcome.APPLIED);
            assertThat(again.containers()).anySatisfy(c -> {
                assertThat(c.container()).isEqualTo(aside);
                assertThat(c.action()).isEqualTo(ContainerAction.UNCHANGED);
            });
            assertThat(docker.idByName(web)).isEqualTo(running);
        } finally {
            TestDocker.unstick(stuck);
        }
    }

    /**
     * FleetHistoryIT seed -2234925440049306439 (failure model row 129): dockerd went away in the middle of a recreate's
     * put-back, after the new container had taken the name; its removal left it Dead, and Docker could not finish it
     * ("device or resource busy"). The next applies could not put the previous container back under the name, then
     * removed it as a duplicate, and made and removed a container under {@code .mesh-next} at each try: the module's
     * container stayed down for good. Now the dead one is moved out of the name's way, the previous one put back and
     * started, then recreated with the new spec; Docker's events show what the previous container went through.
     */
    @Test
    void aDeadContainerUnderTheNameOfACutRecreateIsMovedAsideAndThePreviousOnePutBack() throws Exception {
        zk.setDesired(yaml(BUSYBOX, "one", false), "r1");
        assertThat(applier.apply(module, () -> false).outcome()).isEqualTo(ApplyOutcome.APPLIED);
        String web = module + "-web";
        String previous = docker.idByName(web);
        // what a cut recreate leaves: the previous one stopped aside with policy no, a new one under the name
        docker.stop(previous, 2);
        docker.updateRestartPolicy(previous, "no");
        docker.rename(previous, web + ".mesh-prev");
        String cut = ranOnce(web, Map.of(io.mesh.docker.Labels.MODULE, module, io.mesh.docker.Labels.CONTAINER, "web"));
        java.nio.file.Path stuck = TestDocker.makeDead(cut, true);
        String aside = web + ".mesh-dead-" + cut.substring(0, 12);
        try {
            zk.setDesired(yaml(BUSYBOX, "two", false), "r2");
            java.time.Instant from = java.time.Instant.now();
            ApplyReport r = applier.apply(module, () -> false);
            java.time.Instant to = java.time.Instant.now();
            assertThat(r.outcome()).as("report %s", r).isEqualTo(ApplyOutcome.APPLIED);
            assertThat(docker.idByName(aside)).as("the dead one, aside").isEqualTo(cut);
            assertThat(docker.idByName(web + ".mesh-prev")).isNull();
            assertThat(docker.idByName(web + ".mesh-next")).isNull();
            InspectContainerResponse now = docker.inspect(web);
            assertThat(now.getState().getRunning()).isTrue();
            assertThat(now.getConfig().getEnv()).contains("MODE=two");
            assertThat(TestDocker.events(module, from, to).stream().filter(e -> previous.equals(e.getId())).map(TestDocker::action).toList())
                    .as("Docker's events of the previous container: put back and started, then replaced by the push")
                    .containsSubsequence("rename", "start", "destroy");
        } finally {
            TestDocker.unstick(stuck);
        }
        assertThat(applier.apply(module, () -> false).outcome()).isEqualTo(ApplyOutcome.APPLIED);
        assertThat(docker.inspect(cut)).isNull();
    }

    @Test
    void aRecreateThatCannotStartLeavesTheOldContainerRunning() throws Exception {
        zk.setDesired(yaml(BUSYBOX, "one", false), "r1");
        assertThat(applier.apply(module, () -> false).outcome()).isEqualTo(ApplyOutcome.APPLIED);
        String before = docker.inspect(module + "-web").getId();

        // The new spec's command does not exist in the image: the new container cannot start.
        String broken = yaml(BUSYBOX, "two", false).replace("command: [sh, -c,", "command: [/no/such/binary,");
        zk.setDesired(broken, "r2");
        ApplyReport r = applier.apply(module, () -> false);
        assertThat(r.outcome()).isEqualTo(ApplyOutcome.FAILED);
        assertThat(r.error()).contains(module + "-web");
        ContainerResult web = byName(r).get("web");
        assertThat(web.action()).isEqualTo(ContainerAction.FAILED);
        assertThat(web.reasons()).anyMatch(s -> s.contains("did not start") && s.contains("runs again"));
        InspectContainerResponse now = docker.inspect(module + "-web");
        assertThat(now.getId()).isEqualTo(before);
        assertThat(now.getState().getRunning()).isTrue();
        assertThat(docker.moduleContainers(module)).hasSize(1);

        // An image that is nowhere: refused before anything is stopped.
        zk.setDesired(yaml("mesh-test/nowhere:0", "two", false), "r3");
        ApplyReport r3 = applier.apply(module, () -> false);
        assertThat(r3.outcome()).isEqualTo(ApplyOutcome.FAILED);
        assertThat(byName(r3).get("web").reasons()).anyMatch(s -> s.contains("mesh-test/nowhere:0"));
        assertThat(docker.inspect(module + "-web").getId()).isEqualTo(before);
        assertThat(docker.inspect(module + "-web").getState().getRunning()).isTrue();
    }

    @Test
    void aModuleThatNoLongerNamesThisHostIsRemovedFromIt() throws Exception {
        zk.setDesired(yaml(BUSYBOX, "one", true), "r1");
        applier.apply(module, () -> false);
        assertThat(docker.moduleContainers(module)).hasSize(2);
        // The module lock's parent is persistent while the module runs here (PersistentParents)...
        assertThat(new String(zk.client().getData().forPath(zk.paths().lock(module, "host-a")))).as("made by mesh").isEqualTo("{}");
        zk.setDesired(yaml(BUSYBOX, "one", true).replace("hosts: [host-a]", "hosts: [host-b]"), "r2");
        ApplyReport r = applier.apply(module, () -> false);
        assertThat(r.containers()).extracting(ContainerResult::action).containsOnly(ContainerAction.REMOVED);
        assertThat(docker.moduleContainers(module)).isEmpty();
        // ... and goes with it.
        assertThat(zk.client().checkExists().forPath(zk.paths().lock(module, "host-a"))).isNull();
        // From then on the module is another host's business: no lock taken, no report written here.
        var stat = zk.client().checkExists().forPath(zk.paths().report("host-a", module));
        assertThat(applier.apply(module, () -> false)).isNull();
        assertThat(zk.client().checkExists().forPath(zk.paths().report("host-a", module)).getMzxid()).isEqualTo(stat.getMzxid());
    }
}
