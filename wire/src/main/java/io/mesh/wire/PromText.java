package io.mesh.wire;

import java.util.Locale;

/** Writes the Prometheus text exposition format (version 0.0.4): HELP, TYPE and samples. */
public final class PromText {
    /** The {@code Content-Type} of the format. */
    public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private final StringBuilder b = new StringBuilder();

    /**
     * Starts a metric family.
     *
     * @param name metric name
     * @param type {@code counter}, {@code gauge} or {@code histogram}
     * @param help one line of help
     * @return this
     */
    public PromText family(String name, String type, String help) {
        b.append("# HELP ").append(name).append(' ').append(help.replace("\\", "\\\\").replace("\n", " ")).append('\n');
        b.append("# TYPE ").append(name).append(' ').append(type).append('\n');
        return this;
    }

    /**
     * One sample.
     *
     * @param name   metric name (with its suffix)
     * @param labels label pairs without braces such as {@code outcome="applied"}, or empty
     * @param value  the value
     * @return this
     */
    public PromText sample(String name, String labels, double value) {
        b.append(name);
        if (!labels.isEmpty()) b.append('{').append(labels).append('}');
        b.append(' ').append(number(value)).append('\n');
        return this;
    }

    /**
     * @param name  label name
     * @param value label value, escaped
     * @return {@code name="value"}
     */
    public static String label(String name, String value) {
        String v = value == null ? "" : value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
        return name + "=\"" + v + "\"";
    }

    /** @return the value as Prometheus writes it: integers without a fraction */
    public static String number(double v) {
        if (Double.isInfinite(v)) return v > 0 ? "+Inf" : "-Inf";
        if (v == Math.rint(v) && Math.abs(v) < 1e15) return Long.toString((long) v);
        return String.format(Locale.ROOT, "%.6f", v).replaceAll("0+$", "");
    }

    /** @return the text, ending with a newline */
    @Override
    public String toString() { return b.toString(); }
}
