package io.mesh.window;

import io.mesh.ledger.DurableFile;
import io.mesh.manifest.ModuleSpec;
import io.mesh.manifest.CronTimes;
import io.mesh.manifest.ScheduleSpec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.format.DateTimeParseException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/**
 * Fires each schedule of this host's modules at its cron times (cron-utils, Unix 5-field definition), in the
 * schedule's time zone or the host's. Firing hands {@code (module, schedule)} to a callback, which runs the window
 * elsewhere; the scheduler only keeps time. Thread-safe.
 *
 * <p>Each schedule fires <b>at most once per cron time</b>, and a time passed by more than {@link #LATE_LIMIT} is
 * <b>missed</b>, logged and not run late (docs/decisions/0006-a-cron-time-fires-once.md; the rule: docs/design.md,
 * "Cron").
 */
public final class WindowScheduler implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(WindowScheduler.class);
    /**
     * How late after its cron time a timer may still fire it. Later than this the time is missed, not run: a window
     * was put at its time because that time suits it (decision 0006). Covers a loaded machine or a GC pause.
     */
    public static final Duration LATE_LIMIT = Duration.ofMinutes(1);
    /**
     * The longest the timer sleeps between two looks at the wall clock: the executor's delays run on the monotonic
     * clock, so a wall clock that jumps is noticed within this.
     */
    public static final Duration MAX_SLEEP = Duration.ofMinutes(1);

    private final ScheduledExecutorService timer;
    private final BiConsumer<String, String> fire;
    private final Clock clock;
    private final Path cronDir;
    private final long maxSleepMs;
    private final Map<String, Entry> entries = new HashMap<>();
    /** The last cron time fired per {@code module/schedule}, in this process or (with a state dir) before it. */
    private final Map<String, Instant> lastFired = new HashMap<>();
    /** Schedules armed before in this process: only their first arming looks for times missed while down. */
    private final Set<String> armedBefore = new HashSet<>();
    private boolean closed;

    /** One armed schedule; replaced (a new object) when its cron or zone changes, so a stale timer sees it is stale. */
    private static final class Entry {
        final String key;
        final ScheduleSpec spec;
        Instant target;
        ScheduledFuture<?> future;

        Entry(String key, ScheduleSpec spec) {
            this.key = key;
            this.spec = spec;
        }
    }

    /**
     * @param timer a scheduled executor that only keeps time (firing must not block it)
     * @param fire  called with (module, schedule) at each cron time
     */
    public WindowScheduler(ScheduledExecutorService timer, BiConsumer<String, String> fire) {
        this(timer, fire, Clock.systemUTC());
    }

    /**
     * @param timer a scheduled executor that only keeps time
     * @param fire  called with (module, schedule) at each cron time
     * @param clock the clock cron times are computed from (tests set it just before a cron time)
     */
    public WindowScheduler(ScheduledExecutorService timer, BiConsumer<String, String> fire, Clock clock) {
        this(timer, fire, clock, null, MAX_SLEEP);
    }

    /**
     * @param timer    a scheduled executor that only keeps time
     * @param fire     called with (module, schedule) at each cron time
     * @param clock    the wall clock cron times are read from
     * @param stateDir the agent's {@code --state-dir}, where the last fired time of each schedule is kept (its
     *                 {@code cron/} folder); {@code null} to keep it in memory only
     * @param maxSleep the longest wait between two looks at {@code clock} ({@link #MAX_SLEEP}; tests that move a
     *                 clock by hand use a few milliseconds)
     */
    public WindowScheduler(ScheduledExecutorService timer, BiConsumer<String, String> fire, Clock clock, Path stateDir,
                           Duration maxSleep) {
        this.timer = timer;
        this.fire = fire;
        this.clock = clock;
        this.cronDir = stateDir == null ? null : stateDir.resolve("cron");
        this.maxSleepMs = Math.max(1, maxSleep.toMillis());
    }

    /**
     * The next time a schedule fires after {@code after}.
     *
     * @param s     the schedule (cron validated by the manifest parser)
     * @param after a point in time
     * @return the next cron time strictly after {@code after}, in the schedule's zone (or the host's)
     */
    public static Optional<ZonedDateTime> next(ScheduleSpec s, ZonedDateTime after) {
        return CronTimes.next(s.cron(), zone(s), after.toInstant());
    }

    private static ZoneId zone(ScheduleSpec s) {
        return s.timezone() == null ? ZoneId.systemDefault() : ZoneId.of(s.timezone());
    }

    /**
     * Makes the timers match a module's schedules: new schedules start, changed ones restart, removed ones stop. A
     * schedule that changes keeps its last fired time.
     *
     * @param spec the module's spec, or {@code null} when the module no longer runs on this host
     * @param module the module name
     */
    public synchronized void update(String module, ModuleSpec spec) {
        if (closed) return;
        Map<String, ScheduleSpec> wanted = spec == null ? Map.of() : spec.schedules();
        entries.entrySet().removeIf(e -> {
            String[] parts = e.getKey().split("/", 2);
            if (!parts[0].equals(module)) return false;
            ScheduleSpec s = wanted.get(parts[1]);
            if (s != null && e.getValue().key.equals(key(s))) return false;
            if (e.getValue().future != null) e.getValue().future.cancel(false);
            return true;
        });
        for (Map.Entry<String, ScheduleSpec> s : wanted.entrySet()) {
            String id = module + "/" + s.getKey();
            if (entries.containsKey(id)) continue;
            Entry e = new Entry(key(s.getValue()), s.getValue());
            entries.put(id, e);
            Instant now = clock.instant();
            if (armedBefore.add(id)) reportMissedSinceLastRun(id, e, now);
            aim(id, e, now);
        }
    }

    private static String key(ScheduleSpec s) { return s.cron() + "|" + s.timezone(); }

    /**
     * The cron time a schedule is armed for.
     *
     * @param module   module name
     * @param schedule schedule name
     * @return the next cron time it will fire, or empty when it is not armed
     */
    public synchronized Optional<Instant> nextFire(String module, String schedule) {
        Entry e = entries.get(module + "/" + schedule);
        return e == null ? Optional.empty() : Optional.ofNullable(e.target);
    }

    /**
     * The last cron time a schedule fired, in this process or, with a state directory, in an earlier one.
     *
     * @param module   module name
     * @param schedule schedule name
     * @return that time, or empty when none is known
     */
    public synchronized Optional<Instant> lastFired(String module, String schedule) {
        return Optional.ofNullable(lastFiredOf(module + "/" + schedule));
    }

    /** Aims an entry at the first cron time strictly after both {@code now} and its last fired time. */
    private void aim(String id, Entry e, Instant now) {
        Instant last = lastFiredOf(id);
        Instant from = last != null && last.isAfter(now) ? last : now;
        Optional<ZonedDateTime> at = next(e.spec, from.atZone(zone(e.spec)));
        if (at.isEmpty()) {
            log.warn("schedule {} ('{}') never fires", id, e.spec.cron());
            e.target = null;
            return;
        }
        e.target = at.get().toInstant();
        if (last != null && last.isAfter(now)) {
            log.warn("schedule {}: the clock ({}) is behind the last cron time fired ({}); next at {}, not that one again",
                    id, now, last, e.target);
        } else {
            log.debug("schedule {} next at {}", id, e.target);
        }
        sleepUntilTarget(id, e, now);
    }

    private void sleepUntilTarget(String id, Entry e, Instant now) {
        long delay = Math.min(maxSleepMs, Math.max(1, Duration.between(now, e.target).toMillis()));
        try {
            e.future = timer.schedule(() -> tick(id, e), delay, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException x) {
            // the executor is shutting down with the agent
        }
    }

    /** The timer woke: fire the target once if it is due now, re-arm if woken early, skip it if too late. */
    private void tick(String id, Entry e) {
        synchronized (this) {
            if (closed || entries.get(id) != e) return; // replaced or removed meanwhile
            Instant now = clock.instant();
            Instant target = e.target;
            if (now.isBefore(target)) { // woken early (or the wall clock went back): the same target, later
                sleepUntilTarget(id, e, now);
                return;
            }
            if (now.isAfter(target.plus(LATE_LIMIT))) {
                log.warn("schedule {}: cron time {} missed (the timer woke at {}: the agent was frozen or the clock jumped "
                        + "forward); it does not run late (decision 0006)", id, target, now);
                aim(id, e, now);
                return;
            }
            remember(id, target); // before the window runs: a restart must not fire this time again
            aim(id, e, target.isAfter(now) ? target : now);
        }
        fire.accept(id.substring(0, id.indexOf('/')), id.substring(id.indexOf('/') + 1));
    }

    /** At a schedule's first arming in this process: says which cron times passed since it last fired, unrun. */
    private void reportMissedSinceLastRun(String id, Entry e, Instant now) {
        Instant last = lastFiredOf(id);
        if (last == null || !last.isBefore(now)) return;
        Optional<ZonedDateTime> first = next(e.spec, last.atZone(zone(e.spec)));
        if (first.isEmpty() || first.get().toInstant().isAfter(now)) return;
        Instant lastMissed = CronTimes.last(e.spec.cron(), zone(e.spec), now).filter(t -> t.isAfter(last)).orElse(first.get().toInstant());
        log.warn("schedule {}: cron time {} missed{} while the agent was not running (last fired {}); missed times do not "
                        + "run late (decision 0006)", id, lastMissed,
                lastMissed.equals(first.get().toInstant()) ? "" : " (and earlier ones since " + first.get().toInstant() + ")", last);
    }

    private Instant lastFiredOf(String id) {
        Instant mem = lastFired.get(id);
        if (mem != null || cronDir == null) return mem;
        Path f = cronDir.resolve(id);
        try {
            Instant disk = Instant.parse(Files.readString(f, StandardCharsets.UTF_8).strip());
            lastFired.put(id, disk);
            return disk;
        } catch (NoSuchFileException x) {
            return null;
        } catch (IOException | DateTimeParseException x) {
            log.warn("schedule {}: cannot read its last fired time from {} ({}); counting from now", id, f, x.getMessage());
            return null;
        }
    }

    /** Records a fired time in memory and, with a state dir, on disk (temp file, fsync, atomic rename). */
    private void remember(String id, Instant t) {
        lastFired.put(id, t);
        if (cronDir == null) return;
        Path f = cronDir.resolve(id);
        try {
            DurableFile.replace(f, (t + "\n").getBytes(StandardCharsets.UTF_8));
        } catch (IOException x) {
            // The window still runs: this process remembers the time; only a restart could fire it again.
            log.error("schedule {}: cannot keep its last fired time {} in {} ({}); a restart before the next cron time "
                    + "could fire it again", id, t, f, x.getMessage());
        }
    }

    /** Stops every timer; the executor is the caller's. */
    @Override
    public synchronized void close() {
        closed = true;
        entries.values().forEach(e -> {
            if (e.future != null) e.future.cancel(false);
        });
        entries.clear();
    }
}
