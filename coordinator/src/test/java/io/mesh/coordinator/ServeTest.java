package io.mesh.coordinator;

import io.mesh.curator.MeshZk;
import io.mesh.testing.TestZk;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The embedded ZooKeeper of {@code serve} (on a free port, not 2181), and {@code --listen} parsing. */
class ServeTest {
    @TempDir
    Path state;

    @Test
    void embeddedZooKeeperServesOnLoopbackAndKeepsDataUnderTheStateDir() throws Exception {
        int port = TestZk.freePort();
        try (EmbeddedZk zk = EmbeddedZk.start(state, port)) {
            assertThat(zk.connectString()).isEqualTo("127.0.0.1:" + port);
            CuratorFramework c = MeshZk.connect(zk.connectString(), Duration.ofSeconds(20));
            try {
                c.create().creatingParentsIfNeeded().forPath("/mesh/probe", "{}".getBytes(StandardCharsets.UTF_8));
            } finally {
                c.close();
            }
        }
        assertThat(Files.list(state.resolve("zookeeper/data")).toList()).isNotEmpty();
        try (EmbeddedZk zk = EmbeddedZk.start(state, port)) {
            CuratorFramework c = MeshZk.connect(zk.connectString(), Duration.ofSeconds(20));
            try {
                assertThat(c.checkExists().forPath("/mesh/probe")).isNotNull();
            } finally {
                c.close();
            }
        }
    }

    @Test
    void listenParsing() {
        assertThat(CoordinatorMain.parseListen("127.0.0.1:7070").getPort()).isEqualTo(7070);
        assertThat(CoordinatorMain.parseListen("127.0.0.1:0").getAddress().isLoopbackAddress()).isTrue();
        assertThat(CoordinatorMain.parseListen("[::1]:7070").getAddress().isLoopbackAddress()).isTrue();
        assertThatThrownBy(() -> CoordinatorMain.parseListen("7070")).hasMessageContaining("HOST:PORT");
        assertThatThrownBy(() -> CoordinatorMain.parseListen("127.0.0.1:99999")).hasMessageContaining("65535");
    }
}
