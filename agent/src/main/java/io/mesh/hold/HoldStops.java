package io.mesh.hold;

import io.mesh.ledger.DurableFile;
import io.mesh.wire.Json;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Collection;
import java.util.Map;
import java.util.TreeMap;

/**
 * Which containers an operator's hold stopped ({@code mesh hold --stop}), on local disk, so that the apply after the
 * hold ends starts the same container instead of recreating it (decision 33). One file per module,
 * {@code <state-dir>/hold-stops/<module>.json}, by Docker name, replaced whole ({@link DurableFile}). Written and read
 * only under the module's lock and the host fence (the hold's stop, the apply), so two writers never meet. A file that
 * cannot be read is logged and counts as none: the apply recreates, as it did before the file existed.
 */
public final class HoldStops {
    private static final Logger log = LoggerFactory.getLogger(HoldStops.class);
    /** The folder under {@code --state-dir}. */
    public static final String DIR = "hold-stops";

    private final Path dir;
    /** A plan's view: reads, never forgets (it holds no lock). */
    private final boolean readOnly;

    /** @param stateDir the agent's {@code --state-dir} */
    public HoldStops(Path stateDir) {
        this(stateDir.resolve(DIR), false);
    }

    private HoldStops(Path dir, boolean readOnly) {
        this.dir = dir;
        this.readOnly = readOnly;
    }

    /** @return the same stops for a reader outside the module's lock (a plan): {@link #forget} does nothing */
    public HoldStops readOnly() {
        return new HoldStops(dir, true);
    }

    /**
     * One container a hold stopped.
     *
     * @param containerId the container the hold stopped
     * @param startedAt   its Docker {@code State.StartedAt} read after the stop: a later start changes it
     * @param by          the hold's operator
     * @param reason      the hold's reason
     * @param stoppedAt   when it was stopped
     */
    public record Stop(String containerId, String startedAt, String by, String reason, Instant stoppedAt) {
        /** @return the reason an apply that starts it again gives (decision 33) */
        public String startedAgain() {
            return "started again as it was: stopped by " + by + "'s hold (--stop), which ended";
        }
    }

    private record File(Map<String, Stop> stops) {}

    private Path file(String module) { return dir.resolve(module + ".json"); }

    /**
     * @param module module name
     * @return by Docker name, the containers of the module a hold stopped; empty when none (or unreadable: logged)
     */
    public Map<String, Stop> read(String module) {
        try {
            File f = Json.MAPPER.readValue(Files.readAllBytes(file(module)), File.class);
            return f == null || f.stops() == null ? new TreeMap<>() : new TreeMap<>(f.stops());
        } catch (NoSuchFileException e) {
            return new TreeMap<>();
        } catch (IOException | RuntimeException e) {
            // Kept aside, not lost, and said once: the next stop of the module writes a new file.
            Path aside = file(module).resolveSibling(module + ".json.unreadable");
            String why = String.valueOf(e.getMessage()).lines().findFirst().orElse(e.getClass().getSimpleName());
            try {
                if (readOnly) aside = file(module); // a plan holds no lock: the apply moves it
                else Files.move(file(module), aside, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            } catch (IOException moved) {
                aside = file(module);
            }
            log.warn("hold stops of module {}: {} is not a hold-stops file ({}), kept as {}: a container a hold stopped is recreated after"
                    + " the hold, not started as it was", module, file(module), why, aside);
            return new TreeMap<>();
        }
    }

    /**
     * Remembers a hold's stop of a container (under the module's lock and fence).
     *
     * @param module    module name
     * @param container its Docker name
     * @param stop      what was stopped
     * @throws IOException when the file cannot be written; what it held is left as it was
     */
    public void record(String module, String container, Stop stop) throws IOException {
        Map<String, Stop> all = read(module);
        all.put(container, stop);
        write(module, all);
    }

    /**
     * Forgets containers (under the module's lock and fence): started again, recreated, removed, or no longer the hold's
     * stop. Logs when the file cannot be written: an entry left behind is checked again by the next apply (decision 33,
     * point 2), so it can never start a container that was started since.
     *
     * @param module     module name
     * @param containers Docker names
     */
    public void forget(String module, Collection<String> containers) {
        if (containers.isEmpty() || readOnly) return;
        Map<String, Stop> all = read(module);
        if (!all.keySet().removeAll(containers)) return;
        try {
            if (all.isEmpty()) Files.deleteIfExists(file(module));
            else write(module, all);
        } catch (IOException e) {
            log.warn("hold stops of module {}: {} not forgotten in {} ({})", module, containers, file(module), e.toString());
        }
    }

    private void write(String module, Map<String, Stop> all) throws IOException {
        DurableFile.replace(file(module), Json.bytes(new File(all)));
    }
}
