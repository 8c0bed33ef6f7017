package io.mesh.docker;

import com.github.dockerjava.api.model.AuthConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Base64;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Credentials from a Docker configuration directory (decision 20), with real credential-helper programs (small shell
 * scripts speaking Docker's protocol): what each source gives, in Docker's order, and what a broken one says.
 */
class RegistryAuthTest {
    private static final ImageReference PRIVATE = ImageReference.parse("127.0.0.1:5000/hm/busybox:1");

    @TempDir
    Path config;
    @TempDir
    Path bin;

    private RegistryAuth auth() { return new RegistryAuth(config, List.of(bin)); }

    private void configJson(String json) throws Exception {
        Files.writeString(config.resolve("config.json"), json);
    }

    private static String basic(String userPassword) {
        return Base64.getEncoder().encodeToString(userPassword.getBytes(StandardCharsets.UTF_8));
    }

    /** A {@code docker-credential-<name>} that logs its argument and stdin to {@code <name>.log}, then runs {@code body}. */
    private void helper(String name, String body) throws Exception {
        Path exe = bin.resolve("docker-credential-" + name);
        Files.writeString(exe, "#!/bin/sh\nread -r addr || true\necho \"$1 $addr\" >> " + bin.resolve(name + ".log") + "\n" + body + "\n");
        Files.setPosixFilePermissions(exe, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    @Test
    void withoutConfigJsonThePullIsAnonymous() {
        assertThat(auth().forImage(PRIVATE)).isEqualTo(RegistryAuth.Credentials.NONE);
        auth().check();
    }

    @Test
    void anAuthsEntryIsDecodedForItsRegistryOnly() throws Exception {
        configJson("{\"auths\":{\"127.0.0.1:5000\":{\"auth\":\"" + basic("hm-user:pa:ss") + "\"}}}");
        RegistryAuth.Credentials c = auth().forImage(PRIVATE);
        assertThat(c.auth().getUsername()).isEqualTo("hm-user");
        assertThat(c.auth().getPassword()).isEqualTo("pa:ss"); // only the first colon separates
        assertThat(c.auth().getRegistryAddress()).isEqualTo("127.0.0.1:5000");
        assertThat(c.source()).isEqualTo("auths in " + config.resolve("config.json"));
        assertThat(auth().forImage(ImageReference.parse("127.0.0.1:5001/hm/busybox:1"))).isEqualTo(RegistryAuth.Credentials.NONE);
        assertThat(auth().forImage(ImageReference.parse("busybox:1"))).isEqualTo(RegistryAuth.Credentials.NONE);
    }

    @Test
    void dockerHubsEntryIsFoundUnderItsV1Address() throws Exception {
        configJson("{\"auths\":{\"https://index.docker.io/v1/\":{\"auth\":\"" + basic("hub:pw") + "\"}}}");
        assertThat(auth().forImage(ImageReference.parse("mesh-demo/busybox:1")).auth().getUsername()).isEqualTo("hub");
        assertThat(auth().forImage(ImageReference.parse("docker.io/library/busybox")).auth().getUsername()).isEqualTo("hub");
    }

    /** Docker's order: the registry's credHelpers entry wins over credsStore and auths; it is asked with get and the host. */
    @Test
    void aCredHelperIsAskedWithDockersProtocolAndWins() throws Exception {
        helper("hmtest", "echo '{\"ServerURL\":\"127.0.0.1:5000\",\"Username\":\"from-helper\",\"Secret\":\"s3cret\"}'");
        helper("store", "echo '{\"ServerURL\":\"x\",\"Username\":\"from-store\",\"Secret\":\"x\"}'");
        configJson("{\"auths\":{\"127.0.0.1:5000\":{\"auth\":\"" + basic("from-auths:pw") + "\"}},"
                + "\"credHelpers\":{\"127.0.0.1:5000\":\"hmtest\"},\"credsStore\":\"store\"}");
        RegistryAuth.Credentials c = auth().forImage(PRIVATE);
        assertThat(c.auth().getUsername()).isEqualTo("from-helper");
        assertThat(c.auth().getPassword()).isEqualTo("s3cret");
        assertThat(c.source()).isEqualTo("credential helper docker-credential-hmtest");
        assertThat(Files.readAllLines(bin.resolve("hmtest.log"))).containsExactly("get 127.0.0.1:5000");
        assertThat(bin.resolve("store.log")).doesNotExist();
        // another registry: credsStore
        assertThat(auth().forImage(ImageReference.parse("127.0.0.1:5001/x:1")).auth().getUsername()).isEqualTo("from-store");
        assertThat(Files.readAllLines(bin.resolve("store.log"))).containsExactly("get 127.0.0.1:5001");
    }

    @Test
    void aHelperWithoutCredentialsForTheRegistryLeavesItToAuths() throws Exception {
        helper("empty", "echo 'credentials not found in native keychain'; exit 1");
        configJson("{\"auths\":{\"127.0.0.1:5000\":{\"auth\":\"" + basic("from-auths:pw") + "\"}},\"credsStore\":\"empty\"}");
        assertThat(auth().forImage(PRIVATE).auth().getUsername()).isEqualTo("from-auths");
        assertThat(auth().forImage(ImageReference.parse("127.0.0.1:5001/x:1"))).isEqualTo(RegistryAuth.Credentials.NONE);
    }

    @Test
    void aTokenUsernameMakesTheSecretAnIdentityToken() throws Exception {
        helper("tok", "echo '{\"ServerURL\":\"127.0.0.1:5000\",\"Username\":\"<token>\",\"Secret\":\"refresh-token\"}'");
        configJson("{\"credHelpers\":{\"127.0.0.1:5000\":\"tok\"}}");
        AuthConfig a = auth().forImage(PRIVATE).auth();
        assertThat(a.getIdentitytoken()).isEqualTo("refresh-token");
        assertThat(a.getUsername()).isNull();
    }

    @Test
    void aMissingHelperIsNamedWithWhereItWasLookedFor() throws Exception {
        configJson("{\"credHelpers\":{\"127.0.0.1:5000\":\"absent\"}}");
        assertThatThrownBy(() -> auth().forImage(PRIVATE)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("docker-credential-absent").hasMessageContaining("not on the agent's PATH")
                .hasMessageContaining(bin.toString()).hasMessageContaining("install it");
    }

    /** A failing helper is named with its exit code, never its output (either stream may hold a secret). */
    @Test
    void aFailingHelperIsNamedWithHowToTryItByHand() throws Exception {
        helper("broken", "echo 'half-written-secret'; echo 'vault said: token s3cr3t-in-stderr rejected' >&2; exit 3");
        configJson("{\"credHelpers\":{\"127.0.0.1:5000\":\"broken\"}}");
        assertThatThrownBy(() -> auth().forImage(PRIVATE)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("(exit 3)").hasMessageContaining("echo 127.0.0.1:5000 | ")
                .hasMessageNotContaining("half-written-secret").hasMessageNotContaining("s3cr3t-in-stderr");
        helper("nonsense", "echo 'not json'");
        configJson("{\"credHelpers\":{\"127.0.0.1:5000\":\"nonsense\"}}");
        assertThatThrownBy(() -> auth().forImage(PRIVATE)).hasMessageContaining("answered no {\"Username\", \"Secret\"} JSON");
    }

    @Test
    void aBrokenConfigJsonIsNamedAtCheck() throws Exception {
        configJson("{\"auths\": [");
        assertThatThrownBy(() -> auth().check()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(config.resolve("config.json").toString()).hasMessageContaining("--docker-config");
        configJson("{\"credHelpers\":{\"127.0.0.1:5000\":\"../../bin/sh\"}}");
        assertThatThrownBy(() -> auth().check()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("credHelpers names '../../bin/sh'");
    }

    /** Jackson quotes the offending token, here an unquoted base64 user:password: the error names only file and place. */
    @Test
    void aMalformedConfigJsonNeverQuotesItsContent() throws Exception {
        String secret = basic("user:s3cr3t").replace("=", "");
        configJson("{\"auths\":{\"reg\":{\n  \"auth\": " + secret + "}}}");
        assertThatThrownBy(() -> auth().forImage(PRIVATE)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(config.resolve("config.json").toString()).hasMessageContaining("line 2, column")
                .hasMessageNotContaining(secret).hasMessageNotContaining(secret.substring(0, 8))
                .hasNoCause();
        configJson("[\"" + secret + "\"]");
        assertThatThrownBy(() -> auth().check()).hasMessageContaining("not a JSON object").hasMessageNotContaining(secret);
    }

    @Test
    void withoutAFlagDockersOwnDefaultIsRead() {
        assertThat(RegistryAuth.of(null).dir()).isAbsolute();
        assertThat(RegistryAuth.pathDirs("/a:/b::/c")).containsExactly(Path.of("/a"), Path.of("/b"), Path.of("/c"));
    }
}
