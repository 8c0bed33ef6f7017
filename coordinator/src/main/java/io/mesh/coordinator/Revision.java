package io.mesh.coordinator;

import java.util.regex.Pattern;

/**
 * What a push's revision may be: what an operator or CI would use (a git sha, a tag, {@code r2}). The coordinator
 * refuses any other, and the client checks it before sending, since it travels in a header ({@code X-Mesh-Revision}),
 * which cannot carry a line break. No logger here: the client loads it.
 */
public final class Revision {
    /** Letters, digits and {@code . _ : / + @ -}, starting with a letter or digit, at most 128 characters. */
    public static final Pattern PATTERN = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._:/+@-]{0,127}");
    /** Of a revision shown in an error, at most this many characters. */
    private static final int SHOWN = 60;

    private Revision() {}

    /**
     * @param rev a revision, stripped
     * @return why it is not one, naming the fix; {@code null} when it is one
     */
    public static String error(String rev) {
        if (PATTERN.matcher(rev).matches()) return null;
        return "'" + shown(rev) + "' is not a revision: use letters, digits and . _ : / + @ -, "
                + "starting with a letter or digit, at most 128 characters (such as a git sha or r2)";
    }

    /**
     * @param value a refused value of a request (a revision, a source, a push id, a module name)
     * @return it as an error shows it: control characters as {@code ?}, at most {@value #SHOWN} characters then {@code ...}
     */
    static String shown(String value) {
        String printable = value.codePoints().limit(SHOWN)
                .collect(StringBuilder::new, (b, cp) -> { if (cp < 0x20 || cp == 0x7f) b.append('?'); else b.appendCodePoint(cp); }, StringBuilder::append)
                .toString();
        return value.length() > SHOWN ? printable + "..." : printable;
    }
}
