package io.mesh.wire;

/**
 * Text shown in an error or a note, with each control character (below U+0020, and U+007F) written as
 * {@code \\uXXXX}: a name holding a newline prints as one line and cannot forge a second one.
 */
public final class Printable {
    private Printable() {}

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
