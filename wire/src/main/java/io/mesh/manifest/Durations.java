package io.mesh.manifest;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Durations as operators write them: {@code 90s}, {@code 30m}, {@code 1h30m}, {@code 2h}. Parsed by
 * {@link Duration#parse(CharSequence)} after rewriting to ISO-8601 ({@code PT1H30M}).
 */
public final class Durations {
    private static final Pattern FORM = Pattern.compile("(\\d{1,6}h)?(\\d{1,6}m)?(\\d{1,6}s)?");

    private Durations() {}

    /**
     * @param text such as {@code 30m}
     * @return the duration, &gt; 0
     * @throws IllegalArgumentException naming the accepted form when the text is not one
     */
    public static Duration parse(String text) {
        if (text == null || text.isEmpty() || !FORM.matcher(text).matches()) {
            throw new IllegalArgumentException("'" + text + "' is not a duration: write hours, minutes and seconds such as 90s, 30m or 1h30m");
        }
        Duration d = parseZeroAllowed(text);
        if (d.isZero()) throw new IllegalArgumentException("'" + text + "' is zero: give a duration above 0, such as 30s");
        return d;
    }

    /**
     * @param text such as {@code 0s} or {@code 2s}
     * @return the duration, &ge; 0 (for waits that may be skipped, such as {@code ready.min-healthy})
     * @throws IllegalArgumentException naming the accepted form when the text is not one
     */
    public static Duration parseZeroAllowed(String text) {
        if (text == null || text.isEmpty() || !FORM.matcher(text).matches()) {
            throw new IllegalArgumentException("'" + text + "' is not a duration: write hours, minutes and seconds such as 90s, 30m or 1h30m");
        }
        return Duration.parse("PT" + text.toUpperCase(Locale.ROOT));
    }

    /**
     * @param d a duration, &gt; 0; parts below a second are dropped
     * @return it as mesh writes it, which {@link #parse} reads back: {@code 90s} is {@code 1m30s}, {@code 3600s} is
     *         {@code 1h}
     */
    public static String format(Duration d) {
        long s = d.toSeconds();
        StringBuilder b = new StringBuilder();
        if (s >= 3600) b.append(s / 3600).append('h');
        if (s % 3600 >= 60) b.append(s % 3600 / 60).append('m');
        if (s % 60 != 0 || b.isEmpty()) b.append(s % 60).append('s');
        return b.toString();
    }
}
