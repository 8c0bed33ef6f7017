package io.mesh.apply;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.read.ListAppender;
import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.model.Event;
import com.github.dockerjava.api.model.Frame;
import io.mesh.docker.DockerEngine;
import io.mesh.docker.Labels;
import io.mesh.secrets.DigestKey;
import io.mesh.secrets.SecretsDir;
import io.mesh.testing.ApplierExtension;
import io.mesh.testing.DockerEvents;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.ApplyReport.ContainerResult;
import io.mesh.wire.ContainerAction;
import io.mesh.wire.Json;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Secrets against a real Docker engine and ZooKeeper (SPEC.md, "Secrets"; decision 18): the container gets each value,
 * and no znode, Docker label, report or log line has it; a rotated file recreates the container with
 * {@code secret changed: NAME}; a file that cannot be had fails its container alone, naming the file.
 */
@Tag("slow") // recreates containers as secret files rotate: the full run, not --fast
class SecretsTest {
    @RegisterExtension
    static final ZooKeeperExtension zk = new ZooKeeperExtension().resetBeforeEach();
    @RegisterExtension
    final ApplierExtension here = new ApplierExtension(zk, "hs-");
    private static final String HOST = ApplierExtension.HOST;
    private DockerEngine docker;
    private String module;
    private Path secretsDir;
    private Applier applier;
    private ListAppender<ILoggingEvent> logs;
    private final Map<String, Level> levels = new LinkedHashMap<>();
    /** Every value a test wrote into a secret file: none may appear outside the container. */
    private final List<String> values = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        docker = here.docker();
        module = here.module();
        secretsDir = Files.createTempDirectory("hs-secrets");
        applier = here.applier(here.context().withSecrets(new SecretsDir(secretsDir, new DigestKey(here.stateDir()))));
        logs = new ListAppender<>();
        logs.start();
        ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).addAppender(logs);
        // Every line of mesh's, docker-java's and its HTTP client's, as an operator chasing a problem might turn them up.
        for (String name : List.of("io.mesh", "com.github.dockerjava", "org.apache.hc")) {
            Logger l = (Logger) LoggerFactory.getLogger(name);
            levels.put(name, l.getLevel());
            l.setLevel(Level.DEBUG);
        }
    }

    @AfterEach
    void tearDown() throws Exception {
        ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).detachAppender(logs);
        levels.forEach((name, level) -> ((Logger) LoggerFactory.getLogger(name)).setLevel(level));
        try (var files = Files.walk(secretsDir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    /** A value no other run could produce, remembered as one that must stay in the container. */
    private String secretValue() {
        String v = "hs-secret-" + UUID.randomUUID();
        values.add(v);
        return v;
    }

    /** Writes a secret file as an operator rolling it would: aside, then moved into place. */
    private void writeSecret(String file, String content) throws Exception {
        Path p = secretsDir.resolve(file);
        Files.createDirectories(p.getParent());
        Path tmp = Files.createTempFile(p.getParent(), "new", ".tmp");
        Files.writeString(tmp, content);
        Files.move(tmp, p, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    /** Container {@code web} with an env secret, a file secret and a plain env value; container {@code side} without. */
    private String yaml(String plainEnv) {
        return "module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n"
                + "  web:\n    image: " + BUSYBOX + "\n"
                + "    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "    network: none\n    stop-timeout: 1s\n"
                + "    env: {PLAIN: \"" + plainEnv + "\"}\n"
                + "    secrets:\n"
                + "      DB_PASSWORD: {file: db/password}\n"
                + "      tls-key: {file: tls.key, target: /run/secrets/tls.key}\n"
                + "  side:\n    image: " + BUSYBOX + "\n"
                + "    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "    network: none\n    stop-timeout: 1s\n";
    }

    private static ContainerResult container(ApplyReport r, String name) {
        return r.containers().stream().filter(c -> c.name().equals(name)).findFirst().orElseThrow();
    }

    @Test
    void eachValueReachesTheContainerAndNoZnodeLabelReportOrLogLine() throws Exception {
        String password = secretValue();
        String key = secretValue();
        String plain = "hs-plain-" + UUID.randomUUID();
        writeSecret("db/password", password + "\n"); // as echo writes it: the variable is without the line end
        writeSecret("tls.key", key);
        zk.setDesired(yaml(plain), "r1");

        ApplyReport r = applier.apply(module, () -> false);

        assertThat(r.outcome()).as(Json.text(r)).isEqualTo(ApplyOutcome.APPLIED);
        assertThat(container(r, "web").action()).isEqualTo(ContainerAction.CREATED);
        InspectContainerResponse web = docker.inspect(module + "-web");
        // The container sees both: the variable in its environment, the file mounted read-only.
        assertThat(exec(web.getId(), "sh", "-c", "printf %s \"$DB_PASSWORD\"")).isEqualTo(password);
        assertThat(exec(web.getId(), "cat", "/run/secrets/tls.key")).isEqualTo(key);
        assertThat(web.getMounts()).anySatisfy(m -> {
            assertThat(m.getDestination().getPath()).isEqualTo("/run/secrets/tls.key");
            assertThat(m.getRW()).isFalse();
        });
        assertThat(exec(web.getId(), "sh", "-c", "(echo x > /run/secrets/tls.key) 2>/dev/null && echo wrote || echo refused")).isEqualTo("refused\n");
        assertThat(web.getConfig().getEnv()).contains("DB_PASSWORD=" + password, "PLAIN=" + plain); // its own environment (SPEC)

        // Labels: key names and digests only, for plain env values too.
        Map<String, String> labels = web.getConfig().getLabels();
        assertThat(String.join("\n", labels.values())).doesNotContain(password, key, plain);
        assertThat(labels.get(Labels.SPEC)).contains("\"PLAIN\":\"" + SpecDiff.envDigest(plain) + "\"")
                .containsPattern("\"DB_PASSWORD\":\\{\"digest\":\"hmac-sha256:[0-9a-f]{16}\",\"file\":\"db/password\"}")
                .containsPattern("\"tls-key\":\\{\"digest\":\"hmac-sha256:[0-9a-f]{16}\",\"file\":\"tls.key\",\"target\":\"/run/secrets/tls.key\"}");

        // ZooKeeper: no secret value anywhere; the plain env value only in the desired node (SPEC).
        Map<String, String> znodes = znodes();
        assertThat(znodes).containsKey(zk.paths().report(HOST, module));
        znodes.forEach((path, data) -> assertThat(data).as(path).doesNotContain(password, key));
        assertThat(znodes.entrySet().stream().filter(e -> e.getValue().contains(plain)).map(Map.Entry::getKey))
                .containsExactly(zk.paths().desired(module));
        assertThat(Json.text(r)).doesNotContain(password, key, plain);

        // Nothing changed: the next reconcile reads the files again and finds the same digests.
        assertThat(container(applier.apply(module, () -> false), "web").id()).isEqualTo(web.getId());
        assertThat(docker.inspect(module + "-web").getId()).isEqualTo(web.getId());
        assertNoLogLineHasAValue(plain);
    }

    @Test
    void aRotatedSecretFileRecreatesTheContainerWithTheReasonAndDockerSeesIt() throws Exception {
        writeSecret("db/password", secretValue());
        writeSecret("tls.key", secretValue());
        zk.setDesired(yaml("p"), "r1");
        assertThat(applier.apply(module, () -> false).outcome()).isEqualTo(ApplyOutcome.APPLIED);
        String first = docker.inspect(module + "-web").getId();
        String side = docker.inspect(module + "-side").getId();

        try (DockerEvents events = DockerEvents.record(module)) {
            Instant t0 = Instant.now();
            String rotated = secretValue();
            writeSecret("db/password", rotated);
            ApplyReport r = applier.apply(module, () -> false); // a reconcile: no new push

            assertThat(r.outcome()).as(Json.text(r)).isEqualTo(ApplyOutcome.APPLIED);
            assertThat(container(r, "web").action()).isEqualTo(ContainerAction.RECREATED);
            assertThat(container(r, "web").reasons()).containsExactly("secret changed: DB_PASSWORD");
            assertThat(container(r, "side").action()).isEqualTo(ContainerAction.UNCHANGED);
            String second = docker.inspect(module + "-web").getId();
            assertThat(second).isNotEqualTo(first);
            assertThat(exec(second, "sh", "-c", "printf %s \"$DB_PASSWORD\"")).isEqualTo(rotated);

            writeSecret("tls.key", secretValue());
            ApplyReport f = applier.apply(module, () -> false);
            assertThat(container(f, "web").reasons()).containsExactly("secret changed: tls-key");
            String third = docker.inspect(module + "-web").getId();
            assertThat(third).isNotEqualTo(second);

            // Docker's own account: the old containers destroyed, new ones created, side untouched.
            events.settle();
            List<Event> seen = changes(events.since(t0));
            assertThat(seen).as(DockerEvents.describe(seen)).anySatisfy(e -> assertEvent(e, "destroy", first)).anySatisfy(e -> assertEvent(e, "create", second))
                    .anySatisfy(e -> assertEvent(e, "destroy", second)).anySatisfy(e -> assertEvent(e, "create", third));
            assertThat(seen).noneSatisfy(e -> assertThat(e.getId()).isEqualTo(side));
        }
        assertThat(docker.inspect(module + "-side").getId()).isEqualTo(side);
        znodes().forEach((path, data) -> {
            for (String v : values) assertThat(data).as(path).doesNotContain(v);
        });
        assertNoLogLineHasAValue();
    }

    @Test
    void aMissingSecretFileFailsItsContainerAloneNamingTheFileAndStopsNothing() throws Exception {
        writeSecret("db/password", secretValue());
        writeSecret("tls.key", secretValue());
        zk.setDesired(yaml("p"), "r1");
        assertThat(applier.apply(module, () -> false).outcome()).isEqualTo(ApplyOutcome.APPLIED);
        InspectContainerResponse web = docker.inspect(module + "-web");
        InspectContainerResponse side = docker.inspect(module + "-side");

        try (DockerEvents events = DockerEvents.record(module)) {
            Instant t0 = Instant.now();
            Files.delete(secretsDir.resolve("db/password"));
            ApplyReport r = applier.apply(module, () -> false);

            assertThat(r.outcome()).as(Json.text(r)).isEqualTo(ApplyOutcome.FAILED);
            ContainerResult w = container(r, "web");
            assertThat(w.action()).isEqualTo(ContainerAction.FAILED);
            assertThat(w.reasons()).first().asString().startsWith("secret DB_PASSWORD: file db/password is missing from the secrets dir "
                    + secretsDir).contains("--secrets-dir");
            assertThat(w.reasons()).last().asString().contains("left as it is");
            assertThat(w.id()).isEqualTo(web.getId());
            assertThat(r.error()).contains(module + "-web", "db/password");
            assertThat(container(r, "side").action()).isEqualTo(ContainerAction.UNCHANGED);
            events.settle();
            assertThat(changes(events.since(t0))).as("no Docker call changed a container").isEmpty();
        }
        for (InspectContainerResponse before : List.of(web, side)) {
            InspectContainerResponse after = docker.inspect(before.getId());
            assertThat(after.getState().getRunning()).isTrue();
            assertThat(after.getState().getStartedAt()).isEqualTo(before.getState().getStartedAt());
        }
        assertThat(new String(zk.client().getData().forPath(zk.paths().report(HOST, module)), StandardCharsets.UTF_8))
                .contains("db/password is missing");

        // A new module whose secret is missing from the start: side is created, web is not.
        TestDocker.clean(module);
        ApplyReport fresh = applier.apply(module, () -> false);
        assertThat(container(fresh, "web").action()).isEqualTo(ContainerAction.FAILED);
        assertThat(container(fresh, "web").reasons()).last().isEqualTo("not created");
        assertThat(container(fresh, "side").action()).isEqualTo(ContainerAction.CREATED);
        assertThat(docker.idByName(module + "-web")).isNull();
        assertNoLogLineHasAValue();
    }

    /** A container that prints both its secrets and exits: the report carries its log lines, without the values. */
    @Test
    void whatTheContainerPrintsReachesTheReportWithoutItsSecrets() throws Exception {
        String password = secretValue();
        String key = secretValue();
        writeSecret("db/password", password);
        writeSecret("tls.key", "-----BEGIN KEY-----\n" + key + "\n-----END KEY-----\n");
        zk.setDesired("module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n"
                + "  web:\n    image: " + BUSYBOX + "\n"
                + "    command: [sh, -c, \"echo connecting with $DB_PASSWORD; cat /run/secrets/tls.key; exit 3\"]\n"
                + "    network: none\n    restart: \"no\"\n"
                + "    secrets:\n"
                + "      DB_PASSWORD: {file: db/password}\n"
                + "      tls-key: {file: tls.key, target: /run/secrets/tls.key}\n", "r1");

        ApplyReport r = applier.apply(module, () -> false);

        assertThat(r.outcome()).as(Json.text(r)).isEqualTo(ApplyOutcome.FAILED);
        List<String> reasons = container(r, "web").reasons();
        assertThat(reasons).as(Json.text(r)).contains("log: connecting with <secret DB_PASSWORD>", "log: <secret tls-key>");
        String report = new String(zk.client().getData().forPath(zk.paths().report(HOST, module)), StandardCharsets.UTF_8);
        assertThat(report).contains("<secret DB_PASSWORD>");
        znodes().forEach((path, data) -> assertThat(data).as(path).doesNotContain(password, key));
        assertNoLogLineHasAValue();
    }

    /** Docker actions that change a container (an exec of the test's is none). */
    private static final Set<String> CHANGES = Set.of("create", "start", "stop", "kill", "die", "destroy", "rename", "update", "restart");

    private static List<Event> changes(List<Event> events) {
        return events.stream().filter(e -> CHANGES.contains(TestDocker.action(e))).toList();
    }

    private static void assertEvent(Event e, String action, String id) {
        assertThat(TestDocker.action(e)).isEqualTo(action);
        assertThat(e.getId()).isEqualTo(id);
    }

    /** Every znode from ZooKeeper's root down, with its data as text (recursive getData). */
    private static Map<String, String> znodes() throws Exception {
        Map<String, String> out = new LinkedHashMap<>();
        walk(zk.client(), "/", out);
        return out;
    }

    private static void walk(CuratorFramework c, String path, Map<String, String> out) throws Exception {
        byte[] data = c.getData().forPath(path);
        out.put(path, data == null ? "" : new String(data, StandardCharsets.UTF_8));
        for (String child : c.getChildren().forPath(path)) walk(c, ZKPaths.makePath(path, child), out);
    }

    private void assertNoLogLineHasAValue(String... more) {
        assertThat(logs.list).isNotEmpty();
        for (ILoggingEvent e : logs.list) {
            String line = e.getFormattedMessage() + (e.getThrowableProxy() == null ? "" : ThrowableProxyUtil.asString(e.getThrowableProxy()));
            for (String v : values) assertThat(line).doesNotContain(v);
            for (String v : more) assertThat(line).doesNotContain(v);
        }
    }

    /** Runs a command in a container (docker exec) and returns its standard output. */
    private String exec(String id, String... cmd) throws Exception {
        String exec = docker.client().execCreateCmd(id).withCmd(cmd).withAttachStdout(true).withAttachStderr(true).exec().getId();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        docker.client().execStartCmd(exec).exec(new ResultCallback.Adapter<Frame>() {
            @Override
            public void onNext(Frame f) {
                out.writeBytes(f.getPayload());
            }
        }).awaitCompletion(30, TimeUnit.SECONDS);
        return out.toString(StandardCharsets.UTF_8);
    }
}
