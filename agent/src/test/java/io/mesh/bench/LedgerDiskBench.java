package io.mesh.bench;

import io.mesh.ledger.Ledger;
import io.mesh.ledger.LedgerFiles;
import io.mesh.wire.LedgerEntry;
import io.mesh.wire.LedgerKind;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;

/**
 * B13, the ledger on disk (decision 28): {@code --lines} Docker EVENT lines as the event follower writes them (modules
 * named like {@code store-registry}, containers {@code <module>-<name>}, 64-hex ids, times to the nanosecond, a
 * {@code die}'s exit code) written through the real {@link Ledger} into a fresh state dir, in chunks of 4,096 (eight of the
 * writer's full batches) each waited for ({@link Ledger#flush}: the writer's queue holds {@value Ledger#QUEUE}, and a
 * bench that drops lines measures nothing), then closed and compressed as the daemon's keeper compresses closed files
 * (decision 29); the bytes of {@code ledger/} counted. The answer is checked: {@link LedgerFiles} must read every line
 * back from the compressed files, chain verified, with no gap.
 *
 * <p>Besides mesh's bytes it prints two figures for the reader: the files as written, before compression (what the
 * file being written costs until it is closed: up to a day or 64 MiB), and the floor (the same facts as one
 * tab-separated text line each: time, module, container, id, action, exit code; no field names, no chain).
 *
 * <p>Args: --results FILE [--lines 10000]
 */
public final class LedgerDiskBench {
    /** Module names of the kind an operator gives. */
    static final String[] MODULES = {"store-registry", "billing-api", "search-indexer", "auth-gateway", "metrics-relay",
            "orders-worker", "media-thumbnailer", "mail-outbox", "ledger-export", "cache-warmer"};
    /**
     * Lines queued at once: eight full batches (the writer fsyncs each 512 lines, or 200 ms after a batch's first
     * line), so only the last chunk's partial batch waits out the 200 ms; under {@link Ledger#QUEUE}, so none drops.
     */
    static final int CHUNK = 4096;
    static final String[] NAMES = {"web", "worker", "db", "proxy"};
    /** What containers' events look like over a day: starts and stops of windows and recreates. */
    static final String[] ACTIONS = {"create", "start", "kill", "die", "stop", "rename", "destroy", "update"};

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = Bench.args(argv);
        Path results = Path.of(a.getOrDefault("results", "target/bench-b13.properties"));
        int n = Integer.parseInt(a.getOrDefault("lines", "10000"));
        Path state = Files.createTempDirectory("mesh-bench-ledger");
        try {
            List<LedgerEntry> lines = events(n, new Random(11));
            Ledger ledger = Ledger.open(state);
            long t = System.nanoTime();
            for (int i = 0; i < n; i += CHUNK) {
                for (int j = i; j < Math.min(n, i + CHUNK); j++) ledger.write(lines.get(j));
                if (!ledger.flush(Duration.ofSeconds(30))) throw new IllegalStateException("the ledger did not write " + CHUNK + " lines in 30 s");
            }
            double ms = Bench.ms(System.nanoTime() - t);
            ledger.close();

            Path dir = state.resolve(Ledger.DIR);
            long plain = 0;
            List<Path> written;
            try (Stream<Path> files = Files.list(dir)) {
                written = files.filter(f -> f.getFileName().toString().endsWith(".jsonl")).toList();
            }
            String sample = Files.readAllLines(written.get(0)).get(3);
            for (Path f : written) plain += Files.size(f);
            // As the daemon's keeper leaves a file once its writer closed it (decision 29): this bench's writer is
            // closed, so each of its files is compressed now rather than at the keeper's next pass.
            io.mesh.ledger.LedgerCompression compression = io.mesh.ledger.LedgerCompression.of(state);
            long cz = System.nanoTime();
            for (Path f : written) compression.compress(f);
            double compressMs = Bench.ms(System.nanoTime() - cz);
            long bytes = 0;
            try (Stream<Path> files = Files.list(dir)) {
                for (Path f : files.toList()) if (f.getFileName().toString().endsWith(".jsonl.gz")) bytes += Files.size(f);
            }
            // The check: every line back from the compressed files, verified, no gap (a dropped line would be a gap).
            List<LedgerEntry> back = LedgerFiles.of(state).all();
            long events = back.stream().filter(e -> e.kind() == LedgerKind.EVENT).count();
            long gaps = back.stream().filter(e -> e.kind() == LedgerKind.GAP).count();
            if (events != n || gaps != 0) throw new IllegalStateException("read back " + events + " events and " + gaps + " gaps, wrote " + n);

            long floor = 0;
            for (LedgerEntry e : lines) floor += floorLine(e).getBytes(StandardCharsets.UTF_8).length;
            double per10k = bytes * 10_000.0 / n;
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("b13.disk.lines", n);
            m.put("b13.disk.bytes", bytes);
            m.put("b13.disk.bytes_per_line", bytes / (double) n);
            m.put("b13.disk.mib_per_10k", per10k / (1024 * 1024));
            m.put("b13.disk.floor_mib_per_10k", floor * 10_000.0 / n / (1024 * 1024));
            m.put("b13.disk.plain_mib_per_10k", plain * 10_000.0 / n / (1024 * 1024));
            m.put("b13.disk.lines_per_s", n / (ms / 1000));
            m.put("b13.disk.compress_ms", compressMs);
            m.put("b13.disk.sample", sample);
            Bench.result(results, m);
        } finally {
            try (Stream<Path> s = Files.walk(state)) {
                s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /**
     * @return {@code n} event lines over the last day, oldest first: per container a run of its life's actions (a
     *         die with exit code 0 or 137), ids of 64 hex digits, times to the nanosecond as Docker's {@code timeNano}
     */
    static List<LedgerEntry> events(int n, Random rnd) {
        List<LedgerEntry> out = new ArrayList<>(n);
        Instant t = Instant.now().minus(Duration.ofDays(1));
        long step = Duration.ofDays(1).toNanos() / n;
        HexFormat hex = HexFormat.of();
        byte[] id = new byte[32];
        for (int i = 0; i < n; i++) {
            if (i % ACTIONS.length == 0) rnd.nextBytes(id); // a new container now and then, as recreates make
            String module = MODULES[(i / ACTIONS.length) % MODULES.length];
            String container = module + "-" + NAMES[(i / (ACTIONS.length * MODULES.length)) % NAMES.length];
            String action = ACTIONS[i % ACTIONS.length];
            t = t.plusNanos(step / 2 + (long) (rnd.nextDouble() * step));
            out.add(LedgerEntry.event(t, module, container, hex.formatHex(id), action, null,
                    action.equals("die") ? (rnd.nextBoolean() ? "0" : "137") : null));
        }
        return out;
    }

    /** The floor: the same facts, tab-separated, no names, no chain. */
    static String floorLine(LedgerEntry e) {
        return e.at() + "\t" + e.module() + "\t" + e.container() + "\t" + e.containerId() + "\t" + e.action()
                + (e.exitCode() == null ? "" : "\t" + e.exitCode()) + "\n";
    }
}
