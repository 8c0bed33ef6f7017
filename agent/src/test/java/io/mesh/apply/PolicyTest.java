package io.mesh.apply;

import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.model.Capability;
import io.mesh.docker.DockerEngine;
import io.mesh.manifest.ManifestParser;
import io.mesh.policy.Policy;
import io.mesh.testing.ApplierExtension;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.window.WindowRunner;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.ApplyReport.ContainerResult;
import io.mesh.wire.ContainerAction;
import io.mesh.wire.WindowOutcome;
import io.mesh.wire.WindowResult;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The agent's policy against a real Docker engine and ZooKeeper: host paths outside the allowed prefixes,
 * privileged mode, host PID, the host's network (asked for, or a container's default) and added capabilities are refused (reported {@code failed} with the reason, nothing
 * created, what runs keeps running) unless the agent's configuration allows them.
 */
@Tag("slow") // over 10 s of engine or ZooKeeper waits: the full run, not --fast (which must stay under 2 min)
class PolicyTest {
    @RegisterExtension
    static final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    final ApplierExtension here = new ApplierExtension(zk, "pol");
    private DockerEngine docker;
    private String module;
    private Path allowed;

    @BeforeEach
    void setUp() throws Exception {
        docker = here.docker();
        module = here.module();
        allowed = Files.createTempDirectory("mesh-policy");
    }

    @AfterEach
    void tearDown() throws Exception {
        TestDocker.clean(module, module + "-data");
        try (var files = Files.walk(allowed)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private Applier applier(Policy policy) {
        return here.applier(here.context().withPolicy(policy));
    }

    /**
     * A module with container {@code web} carrying these extra lines, on {@code network: none} unless a line gives a
     * network or is {@value #NO_NETWORK} (then it names none, and gets the default, the host's).
     */
    private String yaml(String... extra) {
        boolean network = java.util.Arrays.stream(extra).anyMatch(e -> e.startsWith("network:") || e.equals(NO_NETWORK));
        StringBuilder b = new StringBuilder("module: " + module + "\nhosts: [host-a]\ncontainers:\n  web:\n    image: " + BUSYBOX
                + "\n    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + (network ? "" : "    network: none\n") + "    stop-timeout: 1s\n");
        for (String e : extra) if (!e.equals(NO_NETWORK)) b.append("    ").append(e).append('\n');
        return b.toString();
    }

    /** A line for {@link #yaml} that leaves {@code network} out. */
    private static final String NO_NETWORK = "<no network>";

    private static ContainerResult web(ApplyReport r) {
        return r.containers().stream().filter(c -> c.name().equals("web")).findFirst().orElseThrow();
    }

    /** {@code <tmp>} stands for a fresh temporary directory: by default no host path is allowed. */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            privileged: true          | --allow-privileged
            pid: host                 | --allow-host-pid
            network: host             | --allow-host-network
            <no network>              | --allow-host-network
            cap-add: [NET_ADMIN]      | --allow-cap NET_ADMIN
            volumes: ["<tmp>:/data"]  | --allow-host-path
            volumes: ["/:/host"]      | --allow-host-path
            """)
    void byDefaultEachRiskyFieldIsRefusedNamingTheOptionAndNothingIsCreated(String field, String option) throws Exception {
        Applier applier = applier(Policy.DEFAULT);
        String line = field.replace("<tmp>", allowed.toString());
        zk.setDesired(yaml(line), "r1");
        ApplyReport r = applier.apply(module, () -> false);
        assertThat(r.outcome()).as(line).isEqualTo(ApplyOutcome.FAILED);
        assertThat(web(r).action()).isEqualTo(ContainerAction.FAILED);
        assertThat(web(r).reasons()).as(line).anySatisfy(s -> assertThat(s).contains("refused by this agent's policy", option));
        assertThat(r.error()).contains(module + "-web", option);
        assertThat(docker.moduleContainers(module)).as(line).isEmpty();
        assertThat(docker.idByName(module + "-web")).isNull();
    }

    @Test
    void aNamedVolumeNeedsNoPermissionEvenAfterARefusal() throws Exception {
        Applier applier = applier(Policy.DEFAULT);
        zk.setDesired(yaml("privileged: true"), "r1");
        assertThat(applier.apply(module, () -> false).outcome()).isEqualTo(ApplyOutcome.FAILED);
        zk.setDesired(yaml("volumes: [\"" + module + "-data:/data\"]"), "r2");
        ApplyReport ok = applier.apply(module, () -> false);
        assertThat(ok.outcome()).isEqualTo(ApplyOutcome.APPLIED);
        assertThat(web(ok).action()).isEqualTo(ContainerAction.CREATED);
    }

    @Test
    void aRefusedRecreateLeavesTheRunningContainerRunning() throws Exception {
        Applier applier = applier(Policy.DEFAULT);
        zk.setDesired(yaml(), "r1");
        assertThat(applier.apply(module, () -> false).outcome()).isEqualTo(ApplyOutcome.APPLIED);
        InspectContainerResponse before = docker.inspect(module + "-web");

        zk.setDesired(yaml("privileged: true", "cap-add: [SYS_ADMIN]"), "r2");
        ApplyReport r = applier.apply(module, () -> false);

        assertThat(r.outcome()).isEqualTo(ApplyOutcome.FAILED);
        assertThat(web(r).reasons()).contains("privileged: false -> true", "cap-add: [] -> [SYS_ADMIN]");
        assertThat(web(r).reasons()).anySatisfy(s -> assertThat(s).contains("--allow-privileged"))
                .anySatisfy(s -> assertThat(s).contains("--allow-cap SYS_ADMIN"));
        assertThat(web(r).id()).isEqualTo(before.getId());
        InspectContainerResponse after = docker.inspect(module + "-web");
        assertThat(after.getId()).isEqualTo(before.getId());
        assertThat(after.getState().getRunning()).isTrue();
        assertThat(after.getState().getStartedAt()).isEqualTo(before.getState().getStartedAt());
        assertThat(after.getHostConfig().getPrivileged()).isFalse();
        assertThat(docker.moduleContainers(module)).hasSize(1);
    }

    @Test
    void whatTheConfigurationAllowsIsCreatedAsAsked() throws Exception {
        Path data = Files.createDirectory(allowed.resolve("data"));
        Applier applier = applier(new Policy(List.of(allowed.toString()), false, true, List.of("NET_ADMIN")));
        zk.setDesired(yaml("pid: host", "cap-add: [NET_ADMIN]", "volumes: [\"" + data + ":/data:ro\"]"), "r1");

        ApplyReport r = applier.apply(module, () -> false);

        assertThat(r.outcome()).isEqualTo(ApplyOutcome.APPLIED);
        InspectContainerResponse c = docker.inspect(module + "-web");
        assertThat(c.getState().getRunning()).isTrue();
        assertThat(c.getHostConfig().getPidMode()).isEqualTo("host");
        assertThat(c.getHostConfig().getCapAdd()).containsExactly(Capability.NET_ADMIN);
        assertThat(c.getHostConfig().getBinds()).extracting(b -> b.getPath()).containsExactly(data.toString());

        // A capability the configuration does not name is still refused, and the container keeps running.
        zk.setDesired(yaml("pid: host", "cap-add: [NET_ADMIN, SYS_MODULE]", "volumes: [\"" + data + ":/data:ro\"]"), "r2");
        ApplyReport r2 = applier.apply(module, () -> false);
        assertThat(r2.outcome()).isEqualTo(ApplyOutcome.FAILED);
        assertThat(r2.error()).contains("cap-add: SYS_MODULE").doesNotContain("cap-add: NET_ADMIN is not");
        assertThat(docker.inspect(module + "-web").getId()).isEqualTo(c.getId());
        assertThat(docker.inspect(module + "-web").getState().getRunning()).isTrue();
    }

    /**
     * With {@code --allow-privileged} the policy lets a privileged container through to Docker, which creates it
     * privileged. (This machine's engine runs without every capability in its bounding set, so runc may refuse to
     * start it; the apply then reports the engine's error, not a policy refusal.)
     */
    @Test
    void allowPrivilegedLetsAPrivilegedContainerReachTheEngine() throws Exception {
        Applier applier = applier(new Policy(List.of(), true, false, List.of()));
        zk.setDesired(yaml("privileged: true"), "r1");
        java.time.Instant from = java.time.Instant.now();

        ApplyReport r = applier.apply(module, () -> false);

        assertThat(web(r).reasons()).noneMatch(s -> s.contains("policy"));
        assertThat(TestDocker.events(module, from, java.time.Instant.now()))
                .anySatisfy(e -> {
                    assertThat(TestDocker.action(e)).isEqualTo("create");
                    assertThat(TestDocker.name(e)).isEqualTo(module + "-web");
                });
        if (r.outcome() == ApplyOutcome.APPLIED) {
            assertThat(docker.inspect(module + "-web").getHostConfig().getPrivileged()).isTrue();
        } else {
            assertThat(r.error()).contains("create failed");
            assertThat(docker.moduleContainers(module)).isEmpty();
        }
    }

    @Test
    void hostPathsAreComparedByComponentAndAfterResolvingLinks() throws Exception {
        Policy p = new Policy(List.of(allowed.toString()), false, false, List.of());
        ManifestParser parser = new ManifestParser();
        Path link = Files.createSymbolicLink(allowed.resolve("etc"), Path.of("/etc"));
        Files.createSymbolicLink(allowed.resolve("dangling"), Path.of("/nonexistent-mesh-target"));

        assertThat(p.refusals(parser.parse(yaml("volumes: [\"" + allowed + "/sub/dir:/d\"]")).get(0).containers().get("web"))).isEmpty();
        assertThat(p.refusals(parser.parse(yaml("volumes: [\"" + allowed + "2:/d\"]")).get(0).containers().get("web")))
                .singleElement().asString().contains("not under an allowed prefix");
        assertThat(p.refusals(parser.parse(yaml("volumes: [\"" + link + ":/d\"]")).get(0).containers().get("web")))
                .singleElement().asString().contains("host path " + link);
        assertThat(p.refusals(parser.parse(yaml("volumes: [\"" + link + "/newdir:/d\"]")).get(0).containers().get("web"))).hasSize(1);
        assertThat(p.refusals(parser.parse(yaml("volumes: [\"" + allowed + "/dangling:/d\"]")).get(0).containers().get("web"))).hasSize(1);
        assertThat(new Policy(List.of("/"), false, false, List.of())
                .refusals(parser.parse(yaml("volumes: [\"/etc:/d:ro\"]")).get(0).containers().get("web"))).isEmpty();
        assertThatThrownBy(() -> new Policy(List.of("srv/mesh"), false, false, List.of())).hasMessageContaining("--allow-host-path");
        assertThatThrownBy(() -> new Policy(List.of("/srv/../etc"), false, false, List.of())).hasMessageContaining("absolute, clean");
        assertThat(Policy.DEFAULT.toString()).contains("host paths under none", "privileged refused");
    }

    @Test
    void aStepWithARefusedHostPathFailsTheWindowBeforeAnythingIsStopped() throws Exception {
        String yaml = yaml() + "schedules:\n  gc:\n    cron: \"30 3 * * *\"\n    while-stopped: [web]\n"
                + "    step: {image: " + BUSYBOX + ", command: [\"true\"], volumes: [\"/etc:/host-etc:ro\"]}\n    timeout: 1m\n";
        zk.setDesired(yaml, "r1");
        assertThat(applier(Policy.DEFAULT).apply(module, () -> false).outcome()).isEqualTo(ApplyOutcome.APPLIED);
        InspectContainerResponse before = docker.inspect(module + "-web");

        WindowRunner runner = here.windows();
        WindowResult w = runner.run(module, "gc", Duration.ofSeconds(5));

        assertThat(w.succeeded()).isFalse();
        assertThat(w.outcome()).isEqualTo(WindowOutcome.FAILED);
        assertThat(w.error()).contains("step refused by this agent's policy", "/etc", "--allow-host-path");
        InspectContainerResponse after = docker.inspect(module + "-web");
        assertThat(after.getState().getRunning()).isTrue();
        assertThat(after.getState().getStartedAt()).isEqualTo(before.getState().getStartedAt());
        assertThat(docker.containersWithLabel(io.mesh.docker.Labels.WINDOW, null)).noneMatch(id -> {
            InspectContainerResponse i = docker.inspect(id);
            return i != null && module.equals(i.getConfig().getLabels().get(io.mesh.docker.Labels.MODULE));
        });
    }

    /**
     * The host's network reaches what listens on the host's loopback (the embedded ZooKeeper, the coordinator): refused
     * by default, asked for or as a container's default, by the plan ({@code mesh push --plan} asks the agent's
     * {@link DryRun}) as by the apply; {@code --allow-host-network} lets it through, and Docker runs it on the host's
     * network.
     */
    @Test
    void theHostsNetworkIsRefusedByThePlanAndTheApplyUnlessAllowed() throws Exception {
        io.mesh.manifest.ModuleSpec spec = new ManifestParser().parse(yaml(NO_NETWORK)).get(0);
        zk.setDesired(yaml(NO_NETWORK), "r1");
        DryRun refusing = new DryRun(here.store(), docker, "host-a", Policy.DEFAULT, here.context().secrets());
        io.mesh.wire.PlanAnswer.ModulePlan plan = refusing.plan(spec);
        assertThat(plan.outcome()).isEqualTo(io.mesh.wire.PlanOutcome.WOULD_FAIL);
        var planned = plan.containers().stream().filter(c -> c.name().equals("web")).findFirst().orElseThrow();
        assertThat(planned.action()).isEqualTo(ContainerAction.FAILED);
        assertThat(planned.problems()).singleElement().asString()
                .contains("refused by this agent's policy", "network: host", "default", "loopback", "--allow-host-network");
        assertThat(docker.idByName(module + "-web")).as("a plan creates nothing").isNull();

        ApplyReport refused = applier(Policy.DEFAULT).apply(module, () -> false);
        assertThat(refused.outcome()).isEqualTo(ApplyOutcome.FAILED);
        assertThat(refused.error()).contains(module + "-web", "network: host", "--allow-host-network");
        assertThat(docker.idByName(module + "-web")).isNull();

        Policy allowing = Policy.builder().allowHostNetwork(true).build();
        assertThat(allowing.toString()).contains("network host allowed");
        assertThat(Policy.DEFAULT.toString()).contains("network host refused");
        assertThat(new DryRun(here.store(), docker, "host-a", allowing, here.context().secrets()).plan(spec).outcome())
                .isEqualTo(io.mesh.wire.PlanOutcome.WOULD_APPLY);
        ApplyReport r = applier(allowing).apply(module, () -> false);
        assertThat(r.outcome()).as(r.error()).isEqualTo(ApplyOutcome.APPLIED);
        assertThat(docker.inspect(module + "-web").getHostConfig().getNetworkMode()).isEqualTo("host");
    }

    /** A step on the host's network is refused like a container, before the window stops anything. */
    @Test
    void aStepOnTheHostsNetworkFailsTheWindowBeforeAnythingIsStoppedUnlessAllowed() throws Exception {
        String yaml = yaml() + "schedules:\n  gc:\n    cron: \"30 3 * * *\"\n    while-stopped: [web]\n"
                + "    step: {image: " + BUSYBOX + ", command: [\"true\"], network: host}\n    timeout: 1m\n";
        zk.setDesired(yaml, "r1");
        assertThat(applier(Policy.DEFAULT).apply(module, () -> false).outcome()).isEqualTo(ApplyOutcome.APPLIED);
        InspectContainerResponse before = docker.inspect(module + "-web");

        WindowResult w = new WindowRunner(here.context().withPolicy(Policy.DEFAULT)).run(module, "gc", Duration.ofSeconds(5));

        assertThat(w.outcome()).isEqualTo(WindowOutcome.FAILED);
        assertThat(w.error()).contains("step refused by this agent's policy", "step.network: host", "--allow-host-network");
        InspectContainerResponse after = docker.inspect(module + "-web");
        assertThat(after.getState().getRunning()).isTrue();
        assertThat(after.getState().getStartedAt()).isEqualTo(before.getState().getStartedAt());

        WindowResult allowed = new WindowRunner(here.context().withPolicy(Policy.builder().allowHostNetwork(true).build()))
                .run(module, "gc", Duration.ofSeconds(5));
        assertThat(allowed.succeeded()).as(String.valueOf(allowed)).isTrue();
    }
}
