package io.mesh.coordinator;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.read.ListAppender;
import io.mesh.coordinator.CoordinatorExtension.Answer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Who may push: a bearer token, or a webhook HMAC-SHA256 signature over the body ({@code X-Hub-Signature-256:
 * sha256=<hex>}, as Git forges send); {@code 401} without credentials, {@code 403} with wrong ones, nothing written
 * either way; and no token, secret or signature in any log line (captured from Logback at DEBUG).
 */
class PushAuthTest {
    private static final String TOKEN = "tok-8f3a1c9e77d2";
    private static final String SECRET = "hook-5b0e42aa19c3";
    private static final byte[] BODY = Manifests.TWO.getBytes(StandardCharsets.UTF_8);

    /** Each test {@link CoordinatorExtension#restart restarts} its coordinator with the credentials it is about. */
    @RegisterExtension
    static final CoordinatorFixture fx = new CoordinatorFixture();
    private ListAppender<ILoggingEvent> logs;
    private Level meshLevel;
    private final List<String> sentSecrets = new ArrayList<>();

    @BeforeEach
    void captureLogs() {
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        logs = new ListAppender<>();
        logs.start();
        root.addAppender(logs);
        Logger mesh = (Logger) LoggerFactory.getLogger("io.mesh");
        meshLevel = mesh.getLevel();
        mesh.setLevel(Level.DEBUG);
    }

    @AfterEach
    void stop() {
        fx.api.stop(); // its last log lines are checked too
        ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).detachAppender(logs);
        ((Logger) LoggerFactory.getLogger("io.mesh")).setLevel(meshLevel);
        // Nothing secret reached a log line: not the token, not the secret, not a signature sent.
        assertThat(logs.list).isNotEmpty();
        for (ILoggingEvent e : logs.list) {
            String line = e.getFormattedMessage() + (e.getThrowableProxy() == null ? "" : ThrowableProxyUtil.asString(e.getThrowableProxy()));
            assertThat(line).doesNotContain(TOKEN, SECRET);
            for (String s : sentSecrets) assertThat(line).doesNotContain(s);
        }
    }

    private Answer push(byte[] body, Map<String, String> headers) throws Exception {
        headers.values().stream().map(v -> v.replaceFirst("^(Bearer |sha256=)", "").strip()).filter(v -> v.length() > 4)
                .forEach(sentSecrets::add);
        return fx.api.post("/v1/pushes", body, headers);
    }

    private static void nothingWritten() throws Exception {
        assertThat(fx.zk.client().checkExists().forPath("/mesh/desired/store")).isNull();
        assertThat(fx.zk.client().checkExists().forPath("/mesh/pushes/push-0000000000")).isNull();
    }

    @Test
    void bearerTokenMissingIs401WrongIs403RightIs202() throws Exception {
        fx.api.restart(BearerToken.of(TOKEN), null);

        Answer none = push(BODY, Map.of());
        assertThat(none.status()).isEqualTo(401);
        assertThat(none.raw().headers().firstValue("WWW-Authenticate")).contains("Bearer realm=\"mesh\"");
        assertThat(none.json().get("error").asText()).contains("missing credentials", "Authorization: Bearer");
        for (String wrong : List.of("Bearer " + TOKEN.toUpperCase(), "Bearer " + TOKEN + "x", "Bearer " + TOKEN.substring(1),
                "Basic " + TOKEN, "Bearer ", TOKEN)) {
            Answer a = push(BODY, Map.of("Authorization", wrong));
            assertThat(a.status()).as(wrong).isEqualTo(403);
            assertThat(a.body()).doesNotContain(TOKEN);
        }
        // A signature is no substitute when only a token is configured.
        assertThat(push(BODY, Map.of(WebhookSecret.HEADER, WebhookSecret.of(SECRET).sign(BODY))).status()).isEqualTo(403);
        nothingWritten();
        assertThat(fx.api.api().metrics().rejectedCount(Metrics.UNAUTHORIZED)).isEqualTo(1);
        assertThat(fx.api.api().metrics().rejectedCount(Metrics.FORBIDDEN)).isEqualTo(7);

        assertThat(push(BODY, Map.of("Authorization", "Bearer " + TOKEN)).status()).isEqualTo(202);
        assertThat(push(BODY, Map.of("Authorization", "bearer  " + TOKEN + " ")).status()).isEqualTo(202);
        assertThat(fx.api.get("/v1/held").status()).isEqualTo(200); // reads need no token
        assertThat(logs.list).anySatisfy(e -> assertThat(e.getFormattedMessage()).contains("push refused (403)", "a wrong bearer token"));
        assertThat(logs.list).anySatisfy(e -> assertThat(e.getFormattedMessage()).contains("(bearer token)"));
    }

    /** A plan takes a push's credentials through the push's own check; its refusals are logged but are not push metrics. */
    @Test
    void planWithoutTheTokenIsRefusedAsAPushIsButNotCounted() throws Exception {
        fx.api.restart(BearerToken.of(TOKEN), null);

        Answer none = fx.api.post("/v1/plans", BODY, Map.of());
        assertThat(none.status()).isEqualTo(401);
        assertThat(none.raw().headers().firstValue("WWW-Authenticate")).contains("Bearer realm=\"mesh\"");
        assertThat(none.json().get("error").asText()).contains("missing credentials", "Authorization: Bearer");
        assertThat(fx.api.post("/v1/plans", BODY, Map.of("Authorization", "Bearer wrong-token")).status()).isEqualTo(403);
        boolean planned = fx.zk.client().checkExists().forPath("/mesh/plans") != null
                && !fx.zk.client().getChildren().forPath("/mesh/plans").isEmpty();
        assertThat(planned).as("a plan written").isFalse();
        assertThat(fx.api.api().metrics().rejectedCount(Metrics.UNAUTHORIZED)).isZero();
        assertThat(fx.api.api().metrics().rejectedCount(Metrics.FORBIDDEN)).isZero();
        assertThat(logs.list).anySatisfy(e -> assertThat(e.getFormattedMessage()).contains("plan refused (403)", "a wrong bearer token"));
    }

    @Test
    void webhookSignatureOverTheBodyIsAcceptedAndAnyOtherIs403() throws Exception {
        WebhookSecret secret = WebhookSecret.of(SECRET);
        fx.api.restart(null, secret);
        String good = secret.sign(BODY);
        assertThat(good).matches("sha256=[0-9a-f]{64}");

        assertThat(push(BODY, Map.of()).status()).isEqualTo(401);
        byte[] tampered = Manifests.TWO.replace("mesh-demo/busybox:1", "evil/busybox:1").getBytes(StandardCharsets.UTF_8);
        List<Map<String, String>> wrong = List.of(
                Map.of(WebhookSecret.HEADER, WebhookSecret.of("another-secret").sign(BODY)),
                Map.of(WebhookSecret.HEADER, good.replace("sha256=", "sha1=")),
                Map.of(WebhookSecret.HEADER, "sha256=not-hex"),
                Map.of(WebhookSecret.HEADER, good.substring(0, good.length() - 2)),
                Map.of(WebhookSecret.HEADER, ""),
                Map.of("Authorization", "Bearer " + SECRET));
        for (Map<String, String> h : wrong) {
            assertThat(push(BODY, h).status()).as(h.toString()).isEqualTo(403);
        }
        // The signature of one body does not carry another.
        Answer replay = push(tampered, Map.of(WebhookSecret.HEADER, good));
        assertThat(replay.status()).isEqualTo(403);
        assertThat(replay.json().get("error").asText()).contains("wrong webhook signature", WebhookSecret.HEADER);
        nothingWritten();

        Answer ok = push(BODY, Map.of(WebhookSecret.HEADER, good));
        assertThat(ok.status()).isEqualTo(202);
        assertThat(push(BODY, Map.of(WebhookSecret.HEADER, good.toUpperCase().replace("SHA256=", "sha256="))).status()).isEqualTo(202);
        assertThat(fx.zk.client().checkExists().forPath("/mesh/desired/store")).isNotNull();
        assertThat(logs.list).anySatisfy(e -> assertThat(e.getFormattedMessage()).contains("(webhook signature)"));
    }

    @Test
    void withBothEitherCredentialWorks() throws Exception {
        fx.api.restart(BearerToken.of(TOKEN), WebhookSecret.of(SECRET));
        assertThat(push(BODY, Map.of()).status()).isEqualTo(401);
        assertThat(push(BODY, Map.of("Authorization", "Bearer nope")).status()).isEqualTo(403);
        assertThat(push(BODY, Map.of("Authorization", "Bearer " + TOKEN)).status()).isEqualTo(202);
        assertThat(push(BODY, Map.of(WebhookSecret.HEADER, WebhookSecret.of(SECRET).sign(BODY))).status()).isEqualTo(202);
    }

    @Test
    void secretsComeFromFilesAndAreNeverPrinted() throws Exception {
        Path f = Files.createTempFile("mesh-webhook", ".txt");
        try {
            Files.writeString(f, SECRET + "\n");
            WebhookSecret s = WebhookSecret.fromFile(f);
            assertThat(s.sign(BODY)).isEqualTo(WebhookSecret.of(SECRET).sign(BODY));
            assertThat(s.toString()).doesNotContain(SECRET);
            assertThat(BearerToken.of(TOKEN).toString()).doesNotContain(TOKEN);
            Files.writeString(f, "\n");
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> WebhookSecret.fromFile(f)).hasMessageContaining("empty");
        } finally {
            Files.deleteIfExists(f);
        }
        fx.api.restart(BearerToken.of(TOKEN), null);
        assertThat(push(BODY, Map.of()).status()).isEqualTo(401); // a log line to check
    }
}
