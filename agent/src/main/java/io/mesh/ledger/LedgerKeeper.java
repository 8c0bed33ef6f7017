package io.mesh.ledger;

import io.mesh.wire.AuditChecker;
import io.mesh.wire.AuditReport;
import io.mesh.wire.AuditViolationKind;
import io.mesh.wire.Json;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The daemon's side of the ledger (decision 28): its writer, the follower of its engine's events, the pruner (at start
 * and hourly; it first compresses closed files, decision 29) and the continuous audit (every {@link #AUDIT_EVERY}, over
 * the last {@link #AUDIT_SPAN}), whose new violations are logged once each and counted ({@code mesh_audit_violations_total}).
 */
public final class LedgerKeeper implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(LedgerKeeper.class);
    /** How often the daemon audits its own ledger. */
    public static final Duration AUDIT_EVERY = Duration.ofSeconds(30);
    /** The span each continuous audit reads. */
    public static final Duration AUDIT_SPAN = Duration.ofHours(2);
    /**
     * The continuous audit judges the ledger as it was this long ago: a call's end (a step's run, a slow stop) is
     * written just after Docker's last event of it, and a violation is counted once, never taken back.
     */
    public static final Duration AUDIT_LAG = Duration.ofSeconds(30);
    /** How often closed files are compressed and old ones pruned. */
    public static final Duration PRUNE_EVERY = Duration.ofHours(1);
    private static final int REMEMBERED = 10_000;

    /** Told each new violation of the continuous audit. */
    public interface ViolationSink {
        /**
         * @param module the violation's module ({@code null} for a gap)
         * @param kind   its kind
         */
        void violation(String module, AuditViolationKind kind);
    }

    private final String host;
    private final Ledger ledger;
    private final LedgerFiles files;
    private final EventFollower follower;
    private volatile Duration maxAge;
    private volatile long maxBytes;
    private final ScheduledExecutorService timer;
    private final Map<String, Boolean> reported = new LinkedHashMap<>(256, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) { return size() > REMEMBERED; }
    };
    private volatile ViolationSink sink = (m, k) -> { };

    /**
     * @param host     this host
     * @param stateDir {@code --state-dir}
     * @param docker   the engine's events and clock, or {@code null} (no engine to follow: a simulated runtime)
     * @param maxAge   {@code --ledger-max-age}
     * @param maxBytes {@code --ledger-max-size}
     */
    public LedgerKeeper(String host, Path stateDir, io.mesh.docker.EngineEvents docker, Duration maxAge, long maxBytes) {
        this.host = host;
        // One thread for the ledger's housekeeping: the audits, the prunes and the turns of the engine's event follower
        // (an agent at rest keeps few threads: decision 23). Each is bounded (a replay waits 30 s at most); an audit or a
        // prune delays the follower's turn, while docker-java's stream thread goes on writing the events. The engine
        // clock's readings keep a thread of their own: docker info has no bound on a unix socket, and a hung one must
        // not stop the rest.
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "mesh-ledger-keeper");
            t.setDaemon(true);
            return t;
        });
        this.ledger = Ledger.open(stateDir);
        if (docker != null) ledger.engineClock(docker::engineTime);
        this.files = LedgerFiles.of(stateDir);
        this.follower = docker == null ? null : new EventFollower(docker, ledger, timer);
        this.maxAge = maxAge;
        this.maxBytes = maxBytes;
    }

    /**
     * @param maxAge   {@code --ledger-max-age}
     * @param maxBytes {@code --ledger-max-size}
     */
    public void retention(Duration maxAge, long maxBytes) {
        this.maxAge = maxAge;
        this.maxBytes = maxBytes;
    }

    /** @return this process's writer */
    public Ledger ledger() { return ledger; }

    /** @return the host's ledger files */
    public LedgerFiles files() { return files; }

    /** @return the follower of the engine's events, or {@code null} */
    public EventFollower follower() { return follower; }

    /** @param s told each new violation */
    public void onViolation(ViolationSink s) { this.sink = s == null ? (m, k) -> { } : s; }

    private volatile java.util.function.Consumer<AuditReport.Violation> whole = v -> { };

    /** @param c told each new violation whole, beside the {@link ViolationSink} (the agent's {@code audit.violation} event) */
    public void onEachViolation(java.util.function.Consumer<AuditReport.Violation> c) { this.whole = c == null ? v -> { } : c; }

    /** Starts following, pruning and auditing. */
    public void start() {
        if (follower != null) follower.start();
        timer.scheduleWithFixedDelay(this::prune, 0, PRUNE_EVERY.toMillis(), TimeUnit.MILLISECONDS);
        timer.scheduleWithFixedDelay(this::audit, AUDIT_EVERY.toMillis(), AUDIT_EVERY.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * Closes, in the ledger, the operator holds, windows and freezes it shows open that ended while no agent of this
     * host ran (released, thawed; a window's process killed after its opening line and before its journal, which no
     * recovery closes): left open, every later touch or apply would read as breaking them. Runs once, on the ledger's
     * thread.
     *
     * @param stillOpen whether an opening ({@code held-open}, {@code freeze-open}) is still in force now; throws when
     *                  that cannot be told (then nothing is closed)
     */
    public void closeWhatEndedWhileDown(java.util.function.Predicate<io.mesh.wire.LedgerEntry> stillOpen) {
        timer.execute(() -> {
            try {
                ledger.flush(Duration.ofSeconds(2));
                Instant now = ledger.now();
                for (io.mesh.wire.LedgerEntry e : files.slice(now, now, null)) {
                    boolean held = e.kind() == io.mesh.wire.LedgerKind.HELD_OPEN;
                    if (!held && e.kind() != io.mesh.wire.LedgerKind.FREEZE_OPEN || !e.at().isBefore(now) || stillOpen.test(e)) continue;
                    String why = "ended while no agent of this host ran";
                    ledger.write(held
                            ? io.mesh.wire.LedgerEntry.held(io.mesh.wire.LedgerKind.HELD_CLOSE, now, e.module(), e.container(), e.containerId(),
                                    e.holder(), e.window(), e.schedule(), e.by(), why, e.until())
                            : io.mesh.wire.LedgerEntry.freeze(io.mesh.wire.LedgerKind.FREEZE_CLOSE, now, e.module(), e.by(), why, e.until()));
                    log.info("ledger: {} of {} {}: closed", e.kind(), held ? e.container() : e.module(), why);
                }
            } catch (RuntimeException e) {
                log.warn("ledger: the holds and freezes it shows open were not checked: {}", e.toString());
            }
        });
    }

    private void prune() {
        try {
            new LedgerCompression(files).compressClosed(Instant.now());
            files.prune(maxAge, maxBytes, Instant.now());
        } catch (RuntimeException e) {
            log.warn("ledger: not pruned: {}", e.toString());
        }
    }

    /**
     * Audits the {@link #AUDIT_SPAN} of the ledger that ends {@link #AUDIT_LAG} ago; logs and counts each violation
     * not seen before (by kind, container and time).
     *
     * @return the report
     */
    public AuditReport audit() {
        return audit(ledger.now().minus(AUDIT_LAG)); // the ledger's clock: the engine's
    }

    /**
     * As {@link #audit()}, as of a time.
     *
     * @param now the span's end, and the time the checker judges open intervals by
     * @return the report, or {@code null} when the audit failed (logged)
     */
    public AuditReport audit(Instant now) {
        try {
            ledger.flush(Duration.ofSeconds(2));
            Instant from = now.minus(AUDIT_SPAN);
            AuditReport r = AuditChecker.check(host, files.slice(from, now, null), from, now, null, now);
            for (AuditReport.Violation v : r.violations()) {
                String key = v.kind() + "|" + v.container() + "|" + v.at();
                boolean fresh;
                synchronized (reported) {
                    fresh = reported.put(key, Boolean.TRUE) == null;
                }
                if (!fresh) continue;
                log.warn("audit host={} module={} kind={} container={} at={}: {} evidence={}", host, v.module(), v.kind(), v.container(),
                        v.at(), v.message(), v.evidence() == null ? "-" : Json.text(v.evidence()));
                sink.violation(v.module(), v.kind());
                whole.accept(v);
            }
            return r;
        } catch (RuntimeException e) {
            log.warn("ledger: the continuous audit failed: {}", e.toString());
            return null;
        }
    }

    /** Stops auditing and following; the writer last, flushed. */
    @Override
    public void close() {
        timer.shutdownNow();
        try {
            // a turn under way ends before the follower writes its last anchor, and before the ledger closes
            if (!timer.awaitTermination(5, TimeUnit.SECONDS)) log.warn("ledger: its keeper thread did not end within 5 s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (follower != null) follower.close();
        ledger.close();
    }
}
