package io.mesh.client.compose;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Compose's durations ({@code 1m30s}, {@code 2.5s}, {@code 500ms}: Go's {@code time.ParseDuration}) rewritten as mesh's
 * ({@code Durations}: whole hours, minutes and seconds, such as {@code 1m30s}).
 */
final class GoDuration {
    private static final Pattern PART = Pattern.compile("(\\d+(?:\\.\\d*)?|\\.\\d+)(ns|us|µs|ms|s|m|h)");
    private static final Pattern WHOLE = Pattern.compile("(?:" + PART.pattern() + ")+");
    private static final Map<String, Long> NANOS = Map.of("ns", 1L, "us", 1_000L, "µs", 1_000L, "ms", 1_000_000L,
            "s", 1_000_000_000L, "m", 60_000_000_000L, "h", 3_600_000_000_000L);

    private GoDuration() {}

    /**
     * @param text a Go duration such as {@code 1m30s}
     * @return the same length of time, &ge; 0
     * @throws IllegalArgumentException naming the form, when the text is not one
     */
    static Duration parse(String text) {
        if (!WHOLE.matcher(text).matches()) {
            throw new IllegalArgumentException("'" + text + "' is not a duration: write a number and a unit, such as 10s, 1m30s or 2h");
        }
        BigDecimal nanos = BigDecimal.ZERO;
        Matcher m = PART.matcher(text);
        while (m.find()) nanos = nanos.add(new BigDecimal(m.group(1)).multiply(BigDecimal.valueOf(NANOS.get(m.group(2)))));
        return Duration.ofNanos(nanos.longValue());
    }

    /**
     * @param d a duration of whole seconds, &gt; 0
     * @return it as mesh writes it: {@code 90s} is {@code 1m30s}, {@code 3600s} is {@code 1h}
     * @throws IllegalArgumentException when it is not whole seconds (mesh counts seconds)
     */
    static String mesh(Duration d) {
        if (d.toNanosPart() != 0) throw new IllegalArgumentException("mesh counts whole seconds: round it, such as " + Math.max(1, Math.round(d.toMillis() / 1000.0)) + "s");
        return io.mesh.manifest.Durations.format(d);
    }
}
