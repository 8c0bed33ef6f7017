package io.mesh.coordinator;

import io.mesh.testing.SecureTestZk;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code mesh-coordinator}'s commands with {@code --zk-tls FILE} against a real ZooKeeper's {@code secureClientPort}
 * (docs/decisions/0040-tls.md): {@code credentials} issues over TLS; {@code serve} refuses TLS to its embedded
 * ZooKeeper, and a file ZooKeeper would misread, before starting anything.
 */
class ZkTlsCommandsTest {
    @TempDir
    static Path dir;
    static SecureTestZk zk;

    @BeforeAll
    static void start() throws Exception { zk = new SecureTestZk(dir); }

    @AfterAll
    static void stop() throws Exception { zk.close(); }

    record Run(int code, String out, String err) {}

    static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = new CommandLine(new CoordinatorMain()).setOut(new PrintWriter(out)).setErr(new PrintWriter(err)).execute(args);
        return new Run(code, out.toString(), err.toString());
    }

    @Test
    void credentialsAreIssuedOverTls() throws Exception {
        Path admin = Files.writeString(dir.resolve("admin.auth"), "mesh:admin-s3cret-pw\n");
        Path out = dir.resolve("host-a.auth");
        Run r = run("credentials", "host-a", "--zk", zk.secureConnect(), "--zk-tls", zk.clientProperties().toString(),
                "--zk-auth-file", admin.toString(), "--out", out.toString());
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(Files.readString(out)).contains("\nhost-host-a:");
    }

    @Test
    void serveRefusesTlsToItsEmbeddedZooKeeperAndAMisspelledFile() throws Exception {
        Run embedded = run("serve", "--listen", "127.0.0.1:0", "--state-dir", dir.resolve("state").toString(),
                "--zk-tls", zk.clientProperties().toString());
        assertThat(embedded.code()).isEqualTo(2);
        assertThat(embedded.err()).contains("--zk-tls needs --zk: the embedded ZooKeeper serves plain text");

        Path typo = Files.writeString(dir.resolve("typo.properties"),
                Files.readString(zk.clientProperties()).replace("zookeeper.client.secure", "zookeeper.client.secur"));
        Run misspelled = run("serve", "--zk", zk.secureConnect(), "--listen", "127.0.0.1:0", "--zk-tls", typo.toString());
        assertThat(misspelled.code()).isEqualTo(2);
        assertThat(misspelled.err()).contains("'zookeeper.client.secur' is not a property of ZooKeeper's client");

        Run noKey = run("serve", "--zk", zk.secureConnect(), "--listen", "127.0.0.1:0", "--tls-cert", zk.ca().cert().toString());
        assertThat(noKey.code()).isEqualTo(2);
        assertThat(noKey.err()).contains("--tls-cert and --tls-key go together");
    }
}
