package io.mesh.apply;

import io.mesh.ledger.DurableFile;
import io.mesh.wire.ApplyReport.ContainerResult;
import io.mesh.wire.ContainerAction;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.Json;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * What the tries of one push's containers that did not become ready left, per module, on local disk: the module's
 * back-off (the next try waits {@link #FIRST}, doubling per failed try of the push, at most {@link #MAX}) and, by
 * container, the last failure, among them the containers a recreate {@code reverted} (docs/design.md, "Apply";
 * decision 10, amended). An apply reads it before it plans and writes it after; nothing else changes it but a thaw or
 * an operator's release ({@link #tryAgainNow}). It is kept for one push and revision: another's apply starts afresh.
 *
 * <p>One file per module, {@code <state-dir>/tries/<module>.json}, written as the window journal is (temp file, fsync,
 * atomic rename), so that an agent restart, a window, a freeze or a ZooKeeper outage in between forgets nothing: a push
 * whose container was reverted is not tried again while the previous container runs (failure model row 82), and a
 * container that keeps failing is not created again at every reconcile (row 81). A file that cannot be read is
 * logged and counts as none: the apply tries, as it did before the file existed. {@link #record} and {@link #tryAgainNow}
 * (an apply's thread, the daemon's timer) each read and write the file under this instance's lock, so a thaw is not
 * lost to an apply that ends meanwhile.
 */
public final class FailedTries {
    private static final Logger log = LoggerFactory.getLogger(ReportWriter.APPLY_LOGGER);
    /** The wait after a push's first failed try. */
    public static final Duration FIRST = Duration.ofSeconds(2);
    /** The longest wait between two tries of a push. */
    public static final Duration MAX = Duration.ofMinutes(5);

    private final Path dir;

    /** @param stateDir the agent's {@code --state-dir}; the files live in its {@code tries/} folder */
    public FailedTries(Path stateDir) {
        this.dir = stateDir.resolve("tries");
    }

    /**
     * One container's last failed try.
     *
     * @param action  {@code failed} (a create, or a recreate whose new one did not start) or {@code reverted}
     * @param reasons the reasons the apply reported then (secret values taken out): exit code or health, log lines,
     *                where the failed container was kept
     * @param id      the container the report named then (the kept one, or the previous one a revert put back)
     * @param at      when
     */
    public record Entry(ContainerAction action, List<String> reasons, String id, Instant at) {
        public Entry {
            reasons = reasons == null ? List.of() : List.copyOf(reasons);
        }
    }

    /**
     * A module's failed tries of one push and revision.
     *
     * @param module     module name
     * @param push       the push whose tries failed
     * @param revision   its revision
     * @param failures   failed tries of it in a row (applies in which some container was not ready)
     * @param nextTry    when its failed containers may be tried again; {@code null}: at once
     * @param containers by container name, its last failed try; a try that succeeds removes it
     */
    public record Memory(String module, String push, String revision, int failures, Instant nextTry, Map<String, Entry> containers) {
        public Memory {
            containers = containers == null ? Map.of() : Map.copyOf(new TreeMap<>(containers));
        }

        /** @return true when it is of that desired state's push and revision */
        public boolean of(DesiredRecord d) {
            return d != null && Objects.equals(push, d.push()) && Objects.equals(revision, d.revision());
        }

        /** @return true when {@code now} is before {@link #nextTry} */
        public boolean backingOff(Instant now) {
            return nextTry != null && now.isBefore(nextTry);
        }
    }

    /**
     * @param failures failed tries in a row, at least 1
     * @return the wait before the next try: {@link #FIRST}, doubled per failure, at most {@link #MAX}
     */
    public static Duration backoff(int failures) {
        int doublings = Math.min(Math.max(0, failures - 1), 20);
        Duration d = FIRST.multipliedBy(1L << doublings);
        return d.compareTo(MAX) > 0 ? MAX : d;
    }

    /**
     * @param module module name
     * @return its memory; empty when there is none, or it cannot be read (logged: the apply then tries)
     */
    public Optional<Memory> read(String module) {
        byte[] data;
        try {
            data = Files.readAllBytes(file(module));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            log.warn("module {}: {} cannot be read ({}); its failed tries are forgotten", module, file(module), e.getMessage());
            return Optional.empty();
        }
        Memory m = Json.readOrNull(data, Memory.class);
        if (m == null || !module.equals(m.module())) {
            log.warn("module {}: {} does not hold its failed tries; they are forgotten", module, file(module));
            return Optional.empty();
        }
        return Optional.of(m);
    }

    /**
     * @param module module name
     * @param d      the desired state an apply is about to run
     * @return the memory of that push and revision, if any
     */
    public Optional<Memory> of(String module, DesiredRecord d) {
        return read(module).filter(m -> m.of(d));
    }

    /**
     * After an apply of {@code d} ran its plan: the containers it tried and that succeeded (or failed otherwise) are
     * forgotten, the ones that were not ready remembered; when any was not ready, the push has failed once more and
     * its next try waits {@link #backoff}. Another push's memory is replaced.
     *
     * @param module   module name
     * @param d        the desired state the apply ran
     * @param tried    names of the containers it created or recreated (or tried to), ready or not
     * @param notReady by name, the results of those that did not start or become ready
     * @param now      the time
     * @return the memory now, or {@code null} when nothing is remembered (the file is gone)
     */
    public synchronized Memory record(String module, DesiredRecord d, java.util.Collection<String> tried, Map<String, ContainerResult> notReady,
                         Instant now) {
        Memory before = of(module, d).orElse(null);
        if (before == null && notReady.isEmpty()) {
            if (read(module).isPresent()) delete(module); // another push's: over
            return null;
        }
        Map<String, Entry> entries = new TreeMap<>(before == null ? Map.of() : before.containers());
        tried.forEach(entries::remove);
        notReady.forEach((name, r) -> entries.put(name, new Entry(r.action(), r.reasons(), r.id(), now)));
        if (entries.isEmpty()) {
            delete(module);
            return null;
        }
        int failures = before == null ? 0 : before.failures();
        Instant next = before == null ? null : before.nextTry();
        if (!notReady.isEmpty()) {
            failures++;
            next = now.plus(backoff(failures));
        }
        Memory m = new Memory(module, d.push(), d.revision(), failures, next, entries);
        if (!m.equals(before)) write(m);
        return m;
    }

    /**
     * A thaw or an operator's release: the module's next try is now, and its back-off starts again from
     * {@link #FIRST}. What it remembers of its containers stays: a reverted one is still not tried again while the
     * previous one runs.
     *
     * @param module module name
     */
    public synchronized void tryAgainNow(String module) {
        read(module).filter(m -> m.nextTry() != null || m.failures() > 0)
                .ifPresent(m -> write(new Memory(m.module(), m.push(), m.revision(), 0, null, m.containers())));
    }

    /** Writes (replaces) a module's memory, durably: temp file, fsync, atomic rename. */
    void write(Memory m) {
        try {
            DurableFile.replace(file(m.module()), Json.bytes(m));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file(m.module()) + ": " + e.getMessage() + " (check --state-dir)", e);
        }
    }

    /** Forgets a module's failed tries; a missing file is fine. */
    void delete(String module) {
        try {
            Files.deleteIfExists(file(module));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + file(module) + ": " + e.getMessage() + " (check --state-dir)", e);
        }
    }

    private Path file(String module) {
        return dir.resolve(module + ".json");
    }
}
