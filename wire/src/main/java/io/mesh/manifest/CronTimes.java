package io.mesh.manifest;

import com.cronutils.model.CronType;
import com.cronutils.model.definition.CronDefinitionBuilder;
import com.cronutils.model.time.ExecutionTime;
import com.cronutils.parser.CronParser;

import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The times of a five-field Unix cron expression (cron-utils, {@link CronType#UNIX}), as schedules and recurring
 * freezes read them: the one parser of both, so that a freeze's {@code --cron} means what a schedule's {@code cron}
 * means.
 */
public final class CronTimes {
    private static final CronParser PARSER = new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.UNIX));
    /** Parsed expressions: an apply asks a recurring freeze before each container change. Bounded by what was pushed or frozen. */
    private static final Map<String, ExecutionTime> PARSED = new ConcurrentHashMap<>();

    private CronTimes() {}

    /**
     * @param expression five fields, such as {@code "30 3 * * *"}
     * @throws IllegalArgumentException cron-utils' words for an expression it cannot read
     */
    public static void check(String expression) {
        PARSER.parse(expression).validate();
    }

    /**
     * @param expression a checked expression ({@link #check})
     * @param zone       the zone its fields are read in
     * @param after      a point in time
     * @return the first cron time strictly after {@code after}, or empty when there is none (cron-utils' answer)
     */
    public static Optional<ZonedDateTime> next(String expression, ZoneId zone, Instant after) {
        ExecutionTime times = times(expression);
        Optional<ZonedDateTime> n = times.nextExecution(after.atZone(zone));
        // cron-utils works in whole seconds; never hand back the instant itself (or one before it)
        while (n.isPresent() && !n.get().toInstant().isAfter(after)) n = times.nextExecution(n.get().plusSeconds(1));
        return n;
    }

    /**
     * @param expression a checked expression ({@link #check})
     * @param zone       the zone its fields are read in
     * @param atOrBefore a point in time
     * @return the last cron time at or before {@code atOrBefore} that {@link #next} gives too, or empty when there is none
     */
    public static Optional<Instant> last(String expression, ZoneId zone, Instant atOrBefore) {
        // cron-utils' lastExecution is strictly before its argument, in whole seconds: ask from the next whole second.
        Instant from = atOrBefore.truncatedTo(ChronoUnit.SECONDS).plusSeconds(1);
        ExecutionTime times = times(expression);
        Optional<Instant> last = times.lastExecution(from.atZone(zone)).map(ZonedDateTime::toInstant).filter(t -> !t.isAfter(atOrBefore));
        // Only a time the walk of next() from the time before it reaches: across a clock change cron-utils' two directions
        // disagree (the second 02:00 of a night the clock goes back is a last time, but next() from the first 02:00 skips
        // it), and a freeze's span must be the one its start announced.
        for (int i = 0; i < 3 && last.isPresent(); i++) {
            Instant l = last.get();
            Optional<Instant> before = times.lastExecution(l.atZone(zone)).map(ZonedDateTime::toInstant);
            if (before.isEmpty() || next(expression, zone, before.get()).map(ZonedDateTime::toInstant).filter(l::equals).isPresent()) return last;
            last = before;
        }
        return last;
    }

    private static ExecutionTime times(String expression) {
        return PARSED.computeIfAbsent(expression, e -> ExecutionTime.forCron(PARSER.parse(e)));
    }
}
