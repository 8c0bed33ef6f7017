package io.mesh.window;

import com.cronutils.model.CronType;
import com.cronutils.model.definition.CronDefinitionBuilder;
import com.cronutils.model.time.ExecutionTime;
import com.cronutils.parser.CronParser;
import io.mesh.manifest.ModuleSpec;
import io.mesh.manifest.ScheduleSpec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/**
 * Fires each schedule of this host's modules at its cron times (cron-utils, Unix 5-field definition), in the
 * schedule's time zone or the host's. Firing hands {@code (module, schedule)} to a callback, which runs the window
 * elsewhere; the scheduler only keeps time. Thread-safe.
 */
public final class WindowScheduler implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(WindowScheduler.class);
    private static final CronParser CRON = new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.UNIX));

    private final ScheduledExecutorService timer;
    private final BiConsumer<String, String> fire;
    private final Map<String, Entry> entries = new HashMap<>();
    private final java.time.Clock clock;

    private record Entry(String key, ScheduledFuture<?> future) {}

    /**
     * @param timer a scheduled executor that only keeps time (firing must not block it)
     * @param fire  called with (module, schedule) at each cron time
     */
    public WindowScheduler(ScheduledExecutorService timer, BiConsumer<String, String> fire) {
        this(timer, fire, java.time.Clock.systemUTC());
    }

    /**
     * @param timer a scheduled executor that only keeps time
     * @param fire  called with (module, schedule) at each cron time
     * @param clock the clock cron times are computed from (tests set it just before a cron time)
     */
    public WindowScheduler(ScheduledExecutorService timer, BiConsumer<String, String> fire, java.time.Clock clock) {
        this.timer = timer;
        this.fire = fire;
        this.clock = clock;
    }

    /**
     * The next time a schedule fires after {@code after}.
     *
     * @param s     the schedule (cron validated by the manifest parser)
     * @param after a point in time
     * @return the next cron time, in the schedule's zone (or the host's)
     */
    public static Optional<ZonedDateTime> next(ScheduleSpec s, ZonedDateTime after) {
        ZoneId zone = s.timezone() == null ? ZoneId.systemDefault() : ZoneId.of(s.timezone());
        return ExecutionTime.forCron(CRON.parse(s.cron())).nextExecution(after.withZoneSameInstant(zone));
    }

    /**
     * Makes the timers match a module's schedules: new schedules start, changed ones restart, removed ones stop.
     *
     * @param spec the module's spec, or {@code null} when the module no longer runs on this host
     * @param module the module name
     */
    public synchronized void update(String module, ModuleSpec spec) {
        Map<String, ScheduleSpec> wanted = spec == null ? Map.of() : spec.schedules();
        entries.entrySet().removeIf(e -> {
            String[] parts = e.getKey().split("/", 2);
            if (!parts[0].equals(module)) return false;
            ScheduleSpec s = wanted.get(parts[1]);
            if (s != null && e.getValue().key().equals(key(s))) return false;
            e.getValue().future().cancel(false);
            return true;
        });
        for (Map.Entry<String, ScheduleSpec> s : wanted.entrySet()) {
            String id = module + "/" + s.getKey();
            if (!entries.containsKey(id)) arm(module, s.getKey(), s.getValue());
        }
    }

    private static String key(ScheduleSpec s) { return s.cron() + "|" + s.timezone(); }

    private synchronized void arm(String module, String schedule, ScheduleSpec s) {
        ZonedDateTime now = ZonedDateTime.now(clock);
        Optional<ZonedDateTime> at = next(s, now);
        if (at.isEmpty()) {
            log.warn("schedule {}/{} ('{}') never fires", module, schedule, s.cron());
            return;
        }
        long delay = Math.max(0, Duration.between(now, at.get()).toMillis());
        String id = module + "/" + schedule;
        ScheduledFuture<?> f = timer.schedule(() -> {
            synchronized (this) {
                Entry e = entries.get(id);
                if (e == null || !e.key().equals(key(s))) return; // replaced meanwhile
                entries.remove(id);
                arm(module, schedule, s);
            }
            fire.accept(module, schedule);
        }, delay, TimeUnit.MILLISECONDS);
        entries.put(id, new Entry(key(s), f));
        log.debug("schedule {}/{} next at {}", module, schedule, at.get());
    }

    /** Stops every timer; the executor is the caller's. */
    @Override
    public synchronized void close() {
        entries.values().forEach(e -> e.future().cancel(false));
        entries.clear();
    }
}
