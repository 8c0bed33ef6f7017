package io.mesh.cli;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.util.ContextInitializer;
import org.slf4j.ILoggerFactory;
import org.slf4j.LoggerFactory;

import java.util.Locale;

/**
 * The log format of mesh's processes: {@value #TEXT} (one line per event) or {@value #JSON} (one JSON object per line,
 * Logback's own {@code ch.qos.logback.classic.encoder.JsonEncoder}). Chosen with {@code --log-format} or the
 * environment variable {@value #ENV}; the {@code logback.xml} of each jar routes to the appender of that name.
 */
public final class LogFormat {
    /** Environment variable (and system property) naming the format. */
    public static final String ENV = "MESH_LOG_FORMAT";
    /** Plain text lines. */
    public static final String TEXT = "text";
    /** One JSON object per line. */
    public static final String JSON = "json";

    private LogFormat() {}

    /**
     * @param format {@code text} or {@code json} (any case)
     * @return the format, lower case
     * @throws IllegalArgumentException naming the choices otherwise
     */
    public static String check(String format) {
        String f = format == null ? TEXT : format.strip().toLowerCase(Locale.ROOT);
        if (!f.equals(TEXT) && !f.equals(JSON)) {
            throw new IllegalArgumentException("--log-format must be text or json; got '" + format + "'");
        }
        return f;
    }

    /** @return the format the logging started with: the system property or environment variable {@value #ENV}, else text */
    public static String current() {
        String p = System.getProperty(ENV);
        if (p == null || p.isBlank()) p = System.getenv(ENV);
        return p == null || p.isBlank() ? TEXT : p.strip().toLowerCase(Locale.ROOT);
    }

    /**
     * Switches the process's logging to a format, reconfiguring Logback when it differs from {@link #current()}.
     *
     * @param format {@code text} or {@code json}
     * @throws IllegalArgumentException for another format
     */
    public static void select(String format) {
        String f = check(format);
        if (f.equals(current())) return;
        System.setProperty(ENV, f);
        ILoggerFactory factory = LoggerFactory.getILoggerFactory();
        if (factory instanceof LoggerContext ctx) {
            ctx.reset();
            try {
                new ContextInitializer(ctx).autoConfig();
            } catch (Exception e) {
                throw new IllegalStateException("cannot reconfigure logging as " + f + ": " + e.getMessage(), e);
            }
        }
    }
}
