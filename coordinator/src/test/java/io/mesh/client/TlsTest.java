package io.mesh.client;

import io.mesh.coordinator.HttpApi;
import io.mesh.coordinator.HttpLimits;
import io.mesh.coordinator.PushStatus;
import io.mesh.coordinator.ServerTls;
import io.mesh.testing.TestCerts;
import io.mesh.testing.TestCerts.Pair;
import io.mesh.testing.ZooKeeperExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The coordinator over HTTPS ({@code serve --tls-cert/--tls-key/--tls-client-ca}) and the client's TLS
 * ({@code --ca}, {@code --cert}/{@code --key}), against real coordinators serving certificates made here by
 * {@code openssl}: what answers, and each refusal told as its fix (docs/decisions/0040-tls.md).
 */
class TlsTest {
    @RegisterExtension
    static final ZooKeeperExtension zk = new ZooKeeperExtension();
    @TempDir
    static Path dir;

    static TestCerts certs;
    static Pair ca;
    static Pair server;
    static Pair client;
    static final List<HttpApi> apis = new ArrayList<>();

    @BeforeAll
    static void certificates() throws Exception {
        certs = new TestCerts(dir);
        ca = certs.ca("mesh-test-ca");
        Instant tomorrow = Instant.now().plus(Duration.ofDays(1));
        server = certs.issue(ca, "coordinator", tomorrow, "DNS:localhost", "IP:127.0.0.1");
        client = certs.issue(ca, "operator", tomorrow);
    }

    @AfterAll
    static void stop() {
        apis.forEach(HttpApi::close);
    }

    /** A coordinator serving {@code cert}, checked as if now were {@code now}; with client CAs when given. */
    static HttpApi serving(Pair cert, Path clientCa, Instant now) throws Exception {
        ServerTls tls = ServerTls.read(cert.cert(), cert.key(), clientCa, Clock.fixed(now, ZoneOffset.UTC));
        HttpApi api = new HttpApi(zk.client(), zk.paths(), new InetSocketAddress("127.0.0.1", 0), null, null, HttpLimits.DEFAULTS,
                PushStatus.DEFAULT_NO_AGENT_EXPIRY, tls);
        api.start();
        apis.add(api);
        return api;
    }

    static HttpApi serving(Pair cert) throws Exception { return serving(cert, null, Instant.now()); }

    @Test
    void httpsAnswersWithTheCaAndByNameOrAddressAndPlainHttpIsToldToUseHttps() throws Exception {
        HttpApi api = serving(server);
        assertThat(api.uri().getScheme()).isEqualTo("https");
        int port = api.port();

        ClientRun byAddress = ClientRun.of("https://127.0.0.1:" + port, "status", "--ca", ca.cert().toString());
        assertThat(byAddress.code()).as(byAddress.err()).isZero();
        ClientRun byName = ClientRun.of("https://localhost:" + port, "status", "--ca", ca.cert().toString());
        assertThat(byName.code()).as(byName.err()).isZero();

        // A POST goes over HttpClient (the GETs above over HttpsURLConnection): the same TLS.
        CoordinatorClient c = new CoordinatorClient(List.of(URI.create("https://localhost:" + port)), null, ClientTls.of(ca.cert(), null, null));
        assertThat(c.postJson("/v1/audit", Map.of()).status()).isNotZero();

        ClientRun plain = ClientRun.of("http://127.0.0.1:" + port, "status");
        assertThat(plain.code()).isNotZero();
        assertThat(plain.err()).contains("the coordinator speaks HTTPS: use https://127.0.0.1:" + port);
    }

    @Test
    void withoutTheCaTheClientIsToldToGiveIt() throws Exception {
        int port = serving(server).port();
        ClientRun r = ClientRun.of("https://127.0.0.1:" + port, "status");
        assertThat(r.code()).isEqualTo(4);
        assertThat(r.err()).contains("is not signed by a CA this system trusts: give --ca FILE (MESH_CA) with the CA that signed "
                + "the coordinator's certificate");

        // Another CA than the one that signed it: the same fix, naming the file given.
        Pair other = certs.ca("other-ca");
        CoordinatorClient c = new CoordinatorClient(List.of(URI.create("https://127.0.0.1:" + port)), null, ClientTls.of(other.cert(), null, null));
        assertThatThrownBy(() -> c.postJson("/v1/audit", Map.of()))
                .isInstanceOf(CoordinatorClient.UnreachableException.class)
                .hasMessageContaining("is not signed by a CA of --ca " + other.cert())
                .hasMessageContaining("give --ca FILE (MESH_CA)");
        // A bundle of the old and the new CA (while one replaces the other) trusts either's certificates.
        Path both = certs.bundle("both.pem", other.cert(), ca.cert());
        ClientRun bundle = ClientRun.of("https://127.0.0.1:" + port, "status", "--ca", both.toString());
        assertThat(bundle.code()).as(bundle.err()).isZero();
    }

    @Test
    void expiredWrongHostAndSelfSignedCertificatesAreToldAsTheirFixes() throws Exception {
        Instant yesterday = Instant.now().minus(Duration.ofDays(1)).truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
        Pair expired = certs.issue(ca, "expired", yesterday, "IP:127.0.0.1");
        int expiredPort = serving(expired, null, yesterday.minusSeconds(3600)).port();
        ClientRun r = ClientRun.of("https://127.0.0.1:" + expiredPort, "status", "--ca", ca.cert().toString());
        assertThat(r.code()).isEqualTo(4);
        assertThat(r.err()).contains("the coordinator's certificate expired on " + yesterday + ": renew it (docs/runbook.md, \"Rotate certificates\")");

        Pair elsewhere = certs.issue(ca, "elsewhere", Instant.now().plus(Duration.ofDays(1)), "DNS:coord-9.example", "IP:10.9.9.9");
        int elsewherePort = serving(elsewhere).port();
        r = ClientRun.of("https://127.0.0.1:" + elsewherePort, "status", "--ca", ca.cert().toString());
        assertThat(r.code()).isEqualTo(4);
        assertThat(r.err()).contains("the coordinator's certificate is for coord-9.example, 10.9.9.9, not 127.0.0.1: use a URL with one "
                + "of those names, or reissue it with 127.0.0.1 in its subjectAltName");

        Pair self = certs.selfSigned("self", "IP:127.0.0.1");
        int selfPort = serving(self).port();
        r = ClientRun.of("https://127.0.0.1:" + selfPort, "status", "--ca", ca.cert().toString());
        assertThat(r.code()).isEqualTo(4);
        assertThat(r.err()).contains("CN=self, issued by CN=self, self-signed) is not signed by a CA of --ca " + ca.cert()
                + ": give --ca FILE (MESH_CA) with the CA that signed the coordinator's certificate");
    }

    @Test
    void withClientCasACertificateIsRequiredAndAnswered() throws Exception {
        int port = serving(server, ca.cert(), Instant.now()).port();
        String url = "https://127.0.0.1:" + port;
        ClientRun none = ClientRun.of(url, "status", "--ca", ca.cert().toString());
        assertThat(none.code()).isEqualTo(4);
        assertThat(none.err()).contains("asks for a client certificate: give --cert FILE --key FILE (MESH_CERT, MESH_KEY)");

        ClientRun with = ClientRun.of(url, "status", "--ca", ca.cert().toString(), "--cert", client.cert().toString(),
                "--key", client.key().toString());
        assertThat(with.code()).as(with.err()).isZero();
        CoordinatorClient c = new CoordinatorClient(List.of(URI.create(url)), null, ClientTls.of(ca.cert(), client.cert(), client.key()));
        assertThat(c.postJson("/v1/audit", Map.of()).status()).isNotZero();
        CoordinatorClient anonymous = new CoordinatorClient(List.of(URI.create(url)), null, ClientTls.of(ca.cert(), null, null));
        assertThatThrownBy(() -> anonymous.postJson("/v1/audit", Map.of())).hasMessageContaining("asks for a client certificate");

        // A certificate of a CA the coordinator does not take.
        Pair other = certs.ca("stranger-ca");
        Pair stranger = certs.issue(other, "stranger", Instant.now().plus(Duration.ofDays(1)));
        ClientRun refused = ClientRun.of(url, "status", "--ca", ca.cert().toString(), "--cert", stranger.cert().toString(),
                "--key", stranger.key().toString());
        assertThat(refused.code()).isEqualTo(4);
        assertThat(refused.err()).contains("the client certificate of --cert (CN=stranger, issued by CN=stranger-ca")
                .contains("a CA of its --tls-client-ca");
    }

    @Test
    void unusableFilesAreRefusedAtStartNamingTheFlagAndTheFix() throws Exception {
        Clock now = Clock.systemUTC();
        assertThatThrownBy(() -> ServerTls.read(dir.resolve("missing.crt"), server.key(), null, now))
                .hasMessageContaining("--tls-cert " + dir.resolve("missing.crt") + " cannot be read");
        Pair other = certs.issue(ca, "other", Instant.now().plus(Duration.ofDays(1)), "IP:127.0.0.1");
        assertThatThrownBy(() -> ServerTls.read(server.cert(), other.key(), null, now))
                .hasMessageContaining("--tls-key " + other.key() + " is not the key of --tls-cert " + server.cert());
        Pair expired = certs.issue(ca, "old", Instant.now().minus(Duration.ofDays(2)), "IP:127.0.0.1");
        assertThatThrownBy(() -> ServerTls.read(expired.cert(), expired.key(), null, now))
                .hasMessageContaining("--tls-cert " + expired.cert() + " expired on").hasMessageContaining("renew it");

        Path traditional = dir.resolve("rsa.key");
        certs.openssl("pkey", "-in", server.key().toString(), "-out", traditional.toString(), "-traditional");
        assertThat(Files.readString(traditional)).startsWith("-----BEGIN RSA PRIVATE KEY-----");
        assertThatThrownBy(() -> ServerTls.read(server.cert(), traditional, null, now))
                .hasMessageContaining("holds a 'RSA PRIVATE KEY' block: mesh takes PKCS#8 (BEGIN PRIVATE KEY)")
                .hasMessageContaining("openssl pkey -in " + traditional + " -out " + traditional + ".pkcs8");
        Path encrypted = dir.resolve("encrypted.key");
        certs.openssl("pkey", "-in", server.key().toString(), "-out", encrypted.toString(), "-aes256", "-passout", "pass:secret");
        assertThatThrownBy(() -> ServerTls.read(server.cert(), encrypted, null, now))
                .hasMessageContaining("--tls-key " + encrypted + " is encrypted");
        assertThatThrownBy(() -> ServerTls.read(server.key(), server.key(), null, now))
                .hasMessageContaining("--tls-cert " + server.key() + " holds a 'PRIVATE KEY' block");

        ClientRun noKey = ClientRun.of("https://127.0.0.1:1", "status", "--cert", client.cert().toString());
        assertThat(noKey.code()).isEqualTo(2);
        assertThat(noKey.err()).contains("--cert and --key go together");
    }
}
