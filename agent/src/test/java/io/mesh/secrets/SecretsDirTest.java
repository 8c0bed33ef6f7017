package io.mesh.secrets;

import io.mesh.docker.SecretDelivery;
import io.mesh.manifest.ContainerSpec;
import io.mesh.manifest.SecretRef;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** Reading a container's secrets from the secrets dir (decision 18): what is delivered, digested and refused. */
class SecretsDirTest {
    @TempDir
    Path tmp;
    private Path dir;
    private Path state;
    private SecretsDir secrets;

    @BeforeEach
    void setUp() throws Exception {
        dir = Files.createDirectory(tmp.resolve("secrets"));
        state = tmp.resolve("state");
        secrets = new SecretsDir(dir, new DigestKey(state));
    }

    private static ContainerSpec spec(Map<String, SecretRef> s) {
        return ContainerSpec.builder("img").secrets(s).build();
    }

    @Test
    void anEnvSecretLosesOneLineEndAndAFileSecretIsMountedFromItsRealPath() throws Exception {
        Files.createDirectories(dir.resolve("db"));
        Files.writeString(dir.resolve("db/password"), "hunter2\r\n");
        Files.writeString(dir.resolve("real.key"), "KEY");
        Files.createSymbolicLink(dir.resolve("tls.key"), dir.resolve("real.key")); // a link inside the dir is fine

        SecretsDir.Resolved r = secrets.resolve(spec(Map.of("DB", SecretRef.env("db/password"),
                "tls", SecretRef.mounted("tls.key", "/run/tls.key"))));

        assertThat(r.problems()).isEmpty();
        assertThat(r.delivery().env()).isEqualTo(Map.of("DB", "hunter2"));
        assertThat(r.delivery().files()).containsExactly(new SecretDelivery.FileMount(dir.resolve("real.key").toRealPath(), "/run/tls.key"));
        assertThat(r.digests().keySet()).containsExactlyInAnyOrder("DB", "tls");
        assertThat(r.digests().values()).allSatisfy(d -> assertThat(d).matches("hmac-sha256:[0-9a-f]{16}"));
        assertThat(r.delivery().toString()).contains("DB").doesNotContain("hunter2");
    }

    /** The digest is of the bytes under this host's key: same bytes, same digest; another key or byte, another. */
    @Test
    void theDigestIsKeyedPerHostAndTheKeyIsKeptPrivate() throws Exception {
        Files.writeString(dir.resolve("p"), "short");
        ContainerSpec s = spec(Map.of("P", SecretRef.env("p")));
        String d1 = secrets.resolve(s).digests().get("P");

        assertThat(new SecretsDir(dir, new DigestKey(state)).resolve(s).digests().get("P")).as("the same key, read again").isEqualTo(d1);
        assertThat(Files.readAllBytes(state.resolve(DigestKey.FILE))).hasSize(32);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(state.resolve(DigestKey.FILE)))).isEqualTo("rw-------");
        assertThat(new SecretsDir(dir, new DigestKey(tmp.resolve("other-host"))).resolve(s).digests().get("P"))
                .as("another host's key").isNotEqualTo(d1);
        Files.writeString(dir.resolve("p"), "short2");
        assertThat(secrets.resolve(s).digests().get("P")).as("a rotated file").isNotEqualTo(d1);
    }

    @Test
    void eachSecretThatCannotBeHadIsNamedWithItsFileAndNeverItsValue() throws Exception {
        String outside = "outside-" + UUID.randomUUID();
        Path elsewhere = Files.writeString(tmp.resolve("elsewhere"), outside);
        Files.createSymbolicLink(dir.resolve("escape"), elsewhere);
        Files.createDirectory(dir.resolve("adir"));
        String nul = "nul-" + UUID.randomUUID();
        Files.write(dir.resolve("nul"), (nul + "\0x").getBytes());
        Files.write(dir.resolve("latin1"), new byte[] {'a', (byte) 0xe9});
        Files.write(dir.resolve("big"), new byte[SecretsDir.MAX_ENV_BYTES + 1]);

        SecretsDir.Resolved r = secrets.resolve(spec(Map.of(
                "MISSING", SecretRef.env("db/none"),
                "ESCAPE", SecretRef.env("escape"),
                "DIR", SecretRef.mounted("adir", "/x"),
                "NUL", SecretRef.env("nul"),
                "LATIN", SecretRef.env("latin1"),
                "BIG", SecretRef.env("big"))));

        assertThat(r.complete()).isFalse();
        assertThat(r.delivery()).isEqualTo(SecretDelivery.NONE); // a container is created with all its secrets or not at all
        assertThat(r.problems()).containsExactlyInAnyOrder(
                "secret MISSING: file db/none is missing from the secrets dir " + dir + " (--secrets-dir): put it there, readable by the agent",
                "secret ESCAPE: file escape leads outside the secrets dir " + dir + " (--secrets-dir) through a symbolic link: a secret must be a file inside it",
                "secret DIR: file adir is not a regular file in the secrets dir " + dir + ": give the path of a file",
                "secret NUL: file nul holds a NUL byte, which an environment variable cannot: give it a target to mount it as a file",
                "secret LATIN: file latin1 is not UTF-8 text, which an environment variable needs: give it a target to mount it as a file",
                "secret BIG: file big is larger than 64 KiB, too large for an environment variable: give it a target to mount it as a file");
        assertThat(String.join("\n", r.problems())).doesNotContain(outside, nul, elsewhere.toString());
        // A file secret may be large and binary: only its digest is taken.
        assertThat(secrets.resolve(spec(Map.of("blob", SecretRef.mounted("big", "/b")))).problems()).isEmpty();
    }

    /** What the container prints loses each value: an env secret's, a text file's whole text and each of its lines. */
    @Test
    void theRedactionTakesOutEachValueAndEachLineOfAFile() throws Exception {
        Files.writeString(dir.resolve("p"), "hunter22\n");
        Files.writeString(dir.resolve("pem"), "-----BEGIN-----\nAAAABBBB\n-----END-----\n");
        Files.writeString(dir.resolve("short"), "abc");
        SecretsDir.Resolved r = secrets.resolve(spec(Map.of("P", SecretRef.env("p"), "pem", SecretRef.mounted("pem", "/k"),
                "S", SecretRef.env("short"))));

        assertThat(r.redaction().apply("login hunter22 failed; key AAAABBBB")).isEqualTo("login <secret P> failed; key <secret pem>");
        assertThat(r.redaction().apply("abc stays")).as("shorter than " + Redaction.MIN_LENGTH).isEqualTo("abc stays");
        assertThat(r.redaction().toString()).doesNotContain("hunter22", "AAAABBBB").contains("P", "pem");
        assertThat(r.toString()).doesNotContain("hunter22", "AAAABBBB");
    }

    @Test
    void aMissingSecretsDirSaysToCreateIt() {
        SecretsDir none = new SecretsDir(tmp.resolve("absent"), new DigestKey(state));
        assertThat(none.resolve(spec(Map.of("P", SecretRef.env("p")))).problems()).singleElement().asString()
                .contains("secret P: file p", "the secrets dir " + tmp.resolve("absent") + " (--secrets-dir) does not exist", "create it");
    }

    @Test
    void aContainerWithoutSecretsReadsNothing() {
        assertThat(new SecretsDir(tmp.resolve("absent"), new DigestKey(tmp.resolve("no-state"))).resolve(spec(null)))
                .isSameAs(SecretsDir.Resolved.NONE);
        assertThat(tmp.resolve("no-state")).doesNotExist(); // no key is made for a host without secrets
    }
}
