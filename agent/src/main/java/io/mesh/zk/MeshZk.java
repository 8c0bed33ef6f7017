package io.mesh.zk;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Curator clients as every mesh process makes them: same retry policy, same session timeout.
 */
public final class MeshZk {
    /** Default connect string, {@code 127.0.0.1:2181}. */
    public static final String DEFAULT_CONNECT = "127.0.0.1:2181";
    /** ZooKeeper session timeout; the held and window nodes of a dead process vanish this long after it dies. */
    public static final Duration SESSION_TIMEOUT = Duration.ofSeconds(15);
    /** Connection timeout of each attempt. */
    public static final Duration CONNECTION_TIMEOUT = Duration.ofSeconds(5);

    private MeshZk() {}

    /**
     * Starts a client and waits for its first connection.
     *
     * @param connect  ZooKeeper connect string such as {@code 127.0.0.1:2181} or {@code a:2181,b:2181,c:2181}
     * @param waitFor  how long to wait for the first connection
     * @return a started client; close it when done
     * @throws IllegalStateException when no connection is made within {@code waitFor}
     * @throws InterruptedException  when interrupted while waiting
     */
    public static CuratorFramework connect(String connect, Duration waitFor) throws InterruptedException {
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(connect)
                .sessionTimeoutMs((int) SESSION_TIMEOUT.toMillis())
                .connectionTimeoutMs((int) CONNECTION_TIMEOUT.toMillis())
                .retryPolicy(new ExponentialBackoffRetry(200, 10, 5_000))
                .build();
        client.start();
        if (!client.blockUntilConnected((int) waitFor.toMillis(), TimeUnit.MILLISECONDS)) {
            client.close();
            throw new IllegalStateException("ZooKeeper at " + connect + " did not answer within " + waitFor.toSeconds()
                    + "s: check --zk (default " + DEFAULT_CONNECT + ") and that the ensemble is up");
        }
        return client;
    }
}
