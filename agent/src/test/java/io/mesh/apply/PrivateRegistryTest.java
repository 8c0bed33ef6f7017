package io.mesh.apply;

import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.model.Event;
import io.mesh.docker.DockerEngine;
import io.mesh.docker.RegistryAuth;
import io.mesh.secrets.DigestKey;
import io.mesh.secrets.SecretsDir;
import io.mesh.testing.ApplierExtension;
import io.mesh.testing.AuthRegistry;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.ApplyReport.ContainerResult;
import io.mesh.wire.ContainerAction;
import io.mesh.wire.Json;
import io.mesh.zk.MeshStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Images from a private registry (SPEC.md, "Images"; decision 20), against the real Distribution registry with
 * htpasswd authentication on loopback and the real engine: the credentials of {@code --docker-config} ({@code auths},
 * a credential helper), what a refused pull says and leaves running, and the three pull policies. What happened is
 * read from Docker (inspect, image {@code pull} events), the registry (its manifest digests) and the report node in
 * ZooKeeper.
 */
@Tag("slow") // a registry container and real pulls: the full run, not --fast
class PrivateRegistryTest {
    private static final String SERVE = "[sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]";
    private static AuthRegistry registry;
    /** The digest the registry gives {@code hm/busybox:1} (mesh-demo/busybox:1 pushed). */
    private static String busyboxDigest;

    @RegisterExtension
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @TempDir
    Path config;
    @TempDir
    Path bin;
    @TempDir
    Path state;
    @RegisterExtension
    final ApplierExtension here = new ApplierExtension(zk, "hm-");
    private final List<DockerEngine> engines = new ArrayList<>();
    private final List<String> images = new ArrayList<>();
    private String module;
    private String image;

    @BeforeAll
    static void startRegistry() throws Exception {
        registry = AuthRegistry.start("hm");
        busyboxDigest = registry.push(BUSYBOX, "hm/busybox", "1");
    }

    @AfterAll
    static void stopRegistry() {
        if (registry != null) registry.close();
    }

    @BeforeEach
    void setUp() {
        module = here.module();
        image = registry.host() + "/hm/busybox:1";
        registry.removeLocal(image); // each test starts with the image away from this host
        registry.removeLocal(registry.host() + "/hm/busybox@" + busyboxDigest);
    }

    @AfterEach
    void tearDown() throws Exception {
        TestDocker.clean(module); // before the images it runs are removed (the extension cleans again after)
        for (String ref : List.of(image, registry.host() + "/hm/busybox@" + busyboxDigest)) registry.removeLocal(ref);
        for (String id : images) {
            try {
                TestDocker.engine().client().removeImageCmd(id).withForce(true).exec();
            } catch (RuntimeException ignored) {
                // untagged and gone with its last reference
            }
        }
        for (DockerEngine e : engines) e.close();
    }

    /** An applier whose engine pulls with the credentials of {@code config} (the agent's --docker-config). */
    private Applier applier() throws Exception {
        DockerEngine e = new DockerEngine(null, DockerEngine.CALL_TIMEOUT, new RegistryAuth(config, List.of(bin)));
        engines.add(e);
        return here.applier(here.context().withDocker(e));
    }

    /** One module: container {@code app} (these lines), and container {@code local} from an image on this host. */
    private String yaml(String app) {
        return "module: " + module + "\nhosts: [host-a]\ncontainers:\n"
                + "  app:\n    image: " + image + "\n    network: none\n    stop-timeout: 2s\n    command: " + SERVE + "\n"
                + "    ready: {min-healthy: 0s}\n" + app
                + "  local:\n    image: " + BUSYBOX + "\n    network: none\n    stop-timeout: 2s\n    command: " + SERVE + "\n"
                + "    ready: {min-healthy: 0s}\n";
    }

    /** Sets the desired state and applies it; returns the report as the report node in ZooKeeper holds it. */
    private ApplyReport apply(Applier applier, String app, String revision) throws Exception {
        zk.setDesired(yaml(app), revision);
        applier.apply(module, () -> false);
        return Json.read(zk.client().getData().forPath(zk.paths().report("host-a", module)), ApplyReport.class);
    }

    private static ContainerResult container(ApplyReport r, String name) {
        return r.containers().stream().filter(c -> c.name().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no container " + name + " in " + r));
    }

    private InspectContainerResponse inspect(String name) {
        return TestDocker.engine().inspect(module + "-" + name);
    }

    /**
     * A pull tells its layers as dockerd reports them (decision 32: the apply's progress counts them): an image of one
     * layer of its own over busybox's (here already) counts busybox's done at once and its own once pulled, and the
     * counts change only when a layer is new or done, not at each download event. (An image whose content is all here
     * already gets no layer items from dockerd: nothing to count, and none is told.)
     */
    @Test
    void aPullTellsItsLayersUntilEveryOneIsDone() throws Exception {
        var client = TestDocker.engine().client();
        String made = client.createContainerCmd(BUSYBOX).withCmd("sh", "-c", "echo " + module + " > /unique")
                .withLabels(java.util.Map.of(io.mesh.docker.Labels.MODULE, module)).exec().getId();
        client.startContainerCmd(made).exec();
        client.waitContainerCmd(made).exec(new com.github.dockerjava.api.command.WaitContainerResultCallback()).awaitStatusCode(30, java.util.concurrent.TimeUnit.SECONDS);
        String local = "hm-progress-" + module;
        String committed = client.commitCmd(made).withRepository(local).withTag("1").exec();
        registry.push(local + ":1", "hm/unique", "1");
        client.removeContainerCmd(made).withForce(true).exec();
        client.removeImageCmd(committed).withForce(true).exec(); // its own layer leaves this host; busybox's stay
        images.add(committed);
        Files.writeString(config.resolve("config.json"), registry.configJsonWithAuths(AuthRegistry.PASSWORD));
        DockerEngine e = new DockerEngine(null, DockerEngine.CALL_TIMEOUT, new RegistryAuth(config, List.of(bin)));
        engines.add(e);
        List<int[]> told = new java.util.concurrent.CopyOnWriteArrayList<>();
        String ref = registry.host() + "/hm/unique:1";
        try {
            e.pull(ref, l -> told.add(new int[] {l.done(), l.total()}));
        } finally {
            registry.removeLocal(ref);
        }
        assertThat(told).as("layer counts told").isNotEmpty();
        int[] last = told.get(told.size() - 1);
        assertThat(last[1]).as("layers: busybox's and its own").isGreaterThanOrEqualTo(2);
        assertThat(last[0]).as("layers done at the end").isEqualTo(last[1]);
        assertThat(told).as("its own layer was told before it was done").anyMatch(c -> c[0] < c[1]);
        assertThat(told.size()).as("one telling per new or finished layer at most").isLessThanOrEqualTo(2 * last[1]);
    }

    @Test
    void anImageOfAPrivateRegistryIsPulledWithTheAuthsOfDockerConfigAndTheReportNamesItsDigest() throws Exception {
        Files.writeString(config.resolve("config.json"), registry.configJsonWithAuths(AuthRegistry.PASSWORD));
        assertThat(TestDocker.engine().imagePresent(image)).isFalse();
        Instant from = Instant.now();
        ApplyReport r = apply(applier(), "    pull: missing\n", "r1");
        assertThat(r.outcome()).as("report %s", r).isEqualTo(ApplyOutcome.APPLIED);
        ContainerResult app = container(r, "app");
        assertThat(app.action()).isEqualTo(ContainerAction.CREATED);
        InspectContainerResponse running = inspect("app");
        assertThat(running.getState().getRunning()).isTrue();
        assertThat(running.getConfig().getImage()).isEqualTo(image);
        // which build runs: Docker's image id, and the digest the registry itself gives the tag
        assertThat(app.imageId()).isEqualTo(running.getImageId());
        assertThat(app.imageDigest()).isEqualTo(registry.host() + "/hm/busybox@" + busyboxDigest);
        assertThat(registry.pulls(from, Instant.now())).containsExactly(image);
        // mesh-demo/busybox:1 is the image pushed as hm/busybox:1, the same id: but no registry names it under its own
        // repository, so its report names no digest rather than another repository's
        assertThat(container(r, "local").imageId()).isEqualTo(inspect("local").getImageId()).isEqualTo(app.imageId());
        assertThat(container(r, "local").imageDigest()).isNull();
        // the image is here now: pull: missing does not pull it again for a changed spec
        Instant again = Instant.now();
        assertThat(apply(applier(), "    pull: missing\n    env: {V: \"2\"}\n", "r2").outcome()).isEqualTo(ApplyOutcome.APPLIED);
        assertThat(registry.pulls(again, Instant.now())).isEmpty();
    }

    /**
     * Without credentials, and with wrong ones, the container that needs the private image fails naming the registry
     * and the fix; the module's other container is created; and a container of the image already running is not
     * stopped by a recreate whose pull fails (the pull comes before any stop).
     */
    @Test
    void aRefusedPullFailsTheContainerNamingTheRegistryAndTheFixAndStopsNothing() throws Exception {
        ApplyReport none = apply(applier(), "", "r1"); // config holds no config.json: no credentials
        assertThat(none.outcome()).isEqualTo(ApplyOutcome.FAILED);
        assertThat(container(none, "app").action()).isEqualTo(ContainerAction.FAILED);
        assertThat(String.join("; ", container(none, "app").reasons()))
                .contains("registry " + registry.host() + " wants credentials and the agent has none for it")
                .contains(config.resolve("config.json").toString()).contains("--docker-config");
        assertThat(none.error()).contains(module + "-app");
        assertThat(container(none, "local").action()).isEqualTo(ContainerAction.CREATED);
        assertThat(inspect("app")).isNull();
        assertThat(inspect("local").getState().getRunning()).isTrue();

        Files.writeString(config.resolve("config.json"), registry.configJsonWithAuths("not-" + AuthRegistry.PASSWORD));
        ApplyReport wrong = apply(applier(), "", "r2");
        assertThat(String.join("; ", container(wrong, "app").reasons()))
                .contains("registry " + registry.host() + " refused the agent's credentials from auths in " + config.resolve("config.json"))
                .contains("--docker-config");

        // with the right ones it runs; then a recreate (changed env) whose pull is refused leaves it running
        Files.writeString(config.resolve("config.json"), registry.configJsonWithAuths(AuthRegistry.PASSWORD));
        assertThat(apply(applier(), "", "r3").outcome()).isEqualTo(ApplyOutcome.APPLIED);
        String runningId = inspect("app").getId();
        registry.removeLocal(image);
        registry.removeLocal(registry.host() + "/hm/busybox@" + busyboxDigest);
        Files.writeString(config.resolve("config.json"), registry.configJsonWithAuths("not-" + AuthRegistry.PASSWORD));
        Instant from = Instant.now();
        ApplyReport refused = apply(applier(), "    env: {V: \"2\"}\n", "r4");
        assertThat(container(refused, "app").action()).isEqualTo(ContainerAction.FAILED);
        assertThat(String.join("; ", container(refused, "app").reasons())).contains("env: added V").contains("refused the agent's credentials");
        assertThat(inspect("app").getId()).isEqualTo(runningId);
        assertThat(inspect("app").getState().getRunning()).isTrue();
        long fromNanos = from.getEpochSecond() * 1_000_000_000L + from.getNano();
        List<Event> events = TestDocker.events(module, from, Instant.now()).stream().filter(e -> e.getTimeNano() >= fromNanos).toList();
        assertThat(events).as("Docker's container events of the refused recreate").isEmpty();
    }

    /** A credential helper named by credHelpers, found on the agent's PATH, gives the credentials (Docker's protocol). */
    @Test
    void aCredentialHelperGivesTheCredentials() throws Exception {
        Path helper = bin.resolve("docker-credential-hmtest");
        Files.writeString(helper, "#!/bin/sh\nread -r addr\necho \"$1 $addr\" >> " + bin.resolve("asked") + "\n"
                + "[ \"$1\" = get ] && [ \"$addr\" = " + registry.host() + " ] || { echo 'credentials not found in native keychain'; exit 1; }\n"
                + "echo '{\"ServerURL\":\"" + registry.host() + "\",\"Username\":\"" + AuthRegistry.USER + "\",\"Secret\":\"" + AuthRegistry.PASSWORD + "\"}'\n");
        Files.setPosixFilePermissions(helper, PosixFilePermissions.fromString("rwx------"));
        Files.writeString(config.resolve("config.json"), "{\"credHelpers\":{\"" + registry.host() + "\":\"hmtest\"}}");
        ApplyReport r = apply(applier(), "", "r1");
        assertThat(r.outcome()).as("report %s", r).isEqualTo(ApplyOutcome.APPLIED);
        assertThat(container(r, "app").imageDigest()).isEqualTo(registry.host() + "/hm/busybox@" + busyboxDigest);
        assertThat(inspect("app").getState().getRunning()).isTrue();
        assertThat(Files.readAllLines(bin.resolve("asked"))).containsExactly("get " + registry.host());
    }

    /** {@code pull: never}: an absent image fails the container naming the image and the fix, and is never pulled. */
    @Test
    void pullNeverFailsWhenTheImageIsAbsentAndUsesItWhenItIsHere() throws Exception {
        Files.writeString(config.resolve("config.json"), registry.configJsonWithAuths(AuthRegistry.PASSWORD));
        Instant from = Instant.now();
        ApplyReport r = apply(applier(), "    pull: never\n", "r1");
        assertThat(r.outcome()).isEqualTo(ApplyOutcome.FAILED);
        assertThat(String.join("; ", container(r, "app").reasons()))
                .contains("image " + image + " is not on this host and its pull policy is never")
                .contains("docker load").contains("pull: missing");
        assertThat(container(r, "local").action()).isEqualTo(ContainerAction.CREATED);
        assertThat(inspect("app")).isNull();
        assertThat(registry.pulls(from, Instant.now())).isEmpty();
        // loaded by hand: used as it is
        TestDocker.engine().client().tagImageCmd(BUSYBOX, registry.host() + "/hm/busybox", "1").exec();
        ApplyReport here = apply(applier(), "    pull: never\n", "r2");
        assertThat(here.outcome()).isEqualTo(ApplyOutcome.APPLIED);
        assertThat(inspect("app").getState().getRunning()).isTrue();
        assertThat(registry.pulls(from, Instant.now())).isEmpty();
    }

    /**
     * A {@code pull: always} container whose pull fails (here: the credentials went wrong) fails and runs on as it was:
     * the report names the image it still runs, Docker saw nothing happen to it.
     */
    @Test
    void aFailedPullOfARunningAlwaysContainerFailsItAndLeavesItRunning() throws Exception {
        Files.writeString(config.resolve("config.json"), registry.configJsonWithAuths(AuthRegistry.PASSWORD));
        Applier applier = applier();
        assertThat(apply(applier, "    pull: always\n", "r1").outcome()).isEqualTo(ApplyOutcome.APPLIED);
        InspectContainerResponse before = inspect("app");
        Files.writeString(config.resolve("config.json"), registry.configJsonWithAuths("not-" + AuthRegistry.PASSWORD));
        Instant from = Instant.now();
        ApplyReport r = apply(applier, "    pull: always\n", "r2");
        assertThat(r.outcome()).isEqualTo(ApplyOutcome.FAILED);
        ContainerResult app = container(r, "app");
        assertThat(app.action()).isEqualTo(ContainerAction.FAILED);
        assertThat(app.reasons()).singleElement().asString().startsWith("pull failed, the container runs on as it was: ")
                .contains("refused the agent's credentials");
        assertThat(app.id()).isEqualTo(before.getId());
        assertThat(app.imageId()).isEqualTo(before.getImageId());
        assertThat(app.imageDigest()).isEqualTo(registry.host() + "/hm/busybox@" + busyboxDigest);
        assertThat(container(r, "local").action()).isEqualTo(ContainerAction.UNCHANGED);
        assertThat(inspect("app").getId()).isEqualTo(before.getId());
        assertThat(inspect("app").getState().getRunning()).isTrue();
        assertThat(inspect("app").getState().getStartedAt()).isEqualTo(before.getState().getStartedAt());
        long fromNanos = from.getEpochSecond() * 1_000_000_000L + from.getNano();
        assertThat(TestDocker.events(module, from, Instant.now()).stream().filter(e -> e.getTimeNano() >= fromNanos).toList())
                .as("Docker's container events of the failed pull's apply").isEmpty();
    }

    /** A container the agent's policy refuses is pulled for by nobody, {@code pull: always} or not (security row 15). */
    @Test
    void aContainerThePolicyRefusesIsNotPulledFor() throws Exception {
        Files.writeString(config.resolve("config.json"), registry.configJsonWithAuths(AuthRegistry.PASSWORD));
        Instant from = Instant.now();
        ApplyReport r = apply(applier(), "    pull: always\n    privileged: true\n", "r1");
        assertThat(container(r, "app").action()).isEqualTo(ContainerAction.FAILED);
        assertThat(String.join("; ", container(r, "app").reasons())).contains("refused by this agent's policy");
        assertThat(registry.pulls(from, Instant.now())).isEmpty();
        assertThat(TestDocker.engine().imagePresent(image)).isFalse();
    }

    /** A plan says what each policy would do, and pulls nothing (Docker's events show no pull). */
    @Test
    void aPlanSaysWhatThePolicyWouldDoAndPullsNothing() throws Exception {
        Files.writeString(config.resolve("config.json"), registry.configJsonWithAuths(AuthRegistry.PASSWORD));
        DockerEngine e = new DockerEngine(null, DockerEngine.CALL_TIMEOUT, new RegistryAuth(config, List.of(bin)));
        engines.add(e);
        DryRun plans = new DryRun(new MeshStore(zk.client(), zk.paths()), e, "host-a", io.mesh.policy.Policy.DEFAULT,
                new SecretsDir(state.resolve("secrets"), new DigestKey(state)));
        io.mesh.manifest.ManifestParser parser = new io.mesh.manifest.ManifestParser();
        Instant from = Instant.now();
        var never = plans.plan(parser.parse(yaml("    pull: never\n")).get(0));
        assertThat(never.outcome()).isEqualTo(io.mesh.wire.PlanOutcome.WOULD_FAIL);
        assertThat(never.containers().stream().filter(c -> c.name().equals("app")).findFirst().orElseThrow().problems())
                .singleElement().asString().contains("pull policy is never: the apply would fail");
        var always = plans.plan(parser.parse(yaml("    pull: always\n")).get(0));
        assertThat(always.outcome()).isEqualTo(io.mesh.wire.PlanOutcome.WOULD_APPLY);
        assertThat(always.containers().stream().filter(c -> c.name().equals("app")).findFirst().orElseThrow().reasons())
                .contains("pull: always: the apply would pull " + image + " first (a plan never pulls)");
        assertThat(registry.pulls(from, Instant.now())).isEmpty();
        assertThat(e.imagePresent(image)).isFalse();
    }

    /**
     * {@code pull: always} pulls at every apply that checks the container (Docker's events show each pull), not at a
     * reconcile that finds nothing changed; a new build pushed under the same tag is pulled by the next push's apply
     * and the container recreated, naming both images.
     */
    @Test
    void pullAlwaysPullsAtEveryApplyAndANewBuildUnderTheSameTagRecreates() throws Exception {
        Files.writeString(config.resolve("config.json"), registry.configJsonWithAuths(AuthRegistry.PASSWORD));
        Applier applier = applier();
        TestDocker.engine().client().tagImageCmd(BUSYBOX, registry.host() + "/hm/busybox", "1").exec(); // here already
        Instant t1 = Instant.now();
        ApplyReport r1 = apply(applier, "    pull: always\n", "r1");
        assertThat(r1.outcome()).isEqualTo(ApplyOutcome.APPLIED);
        assertThat(registry.pulls(t1, Instant.now())).as("pulled although here").containsExactly(image);
        String first = inspect("app").getId();

        Instant t2 = Instant.now();
        ApplyReport r2 = apply(applier, "    pull: always\n", "r2");
        assertThat(container(r2, "app").action()).isEqualTo(ContainerAction.UNCHANGED);
        assertThat(container(r2, "app").imageDigest()).isEqualTo(registry.host() + "/hm/busybox@" + busyboxDigest);
        assertThat(registry.pulls(t2, Instant.now())).as("the next push's apply pulls again").containsExactly(image);

        Instant t3 = Instant.now();
        applier.apply(module, () -> false); // a reconcile: nothing changed since the last report
        assertThat(registry.pulls(t3, Instant.now())).as("a no-op reconcile does not pull").isEmpty();

        // a new build under the same tag
        // made from a container without mesh's labels: an image carrying mesh.* labels is refused (decision 20)
        String buildContainer = TestDocker.engine().client().createContainerCmd(BUSYBOX).withName(module + "-build2").exec().getId();
        String build2 = TestDocker.engine().client().commitCmd(buildContainer).withLabels(Map.of("hm.build", "2")).exec();
        TestDocker.engine().client().removeContainerCmd(buildContainer).withForce(true).exec();
        images.add(build2);
        String digest2 = registry.push(build2, "hm/busybox", "1");
        assertThat(digest2).isNotEqualTo(busyboxDigest);
        String oldImage = inspect("app").getImageId();
        Instant t4 = Instant.now();
        ApplyReport r3 = apply(applier, "    pull: always\n", "r3");
        assertThat(r3.outcome()).as("report %s", r3).isEqualTo(ApplyOutcome.APPLIED);
        ContainerResult app = container(r3, "app");
        assertThat(app.action()).isEqualTo(ContainerAction.RECREATED);
        assertThat(app.reasons()).containsExactly("image changed: " + oldImage.substring(0, 19) + " -> " + build2.substring(0, 19) + " (pulled)");
        assertThat(app.imageId()).isEqualTo(build2);
        assertThat(app.imageDigest()).isEqualTo(registry.host() + "/hm/busybox@" + digest2);
        assertThat(inspect("app").getId()).isNotEqualTo(first);
        assertThat(inspect("app").getImageId()).isEqualTo(build2);
        assertThat(inspect("app").getState().getRunning()).isTrue();
        assertThat(container(r3, "local").action()).isEqualTo(ContainerAction.UNCHANGED);
        assertThat(registry.pulls(t4, Instant.now())).containsExactly(image);
    }
}
