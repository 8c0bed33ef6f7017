package io.mesh.ledger;

import io.mesh.wire.AuditChecker;
import io.mesh.wire.AuditReport;
import io.mesh.wire.AuditViolationKind;
import io.mesh.wire.LedgerEntry;
import io.mesh.wire.LedgerKind;
import io.mesh.wire.ProcessRef;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** The ledger's writer and reader on a real file system (decision 28): chains, bad lines as gaps, rotation, pruning, a full queue. */
@Tag("slow") // over 20 s of file or ZooKeeper waits: the full run, not --fast (which must stay under 2 min)
class LedgerFilesTest {
    private static final ProcessRef ME = ProcessRef.current("test");
    private static final Instant T0 = Instant.parse("2026-12-01T10:00:00Z");

    @TempDir
    Path state;

    private static LedgerEntry event(int i) {
        return LedgerEntry.event(T0.plusSeconds(i), "m", "m-app", "id" + i, "start", null, null);
    }

    private List<LedgerEntry> writeAndRead(int n) {
        try (Ledger l = Ledger.open(state)) {
            for (int i = 0; i < n; i++) l.write(event(i));
            assertThat(l.flush(Duration.ofSeconds(10))).isTrue();
        }
        return LedgerFiles.of(state).all();
    }

    private Path onlyFile() {
        List<Path> files = LedgerFiles.of(state).files();
        assertThat(files).hasSize(1);
        return files.get(0);
    }

    @Test
    void linesAreChainedAndReadBackAsWritten() throws IOException {
        List<LedgerEntry> read = writeAndRead(5);
        assertThat(read).hasSize(5).allMatch(e -> e.kind() == LedgerKind.EVENT);
        assertThat(read).extracting(LedgerEntry::containerId).containsExactly("id0", "id1", "id2", "id3", "id4");
        Path f = onlyFile();
        assertThat(f.getFileName().toString()).matches("\\d{8}T\\d{6}Z-" + ProcessHandle.current().pid() + "\\.jsonl");
        List<String> lines = Files.readAllLines(f);
        assertThat(lines.get(0)).endsWith("\"chain\":\"" + Ledger.chain("", Ledger.jsonOf(lines.get(0))) + "\"}");
        assertThat(Ledger.chainOf(lines.get(1))).isEqualTo(Ledger.chain(Ledger.chainOf(lines.get(0)), Ledger.jsonOf(lines.get(1))));
    }

    @Test
    void aTruncatedLastLineReadsAsAGapNamingFileAndLine() throws IOException {
        writeAndRead(3);
        Path f = onlyFile();
        byte[] all = Files.readAllBytes(f);
        Files.write(f, java.util.Arrays.copyOf(all, all.length - 20)); // a crash mid-write of the last line
        LedgerFiles files = LedgerFiles.of(state);
        // written just now: a batch being written, not yet a gap
        assertThat(files.all()).hasSize(2).noneMatch(e -> e.kind() == LedgerKind.GAP);
        Files.setLastModifiedTime(f, FileTime.from(Instant.now().minus(Duration.ofMinutes(1))));
        List<LedgerEntry> read = files.all();
        assertThat(read.stream().filter(e -> e.kind() == LedgerKind.EVENT)).hasSize(2);
        List<LedgerEntry> gaps = read.stream().filter(e -> e.kind() == LedgerKind.GAP).toList();
        assertThat(gaps).hasSize(1);
        assertThat(gaps.get(0).reason()).startsWith("corrupt: " + f.getFileName() + " line 3");
        assertThat(gaps.get(0).at()).isEqualTo(T0.plusSeconds(1)); // from the last good line
    }

    @Test
    void anEditedMiddleLineReadsAsAGapAndTheRestStillVerifies() throws IOException {
        writeAndRead(5);
        Path f = onlyFile();
        List<String> lines = new ArrayList<>(Files.readAllLines(f));
        lines.set(2, lines.get(2).replace("\"start\"", "\"stop\"")); // its chain left as it was
        Files.write(f, lines);
        List<LedgerEntry> read = LedgerFiles.of(state).all();
        assertThat(read.stream().filter(e -> e.kind() == LedgerKind.EVENT).map(LedgerEntry::containerId))
                .containsExactly("id0", "id1", "id3", "id4");
        assertThat(read.stream().filter(e -> e.kind() == LedgerKind.EVENT)).noneMatch(e -> "stop".equals(e.action()));
        List<LedgerEntry> gaps = read.stream().filter(e -> e.kind() == LedgerKind.GAP).toList();
        assertThat(gaps).hasSize(1);
        assertThat(gaps.get(0).reason()).contains("line 3");
        assertThat(gaps.get(0).at()).isEqualTo(T0.plusSeconds(1));
        assertThat(gaps.get(0).end()).isEqualTo(T0.plusSeconds(3));
        // and the checker calls it a gap: never silently ok
        AuditReport r = AuditChecker.check("h", read, T0, T0.plusSeconds(10), null, T0.plusSeconds(100));
        assertThat(r.violations()).anyMatch(v -> v.kind() == AuditViolationKind.GAP);
    }

    @Test
    void garbageAndADeletedLineAreGapsNotExceptions() throws IOException {
        writeAndRead(4);
        Path f = onlyFile();
        List<String> lines = new ArrayList<>(Files.readAllLines(f));
        lines.remove(1); // line 2 now has the chain of a line that is gone
        lines.add("{not json");
        Files.write(f, lines);
        Files.write(f, new byte[] {(byte) 0xff, (byte) 0xfe, '\n'}, StandardOpenOption.APPEND);
        List<LedgerEntry> read = LedgerFiles.of(state).all();
        assertThat(read.stream().filter(e -> e.kind() == LedgerKind.EVENT).map(LedgerEntry::containerId)).containsExactly("id0", "id3");
        assertThat(read.stream().filter(e -> e.kind() == LedgerKind.GAP)).hasSize(2);
    }

    @Test
    void aNewFileBeginsAtTheSizeLimitEachWithItsOwnChain() {
        try (Ledger l = Ledger.open(state, 600, Duration.ofDays(1), 100)) {
            for (int i = 0; i < 20; i++) l.write(event(i));
            assertThat(l.flush(Duration.ofSeconds(10))).isTrue();
        }
        LedgerFiles files = LedgerFiles.of(state);
        assertThat(files.files().size()).isGreaterThan(2);
        List<LedgerEntry> read = files.all();
        assertThat(read).hasSize(20).allMatch(e -> e.kind() == LedgerKind.EVENT);
        assertThat(files.firstLineTime()).contains(T0);
    }

    @Test
    void aFullQueueDropsLinesAndSaysSoAsAGap() {
        List<LedgerEntry> read;
        try (Ledger l = Ledger.open(state, Ledger.ROTATE_BYTES, Duration.ofDays(1), 4)) {
            for (int i = 0; i < 5000; i++) l.write(event(i)); // far faster than one thread fsyncs
            l.flush(Duration.ofSeconds(10));
            l.write(event(5000)); // the next batch carries the gap
            l.flush(Duration.ofSeconds(10));
        }
        read = LedgerFiles.of(state).all();
        long events = read.stream().filter(e -> e.kind() == LedgerKind.EVENT).count();
        List<LedgerEntry> gaps = read.stream().filter(e -> e.kind() == LedgerKind.GAP).toList();
        assertThat(events).isLessThan(5001);
        assertThat(gaps).isNotEmpty();
        long said = gaps.stream().mapToLong(g -> Long.parseLong(g.reason().split(" ")[0])).sum();
        assertThat(events + said).isEqualTo(5001);
        assertThat(gaps.get(0).reason()).contains("dropped: the queue to the ledger's writer was full");
    }

    @Test
    void pruningDeletesOldAndOversizedFilesButNeverALiveWritersNewest() throws IOException {
        Path dir = state.resolve(Ledger.DIR);
        Files.createDirectories(dir);
        Instant now = Instant.now();
        long deadPid = 999_999_999L; // no such process
        Path old = file(dir, "20260101T000000Z-" + deadPid + ".jsonl", 100, now.minus(Duration.ofDays(40)));
        Path a = file(dir, "20261101T000000Z-" + deadPid + ".jsonl", 1000, now.minus(Duration.ofDays(3)));
        Path b = file(dir, "20261102T000000Z-" + deadPid + "-1.jsonl", 1000, now.minus(Duration.ofDays(2)));
        Path c = file(dir, "20261103T000000Z-" + deadPid + "-2.jsonl", 1000, now.minus(Duration.ofDays(1)));
        long me = ProcessHandle.current().pid();
        Path mineOld = file(dir, "20261001T000000Z-" + me + ".jsonl", 1000, now.minus(Duration.ofDays(35)));
        Path mine = file(dir, "20261104T000000Z-" + me + ".jsonl", 1000, now.minus(Duration.ofDays(35)));
        Path cursor = dir.resolve(EventFollower.CURSOR);
        Files.writeString(cursor, "{}");

        List<Path> deleted = LedgerFiles.of(state).prune(Duration.ofDays(30), 2500, now);

        // too old: the dead process's and this process's older file; then oldest first beyond 2500 bytes
        assertThat(deleted).contains(old, mineOld, a);
        assertThat(old).doesNotExist();
        assertThat(mineOld).doesNotExist();
        assertThat(a).doesNotExist();
        assertThat(mine).exists(); // this live process's newest file, however old
        assertThat(c).exists();
        assertThat(cursor).exists();
        assertThat(LedgerFiles.pidOf(b)).isEqualTo(deadPid);
    }

    @Test
    void aSliceCarriesOpeningsStillOpenAndWhatFollowsForTheLeftStoppedRule() {
        List<LedgerEntry> lines = List.of(
                LedgerEntry.held(LedgerKind.HELD_OPEN, T0, "m", "m-app", "id1", LedgerEntry.WINDOW, "w-1", "nightly", null, null, null),
                LedgerEntry.held(LedgerKind.HELD_OPEN, T0, "m", "m-db", "id2", LedgerEntry.WINDOW, "w-0", "nightly", null, null, null),
                LedgerEntry.held(LedgerKind.HELD_CLOSE, T0.plusSeconds(10), "m", "m-db", "id2", LedgerEntry.WINDOW, "w-0", "nightly", null, null, null),
                LedgerEntry.freeze(LedgerKind.FREEZE_OPEN, T0, "_all", "ops", "x", null),
                LedgerEntry.event(T0.plusSeconds(5), "other", "other-x", "id9", "start", null, null),
                event(100),
                event(130), // within LEFT_STOPPED_AFTER after the span
                event(300));
        try (Ledger l = Ledger.open(state)) {
            lines.forEach(l::write);
            l.flush(Duration.ofSeconds(10));
        }
        List<LedgerEntry> slice = LedgerFiles.of(state).slice(T0.plusSeconds(60), T0.plusSeconds(120), Set.of("m"));
        assertThat(slice).extracting(LedgerEntry::kind).containsExactly(LedgerKind.HELD_OPEN, LedgerKind.FREEZE_OPEN,
                LedgerKind.EVENT, LedgerKind.EVENT);
        assertThat(slice.get(0).window()).isEqualTo("w-1");
        assertThat(slice).noneMatch(e -> "other".equals(e.module()));
    }

    /**
     * The file being written removed, replaced by a folder, or cut by hand: what it held is lost, and what the writer
     * appended to an unlinked file would be lost unseen. The writer notices within {@link Ledger#LOOK}, with nothing to
     * write, begins a new file, and says the span as a gap (an attacker's try, as a new operator's would be).
     */
    @Test
    void theFileBeingWrittenRemovedReplacedOrCutIsAGapWithinSecondsEvenOnAQuietHost() throws Exception {
        for (String how : List.of("removed", "replaced", "cut")) {
            Path dir = state.resolve(how);
            try (Ledger l = Ledger.open(dir)) {
                l.write(event(1));
                assertThat(l.flush(Duration.ofSeconds(10))).isTrue();
                Path f = l.currentFile();
                switch (how) {
                    case "removed" -> Files.delete(f);
                    case "replaced" -> {
                        Files.delete(f);
                        Files.createDirectory(f);
                    }
                    default -> Files.write(f, new byte[0], StandardOpenOption.TRUNCATE_EXISTING);
                }
                org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> !f.equals(l.currentFile()));
                assertThat(l.flush(Duration.ofSeconds(10))).isTrue();
                l.write(event(2));
                assertThat(l.flush(Duration.ofSeconds(10))).isTrue();
            }
            List<LedgerEntry> all = LedgerFiles.of(dir).all();
            assertThat(all).as(how).anySatisfy(e -> {
                assertThat(e.kind()).isEqualTo(LedgerKind.GAP);
                assertThat(e.reason()).contains("was " + how);
            });
            assertThat(all).as(how).anyMatch(e -> e.kind() == LedgerKind.EVENT && "id2".equals(e.containerId()));
        }
    }

    /**
     * A last line without its newline in a file written a moment ago is a batch under way; once the file has been quiet
     * past {@link LedgerFiles#WRITING}, it is a torn line and a gap, though the file did not change since it was read.
     */
    @Test
    void aTornLastLineOfAQuietFileBecomesAGapThoughTheFileDidNotChangeSinceItWasRead() throws Exception {
        try (Ledger l = Ledger.open(state)) {
            l.write(event(1));
            l.write(event(2));
            assertThat(l.flush(Duration.ofSeconds(10))).isTrue();
        }
        Path f = onlyFile();
        byte[] bytes = Files.readAllBytes(f);
        Files.write(f, java.util.Arrays.copyOf(bytes, bytes.length - 20), StandardOpenOption.TRUNCATE_EXISTING);
        LedgerFiles files = LedgerFiles.of(state);
        assertThat(files.all()).noneMatch(e -> e.kind() == LedgerKind.GAP); // being written, as far as a reader can tell
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofSeconds(1))
                .until(() -> files.all().stream().anyMatch(e -> e.kind() == LedgerKind.GAP));
    }

    /** An apply under way at a span's start (a long readiness wait) is judged by its apply line, which the slice carries. */
    @Test
    void aSliceCarriesTheLastApplyLineBeforeItOfEachProcessPushAndModule() {
        ProcessRef daemon = new ProcessRef(40, "mesh-agent run");
        try (Ledger l = Ledger.open(state)) {
            l.write(LedgerEntry.apply(T0, "m", "push-0000000001", daemon));
            l.write(LedgerEntry.apply(T0.plusSeconds(10), "m", "push-0000000001", daemon));
            l.write(LedgerEntry.apply(T0.plusSeconds(20), "m", "push-0000000002", daemon));
            l.write(LedgerEntry.apply(T0.plusSeconds(30), "other", "push-0000000002", daemon));
            l.flush(Duration.ofSeconds(10));
        }
        List<LedgerEntry> slice = LedgerFiles.of(state).slice(T0.plus(Duration.ofHours(1)), T0.plus(Duration.ofHours(2)), Set.of("m"));
        assertThat(slice).extracting(LedgerEntry::kind).containsOnly(LedgerKind.APPLY);
        assertThat(slice).extracting(LedgerEntry::at).containsExactly(T0.plusSeconds(10), T0.plusSeconds(20));
    }

    @Test
    void anOldFileGivesARecentSliceOnlyItsOpeningsAndIsStillReadWhole() throws IOException {
        try (Ledger l = Ledger.open(state)) {
            l.write(LedgerEntry.held(LedgerKind.HELD_OPEN, T0, "m", "m-app", "id1", LedgerEntry.OPERATOR, null, null, "alice", "x", null));
            l.write(event(1));
            l.write(LedgerEntry.gap(T0.plusSeconds(2), T0.plusSeconds(3), "test"));
            l.flush(Duration.ofSeconds(10));
        }
        Path f = onlyFile();
        Files.setLastModifiedTime(f, FileTime.from(T0.plusSeconds(5)));
        LedgerFiles files = LedgerFiles.of(state);
        Instant later = T0.plus(Duration.ofDays(1));
        List<LedgerEntry> slice = files.slice(later, later.plusSeconds(60), null);
        assertThat(slice).extracting(LedgerEntry::kind).containsExactly(LedgerKind.HELD_OPEN); // still open; the gap is long past
        assertThat(files.slice(T0, T0.plusSeconds(60), null)).hasSize(3);
        assertThat(files.all()).hasSize(3);
        assertThat(files.firstLineTime()).contains(T0);
    }

    @Test
    void aDiskThatCannotBeWrittenNeverThrowsAndItsLossIsAGapOnceItCan() throws Exception {
        Path dir = state.resolve(Ledger.DIR);
        Files.writeString(dir, "not a directory"); // every write fails
        try (Ledger l = Ledger.open(state)) {
            l.write(event(0));
            l.write(event(1));
            l.flush(Duration.ofSeconds(5));
            Files.delete(dir); // the disk takes lines again
            l.write(event(2));
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> LedgerFiles.of(state).all().size() >= 2);
        }
        List<LedgerEntry> read = LedgerFiles.of(state).all();
        assertThat(read.stream().filter(e -> e.kind() == LedgerKind.EVENT).map(LedgerEntry::containerId)).containsExactly("id2");
        LedgerEntry gap = read.stream().filter(e -> e.kind() == LedgerKind.GAP).findFirst().orElseThrow();
        assertThat(gap.reason()).isEqualTo("2 ledger lines dropped: the disk did not take them");
        assertThat(gap.at()).isEqualTo(T0);
    }

    @Test
    void noneWritesNothingAndNeverThrows() {
        Ledger.NONE.write(event(1));
        assertThat(Ledger.NONE.flush(Duration.ZERO)).isTrue();
        Ledger.NONE.close();
        assertThat(LedgerFiles.of(state).all()).isEmpty();
        assertThat(LedgerFiles.of(state).firstLineTime()).isEmpty();
    }

    @Test
    void callLinesCarryTheirCause() {
        try (Ledger l = Ledger.open(state)) {
            CallCause c = CallCause.window("w-1", "nightly");
            l.write(LedgerEntry.call(T0, "m", "m-app", "id1", "stop", c.cause(), c.window(), c.schedule(), ME).ended(T0.plusSeconds(2), null, null));
            l.flush(Duration.ofSeconds(10));
        }
        LedgerEntry e = LedgerFiles.of(state).all().get(0);
        assertThat(e.cause()).isEqualTo("window:nightly");
        assertThat(e.window()).isEqualTo("w-1");
        assertThat(e.end()).isEqualTo(T0.plusSeconds(2));
        assertThat(e.pid()).isEqualTo(ME.pid());
        assertThat(CallCause.push("push-0000000002").cause()).isEqualTo("push-0000000002");
    }

    @Test
    void aFileThatGrewIsReadOnFromWhereTheLastReadEnded() throws IOException {
        LedgerFiles files = LedgerFiles.of(state);
        try (Ledger l = Ledger.open(state)) {
            for (int i = 0; i < 3; i++) l.write(event(i));
            l.flush(Duration.ofSeconds(10));
            assertThat(files.all()).hasSize(3);
            Path f = onlyFile();
            // half a line, as a reader may find a batch being written
            String next = Ledger.line(Ledger.chainOf(Files.readAllLines(f).get(2)), event(3));
            Files.writeString(f, next.substring(0, 30), StandardOpenOption.APPEND);
            assertThat(files.all()).hasSize(3).noneMatch(e -> e.kind() == LedgerKind.GAP);
            Files.writeString(f, next.substring(30) + "\n", StandardOpenOption.APPEND);
            assertThat(files.all()).hasSize(4).allMatch(e -> e.kind() == LedgerKind.EVENT);
        }
    }

    @Test
    void aCallsBeginningGoesOnceItsEndIsWrittenAndStaysWhenItsProcessDiedInIt() {
        LedgerEntry done = LedgerEntry.call(T0, "m", "m-app", "id1", "stop", "push-1", null, null, ME);
        LedgerEntry died = LedgerEntry.call(T0.plusSeconds(5), "m", "m-app", "id1", "start", "push-1", null, null, ME);
        try (Ledger l = Ledger.open(state)) {
            l.write(done);
            l.write(died);
            l.write(done.ended(T0.plusSeconds(2), null, null));
            l.flush(Duration.ofSeconds(10));
        }
        List<LedgerEntry> calls = LedgerFiles.of(state).all();
        assertThat(calls).hasSize(2);
        assertThat(calls.get(0).action()).isEqualTo("stop");
        assertThat(calls.get(0).end()).isEqualTo(T0.plusSeconds(2));
        assertThat(calls.get(1).action()).isEqualTo("start");
        assertThat(calls.get(1).end()).isNull();
    }

    @Test
    void aClosedFileIsCompressedKeepsItsTimeAndReadsBackTheSameVerifiedLines() throws IOException {
        List<LedgerEntry> before = writeAndRead(200);
        Path f = onlyFile();
        long plainBytes = Files.size(f);
        FileTime time = FileTime.from(Instant.now().minus(Duration.ofDays(2)));
        Path dead = f.resolveSibling("20261201T100000Z-999999999.jsonl"); // a writer that is gone
        Files.move(f, dead);
        Files.setLastModifiedTime(dead, time);

        LedgerFiles files = LedgerFiles.of(state);
        assertThat(new LedgerCompression(files).compressClosed(Instant.now())).containsExactly(dead.resolveSibling("20261201T100000Z-999999999.jsonl.gz"));

        Path gz = onlyFile();
        assertThat(dead).doesNotExist();
        assertThat(gz.getFileName().toString()).endsWith(".jsonl.gz");
        assertThat(Files.getLastModifiedTime(gz)).isEqualTo(time); // pruning reads its age
        assertThat(Files.size(gz)).isLessThan(plainBytes / 4);
        assertThat(LedgerFiles.pidOf(gz)).isEqualTo(999_999_999L);
        List<LedgerEntry> after = LedgerFiles.of(state).all();
        assertThat(after).isEqualTo(before).noneMatch(e -> e.kind() == LedgerKind.GAP);
        // and pruning takes it by its age as it took the .jsonl
        assertThat(files.prune(Duration.ofDays(1), Long.MAX_VALUE, Instant.now())).containsExactly(gz);
    }

    @Test
    void aLiveWritersNewestFileAndAFileWrittenAMinuteAgoAreNotCompressed() throws IOException {
        writeAndRead(3);
        Path mine = onlyFile(); // this process lives: its newest file stays as it is, however old
        Files.setLastModifiedTime(mine, FileTime.from(Instant.now().minus(Duration.ofDays(2))));
        Path recent = mine.resolveSibling("20261201T100000Z-999999999.jsonl");
        Files.copy(mine, recent);
        Files.setLastModifiedTime(recent, FileTime.from(Instant.now()));

        assertThat(LedgerCompression.of(state).compressClosed(Instant.now())).isEmpty();
        assertThat(mine).exists();
        assertThat(recent).exists();
    }

    @Test
    void aCompressionCutShortByACrashLeavesOneFileToRead() throws IOException {
        List<LedgerEntry> before = writeAndRead(20);
        Path dead = asADeadWritersFile(onlyFile());
        Files.setLastModifiedTime(dead, FileTime.from(Instant.now().minus(Duration.ofHours(2))));
        // a crash between the move of the .gz in place and the delete of the .jsonl: both are whole
        Path gz = LedgerCompression.of(state).compress(dead);
        try (var in = new java.util.zip.GZIPInputStream(Files.newInputStream(gz))) {
            Files.write(dead, in.readAllBytes());
        }
        Files.setLastModifiedTime(dead, FileTime.from(Instant.now().minus(Duration.ofHours(2))));
        assertThat(LedgerFiles.of(state).files()).containsExactly(dead);
        assertThat(LedgerFiles.of(state).all()).isEqualTo(before);
        // a crash mid-write of the .gz: its .tmp is never read, and is deleted once it is old
        Path tmp = gz.resolveSibling(gz.getFileName() + ".tmp");
        Files.write(tmp, new byte[] {1, 2, 3});
        Files.setLastModifiedTime(tmp, FileTime.from(Instant.now().minus(Duration.ofHours(1))));
        LedgerCompression.of(state).compressClosed(Instant.now());
        assertThat(tmp).doesNotExist();
        assertThat(LedgerFiles.of(state).files()).containsExactly(gz);
        assertThat(LedgerFiles.of(state).all()).isEqualTo(before);
    }

    @Test
    void aTornCompressedFileReadsAsAGapNeverSilentlyGood() throws IOException {
        writeAndRead(200);
        Path dead = asADeadWritersFile(onlyFile());
        Path gz = LedgerCompression.of(state).compress(dead);
        byte[] all = Files.readAllBytes(gz);
        Files.write(gz, java.util.Arrays.copyOf(all, all.length / 2));

        List<LedgerEntry> read = LedgerFiles.of(state).all();
        List<LedgerEntry> gaps = read.stream().filter(e -> e.kind() == LedgerKind.GAP).toList();
        assertThat(gaps).hasSize(1);
        assertThat(gaps.get(0).reason()).startsWith("unreadable: " + gz.getFileName());
        // the lines before the tear are read; the gap runs from the last of them to the file's last write
        List<LedgerEntry> events = read.stream().filter(e -> e.kind() == LedgerKind.EVENT).toList();
        assertThat(events).isNotEmpty().hasSizeLessThan(200);
        assertThat(gaps.get(0).at()).isEqualTo(events.get(events.size() - 1).at());
        assertThat(gaps.get(0).end()).isEqualTo(Files.getLastModifiedTime(gz).toInstant());
    }

    @Test
    void aSliceWhileFilesAreCompressedLosesNoLine() throws Exception {
        Path dir = state.resolve(Ledger.DIR);
        int files = 60, per = 20;
        try (Ledger l = Ledger.open(state)) { // one file's lines, copied under dead writers' names
            for (int i = 0; i < per; i++) l.write(event(i));
            assertThat(l.flush(Duration.ofSeconds(10))).isTrue();
        }
        Path one = onlyFile();
        for (int k = 0; k < files; k++) {
            Path f = dir.resolve(String.format("202612%02dT000000Z-999999999-%d.jsonl", k % 28 + 1, k));
            Files.copy(one, f);
            Files.setLastModifiedTime(f, FileTime.from(Instant.now().minus(Duration.ofHours(1))));
        }
        Files.delete(one);
        LedgerFiles reader = LedgerFiles.of(state);
        Thread compressor = new Thread(() -> new LedgerCompression(reader).compressClosed(Instant.now()));
        compressor.start();
        List<Integer> seen = new ArrayList<>();
        while (compressor.isAlive()) {
            seen.add(reader.slice(T0.minusSeconds(1), T0.plusSeconds(per), null).size());
        }
        compressor.join();
        seen.add(reader.slice(T0.minusSeconds(1), T0.plusSeconds(per), null).size());
        // each file's 20 events (the same ids and times in every file: the slice keeps them all)
        assertThat(seen).allMatch(n -> n == files * per);
        assertThat(LedgerFiles.of(state).files()).allMatch(f -> f.toString().endsWith(".jsonl.gz")).hasSize(files);
    }

    @Test
    void aGzThatIsNoGzipIsAGapFromWhenItsFileBegan() throws IOException {
        writeAndRead(20);
        Path f = onlyFile();
        Path gz = f.resolveSibling("20261201T100000Z-999999999.jsonl.gz"); // a plain file under a .gz name
        Files.move(f, gz);
        List<LedgerEntry> gaps = LedgerFiles.of(state).all().stream().filter(e -> e.kind() == LedgerKind.GAP).toList();
        assertThat(gaps).hasSize(1);
        assertThat(gaps.get(0).reason()).startsWith("unreadable: " + gz.getFileName());
        assertThat(gaps.get(0).at()).isEqualTo(Instant.parse("2026-12-01T10:00:00Z"));
        assertThat(gaps.get(0).end()).isEqualTo(Files.getLastModifiedTime(gz).toInstant());
    }

    @Test
    void aFileAWriterHoldsOrTwoCompressorsAtOnceLoseNothing() throws Exception {
        try (Ledger l = Ledger.open(state)) {
            for (int i = 0; i < 5; i++) l.write(event(i));
            assertThat(l.flush(Duration.ofSeconds(10))).isTrue();
            // this JVM's own writer holds its file: never compressed under it
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> LedgerCompression.of(state).compress(l.currentFile()))
                    .isInstanceOf(IOException.class).hasMessageContaining("is locked");
            assertThat(l.currentFile()).exists();
        }
        List<LedgerEntry> before = LedgerFiles.of(state).all();
        Path f = onlyFile();
        for (int round = 0; round < 30; round++) {
            Path mine = f.resolveSibling("20261201T1000" + String.format("%02d", round) + "Z-999999999.jsonl");
            Files.copy(f, mine);
            java.util.concurrent.CyclicBarrier go = new java.util.concurrent.CyclicBarrier(2);
            Runnable c = () -> {
                try {
                    go.await();
                    LedgerCompression.of(state).compress(mine);
                } catch (Exception e) {
                    // the one that did not get the file's lock, or found it gone
                }
            };
            Thread a = new Thread(c), b = new Thread(c);
            a.start();
            b.start();
            a.join();
            b.join();
            Path gz = mine.resolveSibling(mine.getFileName() + ".gz");
            assertThat(new LedgerFiles(state.resolve(Ledger.DIR)).read(gz)).as("round " + round).isEqualTo(before);
        }
    }

    @Test
    void aGzOfTheSameNameWithOtherLinesIsNeverWrittenOver() throws IOException {
        writeAndRead(5);
        Path dead = asADeadWritersFile(onlyFile());
        Path gz = LedgerCompression.of(state).compress(dead);
        byte[] kept = Files.readAllBytes(gz);
        Files.writeString(dead, "{\"other\":1}\n");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> LedgerCompression.of(state).compress(dead))
                .isInstanceOf(IOException.class).hasMessageContaining("both kept");
        assertThat(Files.readAllBytes(gz)).isEqualTo(kept);
        assertThat(dead).exists();
    }

    /** @return the file moved under the name of a writer that is gone (pid 999999999), as the keeper finds it */
    private static Path asADeadWritersFile(Path f) throws IOException {
        Path dead = f.resolveSibling("20261201T100000Z-999999999.jsonl");
        Files.move(f, dead);
        return dead;
    }

    private static Path file(Path dir, String name, int bytes, Instant modified) throws IOException {
        Path f = dir.resolve(name);
        Files.write(f, "x".repeat(bytes).getBytes(StandardCharsets.UTF_8));
        Files.setLastModifiedTime(f, FileTime.from(modified));
        return f;
    }
}
