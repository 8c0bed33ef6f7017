package io.mesh.apply;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.model.Device;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.Ulimit;
import io.mesh.docker.DockerEngine;
import io.mesh.docker.Labels;
import io.mesh.manifest.ManifestParser;
import io.mesh.policy.Policy;
import io.mesh.testing.ApplierExtension;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.ApplyReport.ContainerResult;
import io.mesh.wire.ContainerAction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.slf4j.LoggerFactory;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The compose-grade fields against the real Docker engine and ZooKeeper (decision 17): every field reaches Docker as
 * {@code docker inspect} shows it; a changed field recreates with its reason and an unchanged spec does not;
 * {@code devices}, {@code sysctls} and {@code security-opt} are refused unless the agent allows them; a missing host
 * path fails its container unless {@code create-host-path: true}; a missing image is reported once, with the fix, and
 * logged without a stack trace.
 */
class ComposeFieldsTest {
    @RegisterExtension
    static final ZooKeeperExtension zk = new ZooKeeperExtension();
    private DockerEngine docker;
    @RegisterExtension
    final ApplierExtension here = new ApplierExtension(zk, "hc-");
    private String module;
    private Path dir;

    /** What every container of these tests runs: it stops within a second of SIGTERM, SIGINT or SIGUSR1. */
    private static final String SERVE = "trap 'exit 0' TERM INT USR1; while true; do sleep 1; done";

    @BeforeEach
    void setUp() throws Exception {
        docker = here.docker();
        module = here.module();
        dir = Files.createTempDirectory("hc-compose");
    }

    @AfterEach
    void tearDown() throws Exception {
        try (var files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private Applier applier(Policy policy) {
        return here.applier(here.context().withPolicy(policy));
    }

    /** Module with container {@code web} ({@code network: none} unless a line says otherwise), carrying these lines. */
    private String yaml(String... lines) {
        StringBuilder b = new StringBuilder("module: " + module + "\nhosts: [host-a]\ncontainers:\n  web:\n    image: " + BUSYBOX
                + "\n    stop-timeout: 2s\n    ready: {min-healthy: 0s}\n");
        boolean network = Arrays.stream(lines).anyMatch(l -> l.startsWith("network:"));
        boolean command = Arrays.stream(lines).anyMatch(l -> l.startsWith("command:"));
        if (!network) b.append("    network: none\n");
        if (!command) b.append("    command: [sh, -c, \"").append(SERVE).append("\"]\n");
        for (String l : lines) b.append("    ").append(l).append('\n');
        return b.toString();
    }

    /** @return {@code docker inspect -f TEMPLATE ID}, for what docker-java's model does not carry */
    private static String cli(String id, String template) throws Exception {
        Process p = new ProcessBuilder("docker", "inspect", "-f", template, id).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes()).strip();
        assertThat(p.waitFor()).as(out).isZero();
        return out;
    }

    private static ContainerResult web(ApplyReport r) {
        return r.containers().stream().filter(c -> c.name().equals("web")).findFirst().orElseThrow();
    }

    /**
     * Every compose-grade field at once, the policy's three allowed (and the host's network): Docker's inspect shows
     * each as written.
     */
    static final String[] EVERY_FIELD = {
            "network: host",
            "entrypoint: [/bin/sh, -c]",
            "command: [\"" + SERVE + "\"]",
            "user: \"1000:1000\"",
            "working-dir: /tmp",
            "hostname: hc-web",
            "labels: {com.example.team: store, com.example.tier: 2}",
            "memory: 64m",
            "cpus: 0.5",
            "pids-limit: 64",
            "ulimits: {nofile: {soft: 1024, hard: 2048}, nproc: 512}",
            "tmpfs: [\"/run:size=1m\", /scratch]",
            "read-only: true",
            "extra-hosts: [\"db.internal:192.0.2.10\"]",
            "stop-signal: SIGUSR1",
            "init: true",
            "logging: {driver: json-file, options: {max-size: 1m, max-file: 2}}",
            "dns: [192.0.2.53]",
            "devices: [\"/dev/zero:/dev/hc-zero:r\"]",
            "sysctls: {kernel.shm_rmid_forced: 1}",
            "security-opt: [\"no-new-privileges:true\"]",
    };

    private static Policy allowingTheThree() {
        return Policy.builder().allowDevices(List.of("/dev/zero")).allowSysctls(List.of("kernel.*"))
                .allowSecurityOpts(List.of("no-new-privileges:true")).allowHostNetwork(true).build();
    }

    @Test
    void everyFieldReachesDockerAndASecondApplyChangesNothing() throws Exception {
        Applier applier = applier(allowingTheThree());
        zk.setDesired(yaml(EVERY_FIELD), "r1");

        ApplyReport r = applier.apply(module, () -> false);

        assertThat(r.outcome()).as(r.error()).isEqualTo(ApplyOutcome.APPLIED);
        assertThat(web(r).action()).isEqualTo(ContainerAction.CREATED);
        InspectContainerResponse c = docker.client().inspectContainerCmd(module + "-web").exec();
        assertThat(c.getState().getRunning()).isTrue();
        assertThat(c.getConfig().getEntrypoint()).containsExactly("/bin/sh", "-c");
        assertThat(c.getConfig().getCmd()).containsExactly(SERVE);
        assertThat(c.getConfig().getUser()).isEqualTo("1000:1000");
        assertThat(c.getConfig().getWorkingDir()).isEqualTo("/tmp");
        assertThat(c.getConfig().getHostName()).isEqualTo("hc-web");
        assertThat(cli(c.getId(), "{{.Config.StopSignal}}")).isEqualTo("SIGUSR1"); // docker-java's ContainerConfig has no StopSignal
        assertThat(c.getConfig().getLabels()).containsEntry("com.example.team", "store").containsEntry("com.example.tier", "2")
                .containsEntry(Labels.MODULE, module).containsKey(Labels.SPEC_HASH);
        HostConfig h = c.getHostConfig();
        assertThat(h.getNetworkMode()).isEqualTo("host");
        assertThat(h.getMemory()).isEqualTo(64L * 1024 * 1024);
        assertThat(h.getNanoCPUs()).isEqualTo(500_000_000L);
        assertThat(h.getPidsLimit()).isEqualTo(64L);
        assertThat(h.getUlimits()).extracting(Ulimit::getName, Ulimit::getSoftLong, Ulimit::getHardLong)
                .containsExactlyInAnyOrder(org.assertj.core.groups.Tuple.tuple("nofile", 1024L, 2048L),
                        org.assertj.core.groups.Tuple.tuple("nproc", 512L, 512L));
        assertThat(h.getTmpFs()).isEqualTo(Map.of("/run", "size=1m", "/scratch", ""));
        assertThat(h.getReadonlyRootfs()).isTrue();
        assertThat(h.getExtraHosts()).containsExactly("db.internal:192.0.2.10");
        assertThat(h.getInit()).isTrue();
        assertThat(h.getLogConfig().getType().getType()).isEqualTo("json-file");
        assertThat(h.getLogConfig().getConfig()).isEqualTo(Map.of("max-size", "1m", "max-file", "2"));
        assertThat(h.getDns()).containsExactly("192.0.2.53");
        assertThat(h.getDevices()).extracting(Device::getPathOnHost, Device::getPathInContainer, Device::getcGroupPermissions)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("/dev/zero", "/dev/hc-zero", "r"));
        assertThat(h.getSysctls()).isEqualTo(Map.of("kernel.shm_rmid_forced", "1"));
        assertThat(h.getSecurityOpts()).containsExactly("no-new-privileges:true");

        // The label keeps the spec: an apply of the same spec pushed again plans it unchanged (a no-op reconcile would
        // return the last report), and Docker sees no container event.
        zk.setDesired(yaml(EVERY_FIELD), "r2");
        Instant from = Instant.now();
        ApplyReport again = applier.apply(module, () -> false);
        assertThat(again.revision()).isEqualTo("r2");
        assertThat(web(again).action()).isEqualTo(ContainerAction.UNCHANGED);
        assertThat(docker.inspect(module + "-web").getId()).isEqualTo(c.getId());
        // Docker's events API filters by whole seconds: keep the events at or after this apply began
        long fromNanos = from.getEpochSecond() * 1_000_000_000L + from.getNano();
        assertThat(TestDocker.events(module, from, Instant.now())).filteredOn(e -> e.getTimeNano() != null && e.getTimeNano() >= fromNanos)
                .extracting(TestDocker::action).noneMatch(a -> List.of("create", "destroy", "stop", "die").contains(a));
    }

    @Test
    void aChangedFieldRecreatesWithItsReason() throws Exception {
        Applier applier = applier(Policy.DEFAULT);
        zk.setDesired(yaml("memory: 64m", "labels: {com.example.team: store}"), "r1");
        assertThat(applier.apply(module, () -> false).outcome()).isEqualTo(ApplyOutcome.APPLIED);
        String before = docker.inspect(module + "-web").getId();

        zk.setDesired(yaml("memory: 128m", "labels: {com.example.team: store}", "stop-signal: SIGINT"), "r2");
        ApplyReport r = applier.apply(module, () -> false);

        assertThat(r.outcome()).as(r.error()).isEqualTo(ApplyOutcome.APPLIED);
        assertThat(web(r).action()).isEqualTo(ContainerAction.RECREATED);
        assertThat(web(r).reasons()).containsExactly("memory: 64m -> 128m", "stop-signal: unset -> SIGINT");
        InspectContainerResponse after = docker.client().inspectContainerCmd(module + "-web").exec();
        assertThat(after.getId()).isNotEqualTo(before);
        assertThat(after.getHostConfig().getMemory()).isEqualTo(128L * 1024 * 1024);
        assertThat(cli(after.getId(), "{{.Config.StopSignal}}")).isEqualTo("SIGINT");
        assertThat(docker.inspect(before)).isNull();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            devices: [/dev/zero]                       | --allow-device /dev/zero
            sysctls: {kernel.shm_rmid_forced: 1}       | --allow-sysctl kernel.shm_rmid_forced
            security-opt: ["no-new-privileges:true"]   | --allow-security-opt no-new-privileges:true
            """)
    void byDefaultDevicesSysctlsAndSecurityOptionsAreRefusedAndNothingIsCreated(String line, String flag) throws Exception {
        zk.setDesired(yaml(line), "r1");
        Instant from = Instant.now();

        ApplyReport r = applier(Policy.DEFAULT).apply(module, () -> false);

        assertThat(r.outcome()).as(line).isEqualTo(ApplyOutcome.FAILED);
        assertThat(web(r).action()).isEqualTo(ContainerAction.FAILED);
        String field = line.substring(0, line.indexOf(':'));
        assertThat(web(r).reasons()).anySatisfy(s -> assertThat(s).contains("refused by this agent's policy", field + ":", flag));
        assertThat(r.error()).contains(module + "-web", flag);
        assertThat(docker.idByName(module + "-web")).isNull();
        assertThat(TestDocker.events(module, from, Instant.now())).isEmpty();
    }

    @Test
    void aRuleAllowsOnlyWhatItNames() throws Exception {
        ManifestParser parser = new ManifestParser();
        var spec = parser.parse(yaml("sysctls: {kernel.shm_rmid_forced: 1, net.core.somaxconn: 1024}", "devices: [/dev/zero, /dev/null]",
                "security-opt: [\"no-new-privileges:true\", seccomp=unconfined]")).get(0).containers().get("web");
        Policy p = Policy.builder().allowSysctls(List.of("kernel.*")).allowDevices(List.of("/dev/zero"))
                .allowSecurityOpts(List.of("no-new-privileges:true")).allowHostNetwork(true).build();
        assertThat(p.refusals(spec)).containsExactly(
                "devices: /dev/null is not allowed on this host (the agent allows it with --allow-device /dev/null)",
                "sysctls: net.core.somaxconn is not allowed on this host (the agent allows it with --allow-sysctl net.core.somaxconn)",
                "security-opt: seccomp=unconfined is not allowed on this host (the agent allows it with --allow-security-opt seccomp=unconfined)");
        assertThat(Policy.builder().allowSysctls(List.of("net.*")).build().refusals(spec)).anySatisfy(s -> assertThat(s).contains("kernel.shm_rmid_forced"));
        assertThat(Policy.builder().allowSysctls(List.of("kernel.shm")).build().refusals(spec)).anySatisfy(s -> assertThat(s).contains("kernel.shm_rmid_forced"));
        assertThat(allowingTheThree().toString()).contains("devices [/dev/zero]", "sysctls [kernel.*]", "security-opt [no-new-privileges:true]");
    }

    @Test
    void aMissingHostPathFailsBeforeAnyDockerCallUnlessCreateHostPath() throws Exception {
        Applier applier = applier(Policy.builder().allowHostPaths(List.of(dir.toString())).build());
        Path missing = dir.resolve("data");
        zk.setDesired(yaml("volumes: [\"" + missing + ":/data\"]"), "r1");
        Instant from = Instant.now();

        ApplyReport refused = applier.apply(module, () -> false);

        assertThat(refused.outcome()).isEqualTo(ApplyOutcome.FAILED);
        assertThat(web(refused).reasons()).anySatisfy(s -> assertThat(s).contains("host path " + missing + " does not exist", "create-host-path: true"));
        assertThat(refused.error()).contains(missing.toString(), "create-host-path: true");
        assertThat(docker.idByName(module + "-web")).isNull();
        assertThat(TestDocker.events(module, from, Instant.now())).isEmpty();
        assertThat(missing).doesNotExist();

        zk.setDesired(yaml("volumes: [\"" + missing + ":/data\"]", "create-host-path: true"), "r2");
        ApplyReport created = applier.apply(module, () -> false);

        assertThat(created.outcome()).as(created.error()).isEqualTo(ApplyOutcome.APPLIED);
        assertThat(web(created).action()).isEqualTo(ContainerAction.CREATED);
        assertThat(missing).isDirectory(); // Docker made it, as docker run -v does
        assertThat(docker.inspect(module + "-web").getHostConfig().getBinds()).extracting(b -> b.getPath()).containsExactly(missing.toString());

        // The flag is not part of the hash: turning it off again recreates nothing, and the path now exists.
        zk.setDesired(yaml("volumes: [\"" + missing + ":/data\"]"), "r3");
        assertThat(web(applier.apply(module, () -> false)).action()).isEqualTo(ContainerAction.UNCHANGED);
    }

    @Test
    void aMissingImageIsReportedOnceWithTheFixAndLoggedWithoutAStackTrace() throws Exception {
        String image = "hc-missing/nothing:1";
        assertThat(docker.imagePresent(image)).isFalse();
        String yaml = "module: " + module + "\nhosts: [host-a]\ncontainers:\n"
                + "  web:\n    image: " + image + "\n    network: none\n"
                + "  worker:\n    image: " + image + "\n    network: none\n";
        zk.setDesired(yaml, "r1");
        ListAppender<ILoggingEvent> logs = new ListAppender<>();
        logs.start();
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        root.addAppender(logs);
        try {
            Applier applier = applier(Policy.DEFAULT);
            ApplyReport first = applier.apply(module, () -> false);
            ApplyReport second = applier.apply(module, () -> false); // a retry

            for (ApplyReport r : List.of(first, second)) {
                assertThat(r.outcome()).isEqualTo(ApplyOutcome.FAILED);
                assertThat(r.error()).contains("image " + image + " is not on this host and could not be pulled", "docker load");
                // Once per apply: one container says why, the other names it.
                assertThat(r.error().split("could not be pulled", -1)).hasSize(2);
                assertThat(r.containers()).extracting(ContainerResult::action).containsOnly(ContainerAction.FAILED);
                assertThat(r.error()).containsPattern("image " + image + " is not available \\(see " + module + "-(web|worker)\\)");
            }
            assertThat(docker.moduleContainers(module)).isEmpty();
        } finally {
            root.detachAppender(logs);
        }
        List<ILoggingEvent> events;
        synchronized (logs.list) {
            events = List.copyOf(logs.list);
        }
        assertThat(events).as("no stack trace is logged").allSatisfy(e -> assertThat(e.getThrowableProxy()).as(e.getFormattedMessage()).isNull());
        assertThat(events).noneMatch(e -> e.getLoggerName().startsWith("com.github.dockerjava"));
        // One line per apply: the report's.
        assertThat(events).filteredOn(e -> e.getFormattedMessage().contains(image)).hasSize(2)
                .allSatisfy(e -> assertThat(e.getFormattedMessage()).contains("outcome=failed", "docker load").doesNotContain("\n"));
    }
}
