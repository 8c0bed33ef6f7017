package io.mesh.manifest;

/**
 * Text shown in an error or a note, with each control character (below U+0020, and U+007F) written as
 * {@code \\uXXXX}: a name holding a newline prints as one line and cannot forge a second one.
 */
public final class Printable {
    private Printable() {}

    /** How many code points {@link #cut(String)} keeps. */
    public static final int CUT = 80;

    /**
     * Text a request gave, echoed in an error or a log line: at most {@link #CUT} code points, then {@code ...}, control
     * characters escaped. The one way the coordinator shows a refused value.
     *
     * @param s the text; {@code null} reads {@code null}
     * @return it, safe to echo
     */
    public static String cut(String s) {
        if (s == null) return "null";
        return s.codePointCount(0, s.length()) > CUT ? of(s, CUT) + "..." : of(s);
    }

    /** @return {@code s} with its control characters escaped, whole */
    public static String of(String s) { return of(s, Long.MAX_VALUE); }

    /**
     * @param limit how many code points of {@code s} to keep
     * @return the first {@code limit} code points of {@code s}, control characters escaped
     */
    public static String of(String s, long limit) {
        StringBuilder b = new StringBuilder();
        s.codePoints().limit(limit).forEach(cp -> {
            if (cp < 0x20 || cp == 0x7f) b.append(String.format("\\u%04x", cp)); else b.appendCodePoint(cp);
        });
        return b.toString();
    }
}
