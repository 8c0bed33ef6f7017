package io.mesh.apply;

import io.mesh.docker.DockerEngine;
import io.mesh.docker.Labels;
import io.mesh.docker.ObservedContainer;
import io.mesh.testing.ApplierExtension;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.ApplyReport.ContainerResult;
import io.mesh.wire.ContainerAction;
import io.mesh.wire.DesiredRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;
import java.util.Map;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A module's networks against the real engine and ZooKeeper (decision 31): created before the containers that join
 * them, every container reachable by its container name and its aliases (checked from inside the containers), a
 * network's change made in place without restarting its containers, and the networks removed with the module while
 * its named volumes stay. Docker's answer for a network that is not there reaches the report with the fix.
 */
@Tag("slow") // over 10 s of engine or ZooKeeper waits: the full run, not --fast (which must stay under 2 min)
class ModuleNetworksTest {
    @RegisterExtension
    static final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    final ApplierExtension here = new ApplierExtension(zk, "nw-");
    private DockerEngine docker;
    private String module;

    private static final String SERVE = "trap 'exit 0' TERM INT; while true; do sleep 1; done";

    @BeforeEach
    void setUp() {
        docker = here.docker();
        module = here.module();
    }

    @AfterEach
    void removeVolume() {
        try {
            docker.client().removeVolumeCmd(module + "-data").exec();
        } catch (RuntimeException gone) {
            // removed by the test, or never made
        }
    }

    /** Three containers as a compose app has them: web on the front, db on both with an alias, worker on the back. */
    private String shop(String backLine) {
        return "module: " + module + "\nhosts: [host-a]\nnetworks:\n  default: {}\n  back: {" + backLine + "}\ncontainers:\n"
                + container("web", "networks: [default]")
                + container("db", "networks: {default: {}, back: {aliases: [postgres]}}\n    volumes: [\"" + module + "-data:/data\"]")
                + container("worker", "networks: [back]");
    }

    private static String container(String name, String lines) {
        return "  " + name + ":\n    image: " + BUSYBOX + "\n    command: [sh, -c, \"" + SERVE + "\"]\n    stop-timeout: 2s\n"
                + "    ready: {min-healthy: 0s}\n    " + lines + "\n";
    }

    /** @return the exit code of {@code docker exec CONTAINER CMD...} */
    private static int exec(String container, String... cmd) throws Exception {
        String[] all = new String[cmd.length + 3];
        all[0] = "docker";
        all[1] = "exec";
        all[2] = container;
        System.arraycopy(cmd, 0, all, 3, cmd.length);
        Process p = new ProcessBuilder(all).redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        return p.waitFor();
    }

    /** @return true when {@code from} resolves {@code name} and reaches it with one ping */
    private static boolean reaches(String from, String name) throws Exception {
        return exec(from, "ping", "-c", "1", "-W", "2", name) == 0;
    }

    /**
     * @return true when Docker's DNS answers {@code name} to {@code from}; a name it does not know goes to the host's
     *         servers, which no network here reaches: one second's wait, not ping's ten
     */
    private static boolean resolves(String from, String name) throws Exception {
        return exec(from, "nslookup", "-timeout=1", "-retry=1", name) == 0;
    }

    private static ContainerResult result(ApplyReport r, String name) {
        return r.containers().stream().filter(c -> c.name().equals(name)).findFirst().orElseThrow();
    }

    @Test
    void theAppsServicesReachEachOtherByNameAndAChangedNetworkIsMadeInPlace() throws Exception {
        Applier applier = here.applier();
        zk.setDesired(shop(""), "r1");
        ApplyReport r = applier.apply(module, () -> false);
        assertThat(r.outcome()).as("%s", r).isEqualTo(ApplyOutcome.APPLIED);
        assertThat(docker.networkLabels(module + "_default")).containsEntry(Labels.MODULE, module).containsEntry(Labels.NETWORK, "default");
        assertThat(docker.networkLabels(module + "_back")).containsEntry(Labels.MODULE, module);
        assertThat(result(r, "db").reasons()).anySatisfy(x -> assertThat(x).contains("network " + module + "_back created"));

        String web = module + "-web", db = module + "-db", worker = module + "-worker";
        assertThat(reaches(web, "db")).as("web reaches db by its container name").isTrue();
        assertThat(reaches(worker, "db")).as("worker reaches db on the back network").isTrue();
        assertThat(reaches(worker, "postgres")).as("worker reaches db by its alias").isTrue();
        assertThat(resolves(worker, "postgres")).as("the check can see an answer").isTrue();
        assertThat(resolves(web, "worker")).as("web and worker share no network").isFalse();
        assertThat(resolves(web, "postgres")).as("the alias is the back network's only").isFalse();

        // The back network becomes internal: the network is made anew, its containers reconnected, none restarted.
        String dbId = result(r, "db").id();
        String startedAt = docker.inspect(dbId).getState().getStartedAt();
        var ctx = here.context();
        var plan = new DryRun(ctx.store(), docker, "host-a", ctx.policy(), ctx.secrets())
                .plan(new io.mesh.manifest.ManifestParser().parse(shop("internal: true")).get(0));
        assertThat(plan.containers()).filteredOn(c -> c.name().equals("db")).singleElement()
                .satisfies(c -> assertThat(c.reasons()).anySatisfy(x -> assertThat(x).contains("network " + module + "_back would be recreated with its new settings (internal: false -> true)")));
        zk.setDesired(shop("internal: true"), "r2");
        ApplyReport r2 = applier.apply(module, () -> false);
        assertThat(r2.outcome()).as("%s", r2).isEqualTo(ApplyOutcome.APPLIED);
        assertThat(r2.containers()).allSatisfy(c -> assertThat(c.action()).isEqualTo(ContainerAction.UNCHANGED));
        assertThat(result(r2, "db").reasons()).anySatisfy(x -> assertThat(x).contains("network " + module + "_back recreated with its new settings (internal: false -> true)", db, worker));
        assertThat(docker.inspect(dbId).getState().getStartedAt()).as("db was not restarted").isEqualTo(startedAt);
        assertThat(docker.client().inspectNetworkCmd().withNetworkId(module + "_back").exec().getInternal()).isTrue();
        assertThat(reaches(worker, "postgres")).as("the alias survives the network's recreate").isTrue();

        // The module deleted: containers and networks go, the named volume stays.
        zk.client().setData().forPath(zk.paths().desired(module), io.mesh.wire.Json.bytes(DesiredRecord.tombstoneOf(module, "deleted",
                "push-0000000009", new DesiredRecord.Deleted(List.of("host-a"), java.time.Instant.now(), "test"))));
        ApplyReport gone = applier.apply(module, () -> false);
        assertThat(gone.containers()).allSatisfy(c -> assertThat(c.action()).isEqualTo(ContainerAction.REMOVED));
        assertThat(docker.networkLabels(module + "_default")).isNull();
        assertThat(docker.networkLabels(module + "_back")).isNull();
        assertThat(docker.client().listVolumesCmd().exec().getVolumes()).anySatisfy(v -> assertThat(v.getName()).isEqualTo(module + "-data"));
        assertThat(docker.client().inspectVolumeCmd(module + "-data").exec().getLabels()).as("found by its module")
                .containsEntry(Labels.MODULE, module);
    }

    @Test
    void anExternalNetworkThatIsNotThereFailsNamingTheFix() throws Exception {
        zk.setDesired("module: " + module + "\nhosts: [host-a]\nnetworks:\n  corp: {external: true, name: " + module + "-nowhere}\n"
                + "containers:\n" + container("web", "networks: [corp]"), "r1");
        ApplyReport r = here.applier().apply(module, () -> false);
        assertThat(r.outcome()).isEqualTo(ApplyOutcome.FAILED);
        ContainerResult web = result(r, "web");
        assertThat(web.action()).isEqualTo(ContainerAction.FAILED);
        assertThat(String.join("\n", web.reasons()))
                .contains("network " + module + "-nowhere is not on this host: it is declared external")
                .contains("docker network create " + module + "-nowhere")
                .doesNotContain("no longer exists")
                .doesNotContain("Status 404");
        // Found before any call: nothing is created, at this apply or the next, until the network is there.
        ApplyReport again = here.applier().apply(module, () -> false);
        assertThat(String.join("\n", result(again, "web").reasons())).contains("is not on this host");
        assertThat(docker.containersWithLabel(Labels.MODULE, module)).as("no container made").isEmpty();
    }

    @Test
    void aNetworkOfTheSameNameThatIsNotTheModulesIsNotAdopted() throws Exception {
        docker.createNetwork(module + "_default", false, Map.of("com.example.owner", "someone"));
        try {
            zk.setDesired("module: " + module + "\nhosts: [host-a]\nnetworks: {default: {}}\ncontainers:\n"
                    + container("web", "networks: [default]"), "r1");
            ApplyReport r = here.applier().apply(module, () -> false);
            ContainerResult web = result(r, "web");
            assertThat(web.action()).isEqualTo(ContainerAction.FAILED);
            assertThat(String.join("\n", web.reasons())).contains("is not module " + module + "'s", "docker network rm " + module + "_default");
            assertThat(docker.containersWithLabel(Labels.MODULE, module)).as("nothing created on another's network").isEmpty();
        } finally {
            docker.removeNetwork(module + "_default");
        }
    }

    /**
     * A held container is touched by nobody but its holder: a network it is on keeps its old settings while it is held
     * (the network's id, from Docker, does not change, nor does the container's endpoint), and the apply after the
     * hold makes the change. Failure model row 106.
     */
    @Test
    void aNetworkWithAHeldContainerOnItWaitsForTheHold() throws Exception {
        Applier applier = here.applier();
        zk.setDesired(shop(""), "r1");
        ApplyReport r = applier.apply(module, () -> false);
        assertThat(r.outcome()).as("%s", r).isEqualTo(ApplyOutcome.APPLIED);
        String back = module + "_back", db = module + "-db";
        String networkId = docker.client().inspectNetworkCmd().withNetworkId(back).exec().getId();
        String dbId = result(r, "db").id();
        String endpoint = docker.inspect(dbId).getNetworkSettings().getNetworks().get(back).getEndpointId();
        zk.client().create().creatingParentsIfNeeded().forPath(zk.paths().held("host-a", db), io.mesh.wire.Json.bytes(
                new io.mesh.wire.HeldRecord("host-a", module, db, dbId, "gc", "w-test", io.mesh.wire.Times.now(),
                        io.mesh.wire.ProcessRef.current("test"))));

        zk.setDesired(shop("internal: true"), "r2");
        ApplyReport held = applier.apply(module, () -> false);
        assertThat(result(held, "db").action()).isEqualTo(ContainerAction.HELD);
        assertThat(String.join("\n", result(held, "worker").reasons())).contains("network " + back + " keeps its old settings while " + db + " is held");
        assertThat(docker.client().inspectNetworkCmd().withNetworkId(back).exec().getId()).as("the network was not recreated").isEqualTo(networkId);
        assertThat(docker.inspect(dbId).getNetworkSettings().getNetworks().get(back).getEndpointId()).as("db was not disconnected").isEqualTo(endpoint);

        zk.client().delete().forPath(zk.paths().held("host-a", db));
        ApplyReport after = applier.apply(module, () -> false);
        assertThat(after.outcome()).as("%s", after).isEqualTo(ApplyOutcome.APPLIED);
        assertThat(docker.client().inspectNetworkCmd().withNetworkId(back).exec().getInternal()).isTrue();
        assertThat(reaches(module + "-worker", "postgres")).isTrue();
    }

    /**
     * Found by hand (tryit): a container of no module on the module's network keeps the network from being recreated,
     * which is right, but the apply then reads APPLIED with the old settings (an operator who pushed internal: true
     * reads "applied on every host" while the network still routes out), and once that container is gone no
     * reconcile makes the change: the no-op reconcile looks at containers only. Nor does it reconnect a container
     * disconnected by hand. Expected: the apply does not read APPLIED while the network differs from the spec, and
     * the next reconcile heals both.
     */
    @Test
    void aNetworkKeptForAForeignContainerIsNotReportedAppliedAndIsHealedOnceItLeaves() throws Exception {
        org.assertj.core.api.SoftAssertions soft = new org.assertj.core.api.SoftAssertions();
        Applier applier = here.applier();
        zk.setDesired(shop(""), "r1");
        assertThat(applier.apply(module, () -> false).outcome()).isEqualTo(ApplyOutcome.APPLIED);
        String back = module + "_back";
        String foreign = docker.client().createContainerCmd(BUSYBOX).withName(module + "-foreign")
                .withCmd("sh", "-c", SERVE).withLabels(Map.of("com.example.tryit", module)).exec().getId();
        try {
            docker.client().connectToNetworkCmd().withNetworkId(back).withContainerId(foreign).exec();
            docker.client().startContainerCmd(foreign).exec();
            zk.setDesired(shop("internal: true"), "r2");
            ApplyReport r2 = applier.apply(module, () -> false);
            boolean internal = Boolean.TRUE.equals(docker.client().inspectNetworkCmd().withNetworkId(back).exec().getInternal());
            soft.assertThat(internal || r2.outcome() != ApplyOutcome.APPLIED)
                    .as("network still internal=false but the apply reads %s: %s", r2.outcome(), r2).isTrue();
        } finally {
            docker.client().disconnectFromNetworkCmd().withNetworkId(back).withContainerId(foreign).withForce(true).exec();
            docker.client().removeContainerCmd(foreign).withForce(true).exec();
        }
        assertThat(docker.networkMembers(back)).as("the foreign container left: db and worker remain").hasSize(2);
        applier.apply(module, () -> false); // a reconcile, no new push
        soft.assertThat(docker.client().inspectNetworkCmd().withNetworkId(back).exec().getInternal())
                .as("the reconcile after the foreign container left makes the pushed change").isTrue();

        docker.client().disconnectFromNetworkCmd().withNetworkId(back).withContainerId(module + "-worker").exec();
        applier.apply(module, () -> false); // a reconcile, no new push
        soft.assertThat(docker.inspect(module + "-worker").getNetworkSettings().getNetworks())
                .as("the reconcile reconnects a container disconnected by hand").containsKey(back);
        // The module's containers and networks go here: the extension removes containers, not networks.
        for (String c : List.of("web", "db", "worker")) docker.client().removeContainerCmd(module + "-" + c).withForce(true).exec();
        for (String n : List.of("_default", "_back")) docker.removeNetwork(module + n);
        soft.assertAll();
    }

    /** A module of web and api on its network {@code net}, with {@code V} in their env. */
    private String twoOnNet(String netLine, String v) {
        return "module: " + module + "\nhosts: [host-a]\nnetworks:\n  net: {" + netLine + "}\ncontainers:\n"
                + container("web", "networks: [net]\n    env: {V: \"" + v + "\"}")
                + container("api", "networks: [net]\n    env: {V: \"" + v + "\"}");
    }

    /**
     * Applies {@link #twoOnNet}, stops api as a dockerd restart does, and answers for Docker as it does for a container
     * it marked for removal and cannot remove (a dockerd restart left it "Removal In Progress", its layer busy): its list
     * shows it {@code removing}, its removal fails on the busy layer, its disconnect and connect are refused as dockerd
     * refuses them (a plain error: status 500). None of it can be made on demand; the rest is the real engine.
     *
     * @param networkRemoval Docker's refusal of the network's removal, or {@code null} for the real engine's answer
     * @return the runtime the apply is given; the stuck container is api's
     */
    private io.mesh.docker.ContainerRuntime apiStuckRemoving(RuntimeException networkRemoval) throws Exception {
        zk.setDesired(twoOnNet("", "1"), "r1");
        ApplyReport r1 = here.applier().apply(module, () -> false);
        assertThat(r1.outcome()).as("%s", r1).isEqualTo(ApplyOutcome.APPLIED);
        String stuck = docker.idByName(module + "-api");
        docker.stop(stuck, 2);
        return io.mesh.testing.TestDocker.intercepting(docker, (m, args, proceed) -> {
            if (m.getName().equals("moduleContainers")) {
                @SuppressWarnings("unchecked")
                List<ObservedContainer> seen = (List<ObservedContainer>) proceed.call();
                return seen.stream().map(o -> !o.id().equals(stuck) ? o : new ObservedContainer(o.id(), o.dockerName(), o.name(),
                        o.specHash(), o.specJson(), o.revision(), false, "removing", o.health(), o.imageId())).toList();
            }
            if (m.getName().equals("remove") && stuck.equals(args[0])) {
                throw new com.github.dockerjava.api.exception.InternalServerErrorException("Status 500: {\"message\":\"container "
                        + stuck + ": driver \\\"overlay2\\\" failed to remove root filesystem: unlinkat"
                        + " /var/lib/docker/overlay2/x/merged: device or resource busy\"}");
            }
            if ((m.getName().equals("disconnect") || m.getName().equals("connect")) && stuck.equals(args[0])) {
                throw new com.github.dockerjava.api.exception.InternalServerErrorException("Status 500: {\"message\":\"Container "
                        + stuck + " is marked for removal and cannot be connected or disconnected to the network\"}");
            }
            if (m.getName().equals("removeNetwork") && networkRemoval != null) throw networkRemoval;
            return proceed.call();
        });
    }

    /** Removes the module's containers (the stuck one is a real container, removable) and its network. */
    private void removeTwoOnNet() {
        for (String c : List.of("-web", "-api")) {
            try {
                docker.client().removeContainerCmd(module + c).withForce(true).exec();
            } catch (RuntimeException gone) {
                // not made
            }
        }
        docker.removeNetwork(module + "_net");
    }

    /**
     * A module's network whose settings change while one of its containers is one Docker marked for removal and cannot
     * remove (the fleet history, seed -8419631348443725921). Docker refuses to disconnect such a container from any
     * network, so the network's recreate failed at every apply, and with it both containers, naming the network, never
     * the removal Docker refuses. The recreate leaves that container alone (it is going away), its own plan fails it
     * with Docker's words (rows 69, 70), and the other is applied on the new network. Failure model row 111; every
     * check of what is there is the real engine's.
     */
    @Test
    void aContainerDockerCannotRemoveFailsAloneWhenItsNetworkIsRecreated() throws Exception {
        String net = module + "_net", web = module + "-web", api = module + "-api";
        try {
            io.mesh.docker.ContainerRuntime busy = apiStuckRemoving(null);
            String stuck = docker.idByName(api);
            zk.setDesired(twoOnNet("internal: true", "2"), "r2");
            ApplyReport r2 = here.applier(here.context().withDocker(busy)).apply(module, () -> false);
            ContainerResult webResult = result(r2, "web"), apiResult = result(r2, "api");
            assertThat(webResult.action()).as("%s", r2).isEqualTo(ContainerAction.RECREATED);
            assertThat(String.join("\n", webResult.reasons())).as("%s", r2).doesNotContain("cannot be connected or disconnected")
                    .contains("network " + net + " recreated with its new settings (internal: false -> true)");
            assertThat(apiResult.action()).as("%s", r2).isEqualTo(ContainerAction.FAILED);
            assertThat(String.join("\n", apiResult.reasons())).as("%s", r2).contains("device or resource busy", "docker rm -f " + api);

            // From Docker: the network made anew with the new settings, web's new container running on it with the new
            // env; under api's name the same container, and nothing left under a temporary name.
            var network = docker.client().inspectNetworkCmd().withNetworkId(net).exec();
            assertThat(network.getInternal()).as("the network's new settings").isTrue();
            String webId = docker.idByName(web);
            assertThat(webId).isEqualTo(webResult.id());
            var webNow = docker.inspect(webId);
            assertThat(webNow.getState().getRunning()).isTrue();
            assertThat(webNow.getConfig().getEnv()).contains("V=2");
            assertThat(webNow.getNetworkSettings().getNetworks().get(net).getNetworkID()).isEqualTo(network.getId());
            assertThat(network.getContainers()).as("web's endpoint is on the new network").containsKey(webId);
            assertThat(docker.idByName(api)).isEqualTo(stuck);
            assertThat(docker.moduleContainers(module)).extracting(ObservedContainer::dockerName).containsExactlyInAnyOrder(web, api);
        } finally {
            removeTwoOnNet();
        }
    }

    /**
     * The same, had Docker refused the network's removal for the stuck container (it does not: such a container holds no
     * endpoint; this is the code's answer should a Docker do so). The network keeps its old settings and the containers
     * taken off it are connected again, so web runs on, on it, failed naming Docker's answer; api is still removed by its
     * own plan, and fails with Docker's answer to that removal, not only the network's. Failure model row 111.
     */
    @Test
    void aNetworkDockerWillNotRemoveKeepsItsContainersOnItAndTheStuckOneStillSaysWhy() throws Exception {
        String net = module + "_net", web = module + "-web", api = module + "-api";
        try {
            io.mesh.docker.ContainerRuntime busy = apiStuckRemoving(new com.github.dockerjava.api.exception.DockerException(
                    "Status 403: {\"message\":\"error while removing network: network " + net + " id x has active endpoints\"}", 403));
            String networkId = docker.client().inspectNetworkCmd().withNetworkId(net).exec().getId();
            String webBefore = docker.idByName(web), stuck = docker.idByName(api);
            zk.setDesired(twoOnNet("internal: true", "2"), "r2");
            ApplyReport r2 = here.applier(here.context().withDocker(busy)).apply(module, () -> false);
            ContainerResult webResult = result(r2, "web"), apiResult = result(r2, "api");
            assertThat(webResult.action()).as("%s", r2).isEqualTo(ContainerAction.FAILED);
            assertThat(String.join("\n", webResult.reasons())).as("%s", r2).contains("has active endpoints", "the container that runs is left as it is");
            assertThat(apiResult.action()).as("%s", r2).isEqualTo(ContainerAction.FAILED);
            assertThat(String.join("\n", apiResult.reasons())).as("%s", r2).contains("device or resource busy");

            var network = docker.client().inspectNetworkCmd().withNetworkId(net).exec();
            assertThat(network.getId()).as("the network as it was").isEqualTo(networkId);
            assertThat(network.getInternal()).isNotEqualTo(Boolean.TRUE);
            assertThat(docker.idByName(web)).isEqualTo(webBefore);
            assertThat(docker.inspect(webBefore).getState().getRunning()).isTrue();
            assertThat(network.getContainers()).as("web connected again to the network it was taken off").containsKey(webBefore);
            assertThat(docker.idByName(api)).isEqualTo(stuck);
            assertThat(docker.moduleContainers(module)).extracting(ObservedContainer::dockerName).containsExactlyInAnyOrder(web, api);
        } finally {
            removeTwoOnNet();
        }
    }

    /**
     * A freeze that came since the apply began (during a long pull, say) stops a network's change as it stops a
     * container's: the network keeps its settings and the execution says it was stopped (SPEC.md "Freezes").
     */
    @Test
    void aFreezeSinceTheApplyBeganStopsANetworksChange() throws Exception {
        zk.setDesired(shop(""), "r1");
        assertThat(here.applier().apply(module, () -> false).outcome()).isEqualTo(ApplyOutcome.APPLIED);
        String back = module + "_back";
        String networkId = docker.client().inspectNetworkCmd().withNetworkId(back).exec().getId();
        DesiredRecord changed = zk.setDesired(shop("internal: true"), "r2");
        var ctx = here.context();
        ApplyExecution frozen = new ApplyExecution(docker, ctx.policy(), "host-a", ctx.secrets()).stopChangesWhen(() -> "module frozen by test");
        frozen.run(changed, Map.of());
        assertThat(frozen.stoppedBy()).isEqualTo("module frozen by test");
        assertThat(docker.client().inspectNetworkCmd().withNetworkId(back).exec().getId()).as("not recreated").isEqualTo(networkId);
        assertThat(docker.client().inspectNetworkCmd().withNetworkId(back).exec().getInternal()).isNotEqualTo(Boolean.TRUE);
    }
}
