package io.mesh.zk;

import io.mesh.curator.MeshZk;
import io.mesh.curator.ZkTls;
import io.mesh.testing.SecureTestZk;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code --zk-tls FILE} (docs/decisions/0040-tls.md): a mesh client given ZooKeeper's client TLS properties connects to
 * an ensemble's {@code secureClientPort} and reads; one without cannot, and says so within its bound; a file ZooKeeper
 * would misread is refused naming what is wrong. The client's settings are its own, never the JVM's system properties.
 */
class ZkTlsTest {
    @TempDir
    static Path dir;
    static SecureTestZk zk;

    @BeforeAll
    static void start() throws Exception { zk = new SecureTestZk(dir); }

    @AfterAll
    static void stop() throws Exception { zk.close(); }

    @Test
    void aClientWithTheFileConnectsOverTlsAndReadsWhatAPlainClientWrote() throws Exception {
        ZkPaths paths = new ZkPaths(ZkPaths.DEFAULT_ROOT);
        try (CuratorFramework plain = MeshZk.connect(zk.plainConnect(), Duration.ofSeconds(20))) {
            plain.create().orSetData().creatingParentsIfNeeded().forPath("/mesh/probe", "{\"over\":\"tls\"}".getBytes(StandardCharsets.UTF_8));
        }
        ZkTls tls = ZkTls.resolve(null, Map.of(ZkTls.ENV, zk.clientProperties().toString()));
        try (CuratorFramework secure = MeshZk.connect(zk.secureConnect(), Duration.ofSeconds(20), null, paths, tls)) {
            assertThat(new String(secure.getData().forPath("/mesh/probe"), StandardCharsets.UTF_8)).isEqualTo("{\"over\":\"tls\"}");
            assertThat(secure.getZookeeperClient().getZooKeeper().getClientConfig().getBoolean("zookeeper.client.secure")).isTrue();
        }
        // The client's settings came from its file alone: the JVM's hold only the server's (SecureTestZk).
        assertThat(System.getProperty("zookeeper.client.secure")).isNull();
        assertThat(System.getProperty("zookeeper.clientCnxnSocket")).isNull();
    }

    @Test
    void aClientWithoutTlsCannotConnectToTheSecurePortAndSaysSoWithinItsBound() {
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> MeshZk.connect(zk.secureConnect(), Duration.ofSeconds(3)).close())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("did not answer within 3s")
                .hasMessageContaining("give --zk-tls FILE");
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(10));
    }

    @Test
    void aFileZooKeeperWouldMisreadIsRefusedNamingIt() throws Exception {
        assertThatThrownBy(() -> ZkTls.read(dir.resolve("none.properties"), "--zk-tls"))
                .hasMessageContaining("--zk-tls " + dir.resolve("none.properties") + " cannot be read");
        String good = Files.readString(zk.clientProperties());
        Path typo = Files.writeString(dir.resolve("typo.properties"), good.replace("zookeeper.ssl.trustStore.location", "zookeeper.ssl.trustStore.locaton"));
        assertThatThrownBy(() -> ZkTls.read(typo, "--zk-tls"))
                .hasMessageContaining("'zookeeper.ssl.trustStore.locaton' is not a property of ZooKeeper's client: check its spelling");
        Path plain = Files.writeString(dir.resolve("plain.properties"), good.replace("zookeeper.client.secure=true", "zookeeper.client.secure=false"));
        assertThatThrownBy(() -> ZkTls.read(plain, "--zk-tls")).hasMessageContaining("does not set zookeeper.client.secure=true: add that line");
        Path nio = Files.writeString(dir.resolve("nio.properties"), good.replace("zookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty\n", ""));
        assertThatThrownBy(() -> ZkTls.read(nio, "--zk-tls")).hasMessageContaining("set zookeeper.clientCnxnSocket=" + ZkTls.NETTY);
        Path gone = Files.writeString(dir.resolve("gone.properties"), good.replace(zk.ca().cert().toString(), dir.resolve("gone.pem").toString()));
        assertThatThrownBy(() -> ZkTls.read(gone, "--zk-tls"))
                .hasMessageContaining("zookeeper.ssl.trustStore.location=" + dir.resolve("gone.pem") + " is not a readable file");
        Path notPem = Files.writeString(dir.resolve("notpem.properties"), good.replace("zookeeper.ssl.trustStore.location=" + zk.ca().cert(),
                "zookeeper.ssl.trustStore.location=" + typo));
        assertThatThrownBy(() -> ZkTls.read(notPem, "--zk-tls")).hasMessageContaining("ZooKeeper cannot make its TLS context from it");
        // ZooKeeper reads any word but true as false: a misspelt value would turn the host name check off unsaid
        Path flase = Files.writeString(dir.resolve("flase.properties"), good + "zookeeper.ssl.hostnameVerification=flase\n");
        assertThatThrownBy(() -> ZkTls.read(flase, "--zk-tls"))
                .hasMessageContaining("zookeeper.ssl.hostnameVerification=flase is neither true nor false");
        Path off = Files.writeString(dir.resolve("off.properties"), good + "zookeeper.ssl.hostnameVerification=False\n");
        assertThat(ZkTls.read(off, "--zk-tls").file()).isEqualTo(off);
    }
}
