package io.mesh.coordinator;

import io.mesh.testing.ZooKeeperExtension;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A push of a module with {@code rollout} writes one child per host in its transaction (decision 13). Its size check
 * ({@link PushWriter#MAX_TRANSACTION_BYTES}) must keep every transaction it lets through under ZooKeeper's
 * {@code jute.maxbuffer}: a push it passes and ZooKeeper refuses is a lost connection, not the clear 413.
 */
class RolloutPushSizeTest {
    @RegisterExtension
    static final ZooKeeperExtension zk = new ZooKeeperExtension().resetBeforeEach();

    @Test
    void aRolloutPushToThousandsOfHostsIsTakenOrRefusedAsTooLargeNeverSentOverTheLimit() throws Exception {
        int hosts = Integer.getInteger("rvsz.hosts", 6000);
        zk.client().create().creatingParentsIfNeeded().forPath(zk.paths().agents(), "{}".getBytes());
        List<CuratorOp> ops = new ArrayList<>();
        for (int i = 0; i < hosts; i++) {
            ops.add(zk.client().transactionOp().create().forPath(zk.paths().agent(String.format("rvsz-%05d", i)), "{}".getBytes()));
            if (ops.size() == 500) { zk.client().transaction().forOperations(ops); ops.clear(); }
        }
        String yaml = "module: rvsz-app\nhosts: [\"*\"]\nrollout:\n  max-parallel: 10\ncontainers:\n  app:\n    image: img:1\n";
        PushWriter writer = new PushWriter(zk.client(), zk.paths(), Clock.systemUTC());
        // Curator retries a request whose connection ZooKeeper closed: bounded here so that the test ends.
        CompletableFuture<Object> first = CompletableFuture.supplyAsync(() -> {
            try {
                return writer.write(yaml, "r1");
            } catch (Exception e) {
                return e;
            }
        });
        Object outcome = first.get(120, TimeUnit.SECONDS);
        assertThat(outcome).as("taken, or refused with TooLargeException; got %s", outcome)
                .satisfiesAnyOf(o -> assertThat(o).isInstanceOf(PushWriter.Result.class),
                        o -> assertThat(o).isInstanceOf(PushWriter.TooLargeException.class));
    }
}
