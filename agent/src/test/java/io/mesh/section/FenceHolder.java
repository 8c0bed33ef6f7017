package io.mesh.section;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * A second process for {@link HostFenceTest} (started with {@code io.mesh.testing.ChildJvm}, so it dies with the test
 * JVM). Usage: {@code FenceHolder STATE-DIR MODULE hold RELEASE-FILE} takes the module's fence (waiting up to 10 s),
 * prints {@code HELD}, and gives it back when RELEASE-FILE appears (printing {@code RELEASED}), then idles;
 * {@code FenceHolder STATE-DIR MODULE try WAIT-MILLIS} tries once, prints {@code GOT} or {@code REFUSED} and exits
 * 0 or 1.
 */
public final class FenceHolder {
    private FenceHolder() {}

    public static void main(String[] args) throws Exception {
        HostFence fences = new HostFence(Path.of(args[0]));
        String module = args[1];
        String holder = "fence-holder pid " + ProcessHandle.current().pid();
        switch (args[2]) {
            case "hold" -> {
                Optional<HostFence.Held> held = fences.acquire(module, holder, Duration.ofSeconds(10));
                if (held.isEmpty()) {
                    System.out.println("REFUSED");
                    System.exit(1);
                }
                // Reading who holds it (what a waiter's log does) must not drop it: the test checks from outside.
                for (int i = 0; i < 3; i++) fences.holder(module);
                System.out.println("HELD " + holder);
                Path release = Path.of(args[3]);
                while (!Files.exists(release)) Thread.sleep(20);
                held.get().close();
                System.out.println("RELEASED");
                Thread.sleep(Long.MAX_VALUE);
            }
            case "try" -> {
                Optional<HostFence.Held> held = fences.acquire(module, holder, Duration.ofMillis(Long.parseLong(args[3])));
                System.out.println(held.isPresent() ? "GOT" : "REFUSED");
                held.ifPresent(HostFence.Held::close);
                System.exit(held.isPresent() ? 0 : 1);
            }
            default -> throw new IllegalArgumentException("hold or try, not " + args[2]);
        }
    }
}
