package io.mesh.coordinator;

import io.mesh.manifest.Printable;
import java.util.regex.Pattern;

/**
 * What a push's revision may be: what an operator or CI would use (a git sha, a tag, {@code r2}). The coordinator
 * refuses any other, and the client checks it before sending, since it travels in a header ({@code X-Mesh-Revision}),
 * which cannot carry a line break. No logger here: the client loads it.
 */
public final class Revision {
    /** Letters, digits and {@code . _ : / + @ -}, starting with a letter or digit, at most 128 characters. */
    public static final Pattern PATTERN = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._:/+@-]{0,127}");

    private Revision() {}

    /**
     * @param rev a revision, stripped
     * @return why it is not one, naming the fix; {@code null} when it is one
     */
    public static String error(String rev) {
        if (PATTERN.matcher(rev).matches()) return null;
        return "'" + Printable.cut(rev) + "' is not a revision: use letters, digits and . _ : / + @ -, "
                + "starting with a letter or digit, at most 128 characters (such as a git sha or r2)";
    }

}
