package io.mesh.ledger;

import io.mesh.wire.AuditChecker;
import io.mesh.wire.Json;
import io.mesh.wire.LedgerEntry;
import io.mesh.wire.LedgerKind;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;

/**
 * The host's ledger as written, every process's files in {@code <state-dir>/ledger/} (decision 28): read, each file's
 * chain verified, and pruned. A line that does not parse or verify (a crash mid-write, an edit by hand) is read as a
 * {@code gap} from the last good line's time to the next good one's, naming its file and line: never an exception,
 * never silently good. A file that did not change since it was last read is not read again.
 */
public final class LedgerFiles implements LedgerSource {
    private static final Logger log = LoggerFactory.getLogger(LedgerFiles.class);
    /** The default of {@code --ledger-max-age} (decision 28). */
    public static final Duration MAX_AGE = Duration.ofDays(30);
    /** The default of {@code --ledger-max-size} (decision 28). */
    public static final long MAX_BYTES = 256L * 1024 * 1024;
    /** A file written to this recently is never pruned: a live writer may still append to it. */
    static final Duration IN_USE = Duration.ofMinutes(1);

    private final Path dir;
    private final Map<Path, Parsed> cache = new ConcurrentHashMap<>();

    /**
     * A file as last read: all its lines while it was written to within {@link #KEEP_WHOLE}, else (an old file, which
     * a recent span needs only for its openings) only its interval and gap lines, so that a ledger of hundreds of MiB
     * is not kept in the heap.
     */
    private record Parsed(long size, FileTime modified, List<LedgerEntry> lines, List<LedgerEntry> intervals, Instant first,
                          Parse state, boolean writing) {

        /**
         * @return whether this read is stale though the file did not change since: read while it was being written (a
         *         last line without its newline was taken as a batch under way, which a quiet file never finishes: a
         *         gap now), or a file kept whole whose last read from its start is older than {@link #REREAD} (an edit
         *         by hand in place, same size, is met then)
         */
        boolean stale(Instant now) {
            return (writing && modified.toInstant().isBefore(now.minus(WRITING)))
                    || (state != null && state.begun.isBefore(now.minus(REREAD)));
        }
    }

    /** A file written to within this long is kept whole in memory once read. */
    static final Duration KEEP_WHOLE = Duration.ofHours(3);

    /** @param dir the ledger's directory ({@code <state-dir>/ledger}) */
    public LedgerFiles(Path dir) {
        this.dir = dir;
    }

    /** @return the reader of the ledger of a {@code --state-dir} */
    public static LedgerFiles of(Path stateDir) {
        return new LedgerFiles(stateDir.resolve(Ledger.DIR));
    }

    /** By the time a file's name begins with, then its pid, then its number within that second. */
    private static final Comparator<Path> ORDER = Comparator.comparing((Path p) -> nameParts(p)[0])
            .thenComparing(p -> nameParts(p)[1]).thenComparingLong(p -> {
                String[] parts = nameParts(p);
                try {
                    return parts.length > 2 ? Long.parseLong(parts[2]) : 0;
                } catch (NumberFormatException e) {
                    return Long.MAX_VALUE;
                }
            });

    private static String[] nameParts(Path f) {
        String n = f.getFileName().toString();
        n = n.endsWith(GZ) ? n.substring(0, n.length() - GZ.length()) : n.endsWith(PLAIN) ? n.substring(0, n.length() - PLAIN.length()) : n;
        String[] parts = n.split("-");
        return parts.length >= 2 ? parts : new String[] {parts[0], ""};
    }

    /** A file being written, and one compressed once closed (decision 29). */
    static final String PLAIN = ".jsonl", GZ = ".jsonl.gz";

    /** @return the ledger's directory */
    Path dir() { return dir; }

    /**
     * @return the ledger files, oldest first (by the time their name begins with): each file once, as {@code .jsonl}
     *         while it is there (a compression under way or cut short by a crash leaves both), else as {@code .jsonl.gz}
     */
    public List<Path> files() {
        if (!Files.isDirectory(dir)) return List.of();
        try (Stream<Path> s = Files.list(dir)) {
            List<Path> all = s.filter(p -> p.getFileName().toString().endsWith(PLAIN) || p.getFileName().toString().endsWith(GZ)).toList();
            Set<Path> plain = new HashSet<>();
            for (Path p : all) if (p.getFileName().toString().endsWith(PLAIN)) plain.add(p);
            return all.stream().filter(p -> !p.getFileName().toString().endsWith(GZ) || !plain.contains(plainOf(p))).sorted(ORDER).toList();
        } catch (IOException e) {
            log.warn("ledger: {} cannot be listed: {}", dir, e.toString());
            return List.of();
        }
    }

    /** @return every line of every file, verified, in time order; bad lines as gaps */
    public List<LedgerEntry> all() {
        List<LedgerEntry> out = new ArrayList<>();
        Set<Path> present = new HashSet<>();
        for (Path f : files()) {
            present.add(f);
            if (f.getFileName().toString().endsWith(PLAIN)) present.add(gzOf(f)); // read from it if compressed meanwhile
            out.addAll(read(f));
        }
        cache.keySet().retainAll(present);
        out = withoutEndedBeginnings(out);
        out.sort(Comparator.comparing(LedgerEntry::at, Comparator.nullsFirst(Comparator.naturalOrder())));
        return out;
    }

    /**
     * A call is written as it begins and again as it ends (decision 28); once its end is in the ledger, its beginning
     * says nothing more, and left in it would account for events of the same container up to
     * {@link AuditChecker#UNENDED_CALL} after it.
     *
     * @return the lines without the beginning of each call whose end is there (same process, start, operation, module)
     */
    static List<LedgerEntry> withoutEndedBeginnings(List<LedgerEntry> lines) {
        Set<String> ended = new HashSet<>();
        for (LedgerEntry e : lines) if (e.kind() == LedgerKind.CALL && e.end() != null) ended.add(callKey(e));
        if (ended.isEmpty()) return lines;
        List<LedgerEntry> out = new ArrayList<>(lines.size());
        for (LedgerEntry e : lines) {
            if (e.kind() == LedgerKind.CALL && e.end() == null && ended.contains(callKey(e))) continue;
            out.add(e);
        }
        return out;
    }

    private static String callKey(LedgerEntry e) {
        return e.pid() + "|" + e.at() + "|" + e.action() + "|" + e.module();
    }

    /** @return the time of the ledger's first line: before it the host kept no ledger; empty when there is none */
    public Optional<Instant> firstLineTime() {
        Instant first = null;
        for (Path f : files()) {
            Parsed p = parsed(f);
            if (p != null && p.first() != null && (first == null || p.first().isBefore(first))) first = p.first();
        }
        return Optional.ofNullable(first);
    }

    @Override
    public List<LedgerEntry> slice(Instant from, Instant to, Set<String> modules) {
        Instant late = to.plus(AuditChecker.LEFT_STOPPED_AFTER);
        // a call that began a little before the span accounts for events in it
        Instant early = from.minus(AuditChecker.UNENDED_CALL);
        List<LedgerEntry> out = new ArrayList<>();
        Map<String, LedgerEntry> openBefore = new LinkedHashMap<>();
        // each apply's line before the span: an apply under way at its start (a readiness wait) is judged by it
        Map<String, LedgerEntry> appliesBefore = new LinkedHashMap<>();
        List<LedgerEntry> lines = new ArrayList<>();
        for (Path f : files()) {
            Parsed p = parsed(f);
            if (p == null) continue;
            // a file last written before the span (and its calls' reach) gives only its openings and gaps
            lines.addAll(p.modified().toInstant().isBefore(early) ? p.intervals() : p.lines() != null ? p.lines() : read(f));
        }
        lines = withoutEndedBeginnings(lines);
        lines.sort(Comparator.comparing(LedgerEntry::at, Comparator.nullsFirst(Comparator.naturalOrder())));
        for (LedgerEntry e : lines) {
            if (e.at() == null) continue;
            if (e.kind() == LedgerKind.GAP) {
                Instant end = e.end() == null ? e.at() : e.end();
                if (!end.isBefore(from) && !e.at().isAfter(late)) out.add(e);
                continue;
            }
            if (!wanted(e, modules)) continue;
            if (e.at().isBefore(from)) {
                switch (e.kind()) {
                    case HELD_OPEN, FREEZE_OPEN -> openBefore.putIfAbsent(slot(e), e);
                    case HELD_CLOSE, FREEZE_CLOSE -> openBefore.remove(slot(e));
                    case CALL -> { if (!e.at().isBefore(early)) out.add(e); }
                    case APPLY -> appliesBefore.put(e.applyKey(), e);
                    default -> { }
                }
                continue;
            }
            if (!e.at().isAfter(late)) out.add(e);
        }
        out.addAll(openBefore.values());
        out.addAll(appliesBefore.values());
        out.sort(Comparator.comparing(LedgerEntry::at));
        return out;
    }

    private static boolean wanted(LedgerEntry e, Set<String> modules) {
        return modules == null || e.module() == null || modules.contains(e.module()) || LedgerEntry.ALL_MODULES.equals(e.module());
    }

    /** An opening's slot, as {@link AuditChecker} pairs it with its closing. */
    private static String slot(LedgerEntry e) {
        if (e.kind() == LedgerKind.FREEZE_OPEN || e.kind() == LedgerKind.FREEZE_CLOSE) return "freeze|" + e.module();
        String key = LedgerEntry.WINDOW.equals(e.holder()) ? e.window() : "hold:" + e.container() + ":" + e.by();
        return "held|" + e.container() + "|" + key;
    }

    /**
     * Reads one file, verifying its chain (from {@code ""} at its first line). A file that only grew since it was last
     * read is read on from where that read ended, with the chain as it was there.
     *
     * @param f a ledger file
     * @return its lines; each run of lines that does not parse or verify as one gap
     */
    public List<LedgerEntry> read(Path f) {
        Parsed p = parsed(f);
        if (p == null) return List.of();
        if (p.lines() != null) return p.lines();
        Parsed whole = parse(existing(f), true); // an old file, read whole once more, kept as its intervals
        return whole == null ? List.of() : whole.lines();
    }

    /**
     * @return the file as last read, read again if it changed (a {@code .jsonl} compressed since it was listed, from its
     *         {@code .gz}: the same lines); {@code null} when it is gone
     */
    private Parsed parsed(Path f) {
        Parsed p = parsedAt(f);
        return p == null && f.getFileName().toString().endsWith(PLAIN) ? parsedAt(gzOf(f)) : p;
    }

    /** @return the file, or its {@code .gz} when a {@code .jsonl} was compressed since it was listed */
    private static Path existing(Path f) {
        return f.getFileName().toString().endsWith(PLAIN) && !Files.exists(f) ? gzOf(f) : f;
    }

    private Parsed parsedAt(Path f) {
        try {
            Parsed p = cache.get(f);
            if (p != null && p.size() == Files.size(f) && p.modified().equals(Files.getLastModifiedTime(f)) && !p.stale(Instant.now())) return p;
            return parse(f, false);
        } catch (NoSuchFileException e) {
            cache.remove(f);
            return null;
        } catch (IOException e) {
            Instant now = Instant.now();
            List<LedgerEntry> gap = List.of(LedgerEntry.gap(now, now, "unreadable: " + f.getFileName() + ": " + e));
            return new Parsed(-1, FileTime.from(now), gap, gap, null, null, false);
        }
    }

    /** Reads a file (on from the last read when it only grew) and caches it; {@code whole} returns all its lines even when old. */
    private Parsed parse(Path f, boolean whole) {
        try {
            long size = Files.size(f);
            FileTime modified = Files.getLastModifiedTime(f);
            Parsed p = cache.get(f);
            // Read on only from a read that began at the file's start recently: an edit by hand of what was read is
            // then met within REREAD, as a gap, by the next full read.
            Parse state = p != null && p.lines() != null && p.state() != null && p.state().bad.isEmpty() && size >= p.state().consumed
                    && p.state().begun.isAfter(Instant.now().minus(REREAD)) ? p.state().copy() : new Parse();
            byte[] more;
            String torn = null;
            if (f.getFileName().toString().endsWith(GZ)) {
                // closed for good: read whole (a .gz is never appended to); a torn one, up to its tear, then a gap
                state = new Parse();
                java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream();
                // the file's stream its own resource: a header GZIPInputStream refuses (a folder, garbage) must not leak it
                try (InputStream raw = Files.newInputStream(f); InputStream in = new GZIPInputStream(raw)) {
                    in.transferTo(b);
                } catch (java.io.EOFException | java.util.zip.ZipException e) {
                    torn = e.toString();
                }
                more = b.toByteArray();
                if (torn != null) { // only whole lines before the tear
                    int last = more.length - 1;
                    while (last >= 0 && more[last] != '\n') last--;
                    more = java.util.Arrays.copyOf(more, last + 1);
                }
            } else try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(f)) {
                long from = state.consumed;
                more = new byte[(int) Math.min(Integer.MAX_VALUE - 16, Math.max(0, ch.size() - from))];
                java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(more);
                while (b.hasRemaining() && ch.read(b, from + b.position()) > 0) {
                    // read to the end as it was
                }
                if (b.hasRemaining()) more = java.util.Arrays.copyOf(more, b.position());
            }
            Instant mod = modified.toInstant();
            boolean writing = f.getFileName().toString().endsWith(PLAIN) && mod.isAfter(Instant.now().minus(WRITING));
            state.parse(f.getFileName().toString(), more, writing);
            List<LedgerEntry> lines = state.lines(f.getFileName().toString(), mod);
            if (torn != null) {
                lines = new ArrayList<>(lines);
                // nothing read: the gap runs from the time the file's name says it began
                Instant from = state.lastGood != null ? state.lastGood : begun(f, mod);
                lines.add(LedgerEntry.gap(from, mod.isAfter(from) ? mod : from, "unreadable: " + f.getFileName() + " after line "
                        + state.n + ": " + torn));
            }
            List<LedgerEntry> intervals = lines.stream().filter(e -> switch (e.kind()) {
                case HELD_OPEN, HELD_CLOSE, FREEZE_OPEN, FREEZE_CLOSE, GAP, APPLY -> true;
                default -> false;
            }).toList();
            Instant first = lines.stream().map(LedgerEntry::at).filter(java.util.Objects::nonNull).min(Comparator.naturalOrder()).orElse(null);
            boolean keep = mod.isAfter(Instant.now().minus(KEEP_WHOLE));
            Parsed parsed = new Parsed(size, modified, keep ? lines : null, intervals, first, keep ? state : null, writing);
            cache.put(f, parsed);
            return whole && !keep ? new Parsed(size, modified, lines, intervals, first, null, writing) : parsed;
        } catch (NoSuchFileException e) {
            cache.remove(f);
            return null; // pruned meanwhile
        } catch (IOException | RuntimeException e) {
            Instant now = Instant.now();
            List<LedgerEntry> gap = List.of(LedgerEntry.gap(now, now, "unreadable: " + f.getFileName() + ": " + e));
            return new Parsed(-1, FileTime.from(now), gap, gap, null, null, false);
        }
    }

    /**
     * A last line without its newline in a file written this recently is a batch being written, not a crash's
     * truncation: it is read once it is whole (or once the file is this old, as a gap).
     */
    static final Duration WRITING = Duration.ofSeconds(10);
    /** A file that grows is read again from its start at least this often. */
    static final Duration REREAD = Duration.ofMinutes(10);

    /** Where the reading of one file is: the chain, the lines so far, the bad lines not yet followed by a good one. */
    private static final class Parse {
        final Instant begun;
        String prev = "";
        Instant lastGood;

        Parse() { this(Instant.now()); }

        Parse(Instant begun) { this.begun = begun; }
        List<Integer> bad = new ArrayList<>();
        int n;
        long consumed;
        List<LedgerEntry> out = new ArrayList<>();

        Parse copy() {
            Parse c = new Parse(begun);
            c.prev = prev;
            c.lastGood = lastGood;
            c.bad = new ArrayList<>(bad);
            c.n = n;
            c.consumed = consumed;
            c.out = new ArrayList<>(out);
            return c;
        }

        /** Reads the bytes that follow what was consumed; a last line without its newline waits while {@code writing}. */
        void parse(String name, byte[] all, boolean writing) {
            for (int start = 0; start < all.length; ) {
                int nl = start;
                while (nl < all.length && all[nl] != '\n') nl++;
                if (nl == all.length && writing) return; // not whole yet
                n++;
                String line = decode(all, start, nl - start);
                consumed += Math.min(all.length, nl + 1) - start;
                start = nl + 1;
                String chain = line == null ? null : Ledger.chainOf(line);
                LedgerEntry e = null;
                if (chain != null && Ledger.chain(prev, Ledger.jsonOf(line)).equals(chain)) {
                    e = Json.readOrNull(Ledger.jsonOf(line).getBytes(StandardCharsets.UTF_8), LedgerEntry.class);
                    if (e != null && (e.kind() == null || e.at() == null)) e = null;
                }
                // A bad line whose chain is well formed resyncs the chain, so that one edited line is one gap, not the
                // rest of the file; a line missing (deleted) breaks the next one's chain, read as a gap the same way.
                if (chain != null) prev = chain;
                if (e == null) {
                    bad.add(n);
                    continue;
                }
                if (!bad.isEmpty()) {
                    out.add(corrupt(name, bad, lastGood != null ? lastGood : e.at(), e.at()));
                    bad.clear();
                }
                out.add(e);
                lastGood = e.at();
            }
        }

        /** @return the lines so far, and the bad lines at the end as a gap to the file's last write */
        List<LedgerEntry> lines(String name, Instant modified) {
            if (bad.isEmpty()) return List.copyOf(out);
            List<LedgerEntry> l = new ArrayList<>(out);
            Instant end = lastGood != null && lastGood.isAfter(modified) ? lastGood : modified;
            l.add(corrupt(name, bad, lastGood != null ? lastGood : end, end));
            return l;
        }
    }

    /** @return the line as UTF-8, or {@code null} when it is not */
    private static String decode(byte[] b, int off, int len) {
        try {
            return StandardCharsets.UTF_8.newDecoder().decode(java.nio.ByteBuffer.wrap(b, off, len)).toString();
        } catch (java.nio.charset.CharacterCodingException e) {
            return null;
        }
    }

    private static LedgerEntry corrupt(String file, List<Integer> lines, Instant from, Instant to) {
        String which = lines.size() == 1 ? "line " + lines.get(0)
                : "lines " + lines.get(0) + ".." + lines.get(lines.size() - 1) + " (" + lines.size() + ")";
        return LedgerEntry.gap(from, to, "corrupt: " + file + " " + which
                + " does not read or verify (truncated by a crash mid-write, or edited)");
    }

    /**
     * Deletes files older than {@code maxAge}, then the oldest while the ledger is larger than {@code maxBytes}; never
     * a file a live writer may still append to: written within {@link #IN_USE}, or the newest file of a process that
     * lives.
     *
     * @param maxAge   {@code --ledger-max-age}
     * @param maxBytes {@code --ledger-max-size}
     * @param now      this host's clock
     * @return the files deleted
     */
    public List<Path> prune(Duration maxAge, long maxBytes, Instant now) {
        List<Path> files = files();
        Set<Path> keep = newestOfLiveWriters(files);
        List<Path> deleted = new ArrayList<>();
        long total = 0;
        Map<Path, Long> sizes = new LinkedHashMap<>();
        Map<Path, Instant> modified = new HashMap<>();
        for (Path f : files) {
            try {
                sizes.put(f, Files.size(f));
                modified.put(f, Files.getLastModifiedTime(f).toInstant());
                total += sizes.get(f);
            } catch (IOException e) {
                // gone meanwhile
            }
        }
        for (Path f : sizes.keySet()) {
            Instant m = modified.get(f);
            boolean inUse = keep.contains(f) || m.isAfter(now.minus(IN_USE));
            boolean old = m.isBefore(now.minus(maxAge));
            if (inUse || !(old || total > maxBytes)) continue;
            try {
                Files.deleteIfExists(f);
                cache.remove(f);
                deleted.add(f);
                total -= sizes.get(f);
            } catch (IOException e) {
                log.warn("ledger: {} not pruned: {}", f, e.toString());
            }
        }
        if (!deleted.isEmpty()) log.info("ledger: pruned {} file(s) (max age {}, max size {} bytes): {}", deleted.size(), maxAge, maxBytes,
                deleted.stream().map(p -> p.getFileName().toString()).toList());
        return deleted;
    }

    /** @return of the files, the newest of each process that lives: its writer may still append to it */
    static Set<Path> newestOfLiveWriters(List<Path> files) {
        Map<Long, Path> newestOfPid = new HashMap<>();
        for (Path f : files) {
            Long pid = pidOf(f);
            if (pid != null) newestOfPid.put(pid, f); // files() is oldest first
        }
        Set<Path> keep = new HashSet<>();
        newestOfPid.forEach((pid, f) -> {
            if (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) keep.add(f);
        });
        return keep;
    }

    /** @return the name a {@code .jsonl} file has once compressed */
    static Path gzOf(Path plain) {
        String n = plain.getFileName().toString();
        return plain.resolveSibling(n.substring(0, n.length() - PLAIN.length()) + GZ);
    }

    private static Path plainOf(Path gz) {
        String n = gz.getFileName().toString();
        return gz.resolveSibling(n.substring(0, n.length() - GZ.length()) + PLAIN);
    }

    /** @return the time a file's name says it began ({@code <time>-<pid>...}), or {@code otherwise} */
    private static Instant begun(Path f, Instant otherwise) {
        try {
            Instant t = Ledger.FILE_TIME.parse(nameParts(f)[0], Instant::from);
            return t.isAfter(otherwise) ? otherwise : t;
        } catch (RuntimeException e) {
            return otherwise;
        }
    }

    /** @return the pid a file's name carries ({@code <time>-<pid>[-n].jsonl}), or {@code null} */
    static Long pidOf(Path f) {
        String[] parts = nameParts(f);
        try {
            return Long.parseLong(parts[1]);
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
