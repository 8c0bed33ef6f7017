package io.mesh.bench;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;

import java.util.concurrent.TimeUnit;

/**
 * B8's floor: a {@code main} that starts a Curator client on the ensemble given as its one argument, says it
 * started, and then only sleeps. {@link AgentIdleBench} runs it through the agent's own launcher and flags, so that
 * the threads and memory every JVM holding a ZooKeeper session through Curator has (the JVM's own; ZooKeeper's send
 * and event threads, which its client's constructor starts; Curator's background loop and connection-state manager,
 * which {@code start()} starts) are measured beside the agent's.
 */
public final class IdleMain {
    /** The line it prints once started. */
    static final String STARTED = "idle";

    private IdleMain() {}

    public static void main(String[] args) throws InterruptedException {
        CuratorFramework client = CuratorFrameworkFactory.newClient(args[0], new ExponentialBackoffRetry(1000, 3));
        client.start();
        if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) throw new IllegalStateException("no ZooKeeper at " + args[0]);
        System.out.println(STARTED);
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
