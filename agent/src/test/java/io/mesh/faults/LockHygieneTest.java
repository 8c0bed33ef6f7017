package io.mesh.faults;

import io.mesh.curator.MeshZk;
import io.mesh.section.ModuleLock;
import io.mesh.testing.EnsembleExtension;
import io.mesh.wire.LockHolder;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fault 8 (docs/failure-model.md), lock hygiene: 10,000 acquire/release cycles of {@link ModuleLock} (the lock every
 * apply and window takes), from six clients contending for six module locks on the real ensemble, leave nothing
 * under {@code <root>/locks} but the lock parents {@code <root>/locks/<module>/<host>}: no lock child, no orphan.
 * Meanwhile no two holders of one lock overlap.
 */
@Tag("slow")
class LockHygieneTest {
    private static final int CYCLES = 10_000;
    private static final int CLIENTS = 6;
    private static final List<String> MODULES = List.of("hyg-a", "hyg-b", "hyg-c", "hyg-d", "hyg-e", "hyg-f");

    @RegisterExtension
    final EnsembleExtension zk = new EnsembleExtension();

    @Test
    void tenThousandCyclesLeaveOnlyTheLockParents() throws Exception {
        ZkPaths paths = new ZkPaths("/hygiene" + Long.toHexString(System.nanoTime()));
        List<CuratorFramework> clients = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
        try {
            for (int i = 0; i < CLIENTS; i++) clients.add(MeshZk.connect(zk.connect(), Duration.ofSeconds(30)));
            AtomicInteger done = new AtomicInteger();
            AtomicInteger[] inside = MODULES.stream().map(x -> new AtomicInteger()).toArray(AtomicInteger[]::new);
            ConcurrentLinkedQueue<String> overlaps = new ConcurrentLinkedQueue<>();
            List<Future<?>> workers = new ArrayList<>();
            long t0 = System.nanoTime();
            for (int c = 0; c < CLIENTS; c++) {
                CuratorFramework client = clients.get(c);
                Random random = new Random(c);
                int cycles = CYCLES / CLIENTS + (c < CYCLES % CLIENTS ? 1 : 0);
                ProcessRef who = new ProcessRef(ProcessHandle.current().pid(), "hygiene client " + c);
                workers.add(pool.submit(() -> {
                    for (int n = 0; n < cycles; n++) {
                        int m = random.nextInt(MODULES.size());
                        String purpose = n % 10 == 0 ? LockHolder.windowPurpose("gc") : LockHolder.APPLY;
                        ModuleLock lock = new ModuleLock(client, paths, MODULES.get(m), "host-" + (m % 2), who, purpose);
                        if (!lock.acquire(Duration.ofSeconds(20))) throw new AssertionError("lock not acquired within 20s");
                        try {
                            if (inside[m].incrementAndGet() != 1) overlaps.add(MODULES.get(m));
                            assertThat(lock.isHeld()).isTrue();
                            inside[m].decrementAndGet();
                        } finally {
                            lock.release();
                        }
                        done.incrementAndGet();
                    }
                    return null;
                }));
            }
            for (Future<?> w : workers) w.get(4, TimeUnit.MINUTES);
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            System.out.printf("lock hygiene: %d cycles in %d ms%n", done.get(), ms);

            assertThat(done.get()).isEqualTo(CYCLES);
            assertThat(overlaps).as("two holders of one lock at once").isEmpty();
            CuratorFramework c = clients.get(0);
            List<String> leftovers = new ArrayList<>();
            for (String m : c.getChildren().forPath(paths.locks())) {
                for (String h : c.getChildren().forPath(paths.locks() + "/" + m)) {
                    String lockPath = paths.locks() + "/" + m + "/" + h;
                    for (String child : c.getChildren().forPath(lockPath)) leftovers.add(lockPath + "/" + child);
                }
            }
            assertThat(leftovers).as("znodes under %s beyond the lock parents", paths.locks()).isEmpty();
            assertThat(c.getChildren().forPath(paths.locks())).containsExactlyInAnyOrderElementsOf(MODULES);
        } finally {
            pool.shutdownNow();
            if (!clients.isEmpty()) {
                try {
                    clients.get(0).delete().deletingChildrenIfNeeded().forPath(paths.root());
                } catch (Exception ignored) {
                    // best effort
                }
            }
            for (CuratorFramework c : clients) c.close();
        }
    }
}
