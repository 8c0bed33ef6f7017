package io.mesh.window;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.mesh.docker.DockerEngine;
import io.mesh.secrets.DigestKey;
import io.mesh.secrets.SecretsDir;
import io.mesh.testing.ApplierExtension;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.Json;
import io.mesh.wire.WindowOutcome;
import io.mesh.wire.WindowResult;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.UUID;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A window step with {@code volumes-from: web} mounts web's file secrets too, so it can print them: the window's
 * result, the report and the log carry its log lines with web's secret values taken out (decision 18). So does what a
 * held container prints when it is not ready again after the window (its log lines and health output, in the
 * window's error). Real engine, real ZooKeeper; the report read from its znode.
 */
class StepSecretsTest {
    private static final String HOST = "host-a";
    @RegisterExtension
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    final ApplierExtension here = new ApplierExtension(zk, "fa-");
    private DockerEngine docker;
    private String module;
    private Path secretsDir;
    private ListAppender<ILoggingEvent> logs;
    private Level level;

    @BeforeEach
    void setUp() throws Exception {
        docker = here.docker();
        module = here.module();
        secretsDir = Files.createTempDirectory("fa-secrets");
        logs = new ListAppender<>();
        logs.start();
        ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).addAppender(logs);
        Logger mesh = (Logger) LoggerFactory.getLogger("io.mesh");
        level = mesh.getLevel();
        mesh.setLevel(Level.DEBUG);
    }

    @AfterEach
    void tearDown() throws Exception {
        ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).detachAppender(logs);
        ((Logger) LoggerFactory.getLogger("io.mesh")).setLevel(level);
        try (var files = Files.walk(secretsDir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    @Test
    void aStepThatPrintsItsVolumesFromContainersSecretReportsItRedacted() throws Exception {
        String key = "fa-secret-" + UUID.randomUUID();
        Files.writeString(secretsDir.resolve("tls.key"), key + "\n");
        zk.setDesired("module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n"
                + "  web:\n    image: " + BUSYBOX + "\n    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "    network: none\n    stop-timeout: 1s\n"
                + "    secrets:\n      tls-key: {file: tls.key, target: /run/secrets/tls.key}\n"
                + "schedules:\n  dump:\n    cron: \"30 3 * * *\"\n    while-stopped: [web]\n"
                + "    step:\n      image: " + BUSYBOX + "\n      volumes-from: web\n"
                + "      command: [sh, -c, \"echo key is; cat /run/secrets/tls.key; exit 3\"]\n    timeout: 1m\n", "r1");
        HostContext withSecrets = here.context().withSecrets(new SecretsDir(secretsDir, new DigestKey(here.stateDir())));
        here.applier(withSecrets).apply(module, () -> false);

        WindowResult w = new WindowRunner(withSecrets).run(module, "dump", Duration.ofSeconds(5));

        assertThat(w.outcome()).as(Json.text(w)).isEqualTo(WindowOutcome.STEP_FAILED); // it ran, and printed
        assertThat(w.logTail()).as(Json.text(w)).contains("key is", "<secret tls-key>");
        assertThat(Json.text(w)).doesNotContain(key);
        String report = new String(zk.client().getData().forPath(zk.paths().report(HOST, module)), StandardCharsets.UTF_8);
        assertThat(report).contains("<secret tls-key>").doesNotContain(key);
        assertThat(logs.list).isNotEmpty().allSatisfy(e -> assertThat(e.getFormattedMessage()).doesNotContain(key));
        assertThat(logs.list).anySatisfy(e -> assertThat(e.getFormattedMessage()).contains("<secret tls-key>"));
    }

    /**
     * The held container runs the first time and, started again by the window, prints both its secrets and exits: the
     * window's give-back says it is not ready again with its last log lines (Readiness), which reach the window's
     * error, the report and the log with the values taken out.
     */
    @Test
    void aHeldContainerNotReadyAgainPrintsItsSecretsAndTheWindowSaysItRedacted() throws Exception {
        String password = "fa-password-" + UUID.randomUUID();
        String key = "fa-key-" + UUID.randomUUID();
        Files.writeString(secretsDir.resolve("password"), password + "\n");
        Files.writeString(secretsDir.resolve("tls.key"), key + "\n");
        zk.setDesired("module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n"
                + "  web:\n    image: " + BUSYBOX + "\n"
                + "    command: [sh, -c, \"test -e /tmp/ran && echo password $DB_PASSWORD && cat /run/secrets/tls.key && exit 5; "
                + "touch /tmp/ran; trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "    network: none\n    stop-timeout: 1s\n    restart: \"no\"\n    ready: {min-healthy: 2s}\n"
                + "    secrets:\n      DB_PASSWORD: {file: password}\n      tls-key: {file: tls.key, target: /run/secrets/tls.key}\n"
                + "schedules:\n  gc:\n    cron: \"30 3 * * *\"\n    while-stopped: [web]\n"
                + "    step:\n      image: " + BUSYBOX + "\n      command: [\"true\"]\n    timeout: 1m\n", "r1");
        HostContext withSecrets = here.context().withSecrets(new SecretsDir(secretsDir, new DigestKey(here.stateDir())));
        assertThat(here.applier(withSecrets).apply(module, () -> false).outcome()).isEqualTo(io.mesh.wire.ApplyOutcome.APPLIED);

        WindowResult w = new WindowRunner(withSecrets).run(module, "gc", Duration.ofSeconds(5));

        assertThat(w.succeeded()).as(Json.text(w)).isFalse();
        assertThat(w.error()).as(Json.text(w)).contains(module + "-web is not ready again", "password <secret DB_PASSWORD>", "<secret tls-key>");
        assertThat(Json.text(w)).doesNotContain(password).doesNotContain(key);
        String report = new String(zk.client().getData().forPath(zk.paths().report(HOST, module)), StandardCharsets.UTF_8);
        assertThat(report).contains("<secret DB_PASSWORD>").doesNotContain(password).doesNotContain(key);
        assertThat(logs.list).isNotEmpty().allSatisfy(e -> assertThat(e.getFormattedMessage()).doesNotContain(password).doesNotContain(key));
        assertThat(logs.list).anySatisfy(e -> assertThat(e.getFormattedMessage()).contains("is not ready again", "<secret DB_PASSWORD>"));
    }
}
