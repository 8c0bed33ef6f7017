package io.mesh.window;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import io.mesh.ledger.DurableFile;
import io.mesh.section.HostFence;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The window journal: what an open window on this host has done, on local disk under {@code --state-dir}, so that
 * a window whose process dies (kill -9, host reboot) is finished by the next mesh process that takes the module lock
 * (docs/failure-model.md).
 *
 * <p>One file per module, {@code <state-dir>/windows/<module>.json}, written (atomically: temp file + rename)
 * before the first container is stopped and at each step, deleted once every held container runs again. Every mesh
 * process on a host must share the same {@code --state-dir} (default {@code /var/lib/mesh/agent}).
 */
public final class WindowJournal {
    private final Path dir;

    /**
     * One open window.
     *
     * @param host          host id
     * @param module        module name
     * @param schedule      schedule name
     * @param window        window id
     * @param since         when it opened
     * @param deadline      when its step is to be killed (since + timeout, plus the time to stop the held containers)
     * @param owner         the process running it
     * @param ownerStart    that process's start time, to tell it from a later process with the same pid
     * @param stepContainer Docker name of the step container
     * @param held          the containers it holds
     * @param opened        the stages it opened, in order ({@link #openedStages})
     * @param silences      the Alertmanager silences it made ({@link WindowStage#SILENCED}); empty when none
     */
    public record Entry(String host, String module, String schedule, String window, Instant since, Instant deadline,
                        ProcessRef owner, Instant ownerStart, String stepContainer, List<HeldContainer> held,
                        List<WindowStage> opened, @JsonInclude(JsonInclude.Include.NON_EMPTY) List<Silence> silences) {
        public Entry {
            silences = silences == null ? List.of() : List.copyOf(silences);
        }

        /** An entry without silences. */
        public Entry(String host, String module, String schedule, String window, Instant since, Instant deadline, ProcessRef owner,
                     Instant ownerStart, String stepContainer, List<HeldContainer> held, List<WindowStage> opened) {
            this(host, module, schedule, window, since, deadline, owner, ownerStart, stepContainer, held, opened, List.of());
        }

        /** @return this entry with the silences it made recorded */
        public Entry withSilences(List<Silence> made) {
            return new Entry(host, module, schedule, window, since, deadline, owner, ownerStart, stepContainer, held, opened, made);
        }
        /** @return this entry with a container's restart policy to restore recorded */
        public Entry withRestore(String containerId, String policy) {
            List<HeldContainer> h = new ArrayList<>();
            for (HeldContainer c : held) h.add(c.containerId().equals(containerId) ? new HeldContainer(c.container(), c.containerId(), policy, c.stopSent()) : c);
            return new Entry(host, module, schedule, window, since, deadline, owner, ownerStart, stepContainer, List.copyOf(h), opened, silences);
        }

        /**
         * @return the stages this window opened, in order; an entry written before stages were journalled counts as
         *         having opened every stage (closing one that did not open is harmless; missing one is not)
         */
        public List<WindowStage> openedStages() {
            return opened == null ? List.of(WindowStage.values()) : opened;
        }

        /** @return this entry with the stop of one held container recorded as sent (before it is sent) */
        public Entry stopping(String containerId) {
            return withStopSent(containerId, true);
        }

        /**
         * @return this entry with the stop of one held container known to have returned (a settling stop did, before
         *         the container is started again): a later closing of the same entry must not stop it again
         */
        public Entry stopReturned(String containerId) {
            return withStopSent(containerId, false);
        }

        private Entry withStopSent(String containerId, boolean sent) {
            List<HeldContainer> h = new ArrayList<>();
            for (HeldContainer c : held) h.add(c.containerId().equals(containerId) ? new HeldContainer(c.container(), c.containerId(), c.restorePolicy(), sent) : c);
            return new Entry(host, module, schedule, window, since, deadline, owner, ownerStart, stepContainer, List.copyOf(h), opened, silences);
        }

        /**
         * @return this entry with every stage counted as opened (what a reader that cannot know must assume) and every
         *         stop as unknown
         */
        public Entry withEveryStage() {
            List<HeldContainer> h = held.stream().map(c -> new HeldContainer(c.container(), c.containerId(), c.restorePolicy(), null)).toList();
            return new Entry(host, module, schedule, window, since, deadline, owner, ownerStart, stepContainer, h, null, silences);
        }

        /**
         * @return this entry with every held container's stop known to have returned: none can still be carried out
         *         by dockerd, so giving them back needs no settling stop (which would stop a container that dockerd
         *         itself started again meanwhile, as its restart policy was being put back)
         */
        public Entry stopsReturned() {
            List<HeldContainer> h = new ArrayList<>();
            for (HeldContainer c : held) h.add(new HeldContainer(c.container(), c.containerId(), c.restorePolicy(), false));
            return new Entry(host, module, schedule, window, since, deadline, owner, ownerStart, stepContainer, List.copyOf(h), opened, silences);
        }

        /** @return this entry with {@code stage} recorded as opened (before the stage acts) */
        public Entry opening(WindowStage stage) {
            List<WindowStage> o = new ArrayList<>(opened == null ? List.of() : opened);
            if (!o.contains(stage)) o.add(stage);
            return new Entry(host, module, schedule, window, since, deadline, owner, ownerStart, stepContainer, held, List.copyOf(o), silences);
        }

        /** @return this entry with {@code stage} recorded as closed */
        public Entry closed(WindowStage stage) {
            List<WindowStage> o = new ArrayList<>(openedStages());
            o.remove(stage);
            return new Entry(host, module, schedule, window, since, deadline, owner, ownerStart, stepContainer, held, List.copyOf(o), silences);
        }

        /**
         * @return true when the process that wrote this entry still runs (same pid and same start time)
         */
        @JsonIgnore
        public boolean ownerAlive() {
            if (owner == null) return false;
            Optional<ProcessHandle> p = ProcessHandle.of(owner.pid());
            if (p.isEmpty() || !p.get().isAlive()) return false;
            Optional<Instant> start = p.get().info().startInstant();
            return ownerStart == null || start.isEmpty()
                    || Math.abs(start.get().toEpochMilli() - ownerStart.toEpochMilli()) < 2_000;
        }
    }

    /**
     * One silence a window made in Alertmanager, so that whoever closes the window expires it.
     *
     * @param alertmanager the server
     * @param id           the silence's id, as Alertmanager answered
     * @param container    the held container it silences
     */
    public record Silence(String alertmanager, String id, String container) {}

    /**
     * A journal entry exists but cannot be read. Fail safe (failure model row 22): a window of the module may be open, so
     * nothing of the module is touched until an operator looks.
     */
    public static final class UnreadableException extends RuntimeException {
        UnreadableException(String message, Throwable cause) { super(message, cause); }
    }

    /**
     * A container held by a journalled window.
     *
     * @param container     Docker name
     * @param containerId   Docker id
     * @param restorePolicy restart policy to put back before starting it ({@code always}, {@code on-failure:3},
     *                      {@code unless-stopped}), or {@code null} when it was {@code no} and is left so
     * @param stopSent      whether the window has asked Docker to stop it; {@code null} when the entry cannot say
     *                      (a step container's label)
     */
    public record HeldContainer(String container, String containerId, String restorePolicy, Boolean stopSent) {
        /** A container the window has not asked Docker to stop yet. */
        public HeldContainer(String container, String containerId, String restorePolicy) {
            this(container, containerId, restorePolicy, false);
        }

        /** @return true when the entry says the stop was sent (not merely that it cannot tell) */
        public boolean stopKnownSent() { return Boolean.TRUE.equals(stopSent); }
    }

    /**
     * @param stateDir the agent's {@code --state-dir}; the journal lives in its {@code windows/} folder
     */
    public WindowJournal(Path stateDir) {
        this.dir = stateDir.resolve("windows");
    }

    /** @return the agent's {@code --state-dir} this journal lives in */
    public Path stateDir() {
        return dir.getParent();
    }

    /** @return this process's start time, for {@link Entry#ownerStart()} */
    public static Instant thisProcessStart() {
        return ProcessHandle.current().info().startInstant().orElse(null);
    }

    /**
     * Writes (replaces) the entry of a module, durably: temp file, fsync, atomic rename.
     *
     * @param e the entry
     * @throws UncheckedIOException when the state directory cannot be written: the window must not stop anything then
     */
    public void write(Entry e) {
        try {
            DurableFile.replace(file(e.module()), Json.bytes(e));
        } catch (IOException x) {
            throw new UncheckedIOException("cannot write the window journal in " + dir + ": " + x.getMessage()
                    + " (check --state-dir)", x);
        }
    }

    /**
     * @param module module name
     * @return the module's open window entry, if any
     * @throws UnreadableException when the file exists but cannot be read or parsed: a window may be open
     */
    public Optional<Entry> read(String module) {
        byte[] data;
        try {
            data = Files.readAllBytes(file(module));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw unreadable(module, e);
        }
        try {
            return Optional.of(Json.read(data, Entry.class));
        } catch (RuntimeException e) {
            throw unreadable(module, e);
        }
    }

    private UnreadableException unreadable(String module, Exception e) {
        return new UnreadableException("the window journal " + file(module) + " cannot be read (" + e.getMessage()
                + "), so a window of " + module + " may be open and nothing of it is touched; check that its containers run,"
                + " then move the file away", e);
    }

    /** @return the host fences that live beside this journal, in the same {@code --state-dir} */
    public HostFence fences() {
        return new HostFence(dir.getParent());
    }

    /** @return the modules with an entry */
    public List<String> modules() {
        List<String> out = new ArrayList<>();
        if (!Files.isDirectory(dir)) return out;
        try (DirectoryStream<Path> s = Files.newDirectoryStream(dir, "*.json")) {
            for (Path p : s) {
                String n = p.getFileName().toString();
                out.add(n.substring(0, n.length() - ".json".length()));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + dir + ": " + e.getMessage(), e);
        }
        return out;
    }

    /** Deletes a module's entry; a missing one is fine. */
    public void delete(String module) {
        try {
            Files.deleteIfExists(file(module));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + file(module) + ": " + e.getMessage(), e);
        }
    }

    private Path file(String module) {
        return dir.resolve(module + ".json");
    }
}
