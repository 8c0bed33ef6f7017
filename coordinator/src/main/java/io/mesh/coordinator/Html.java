package io.mesh.coordinator;

/**
 * Text made safe for the server-rendered page: what {@link Dashboard} and the {@link Timeline} it draws both escape.
 * Apart from both, so that the timeline needs nothing of the page that holds it.
 */
final class Html {
    private Html() {}

    /** @return the text with {@code & < > " '} escaped for HTML */
    static String esc(String s) {
        if (s == null) return "";
        StringBuilder b = new StringBuilder(s.length());
        for (char ch : s.toCharArray()) {
            switch (ch) {
                case '&' -> b.append("&amp;");
                case '<' -> b.append("&lt;");
                case '>' -> b.append("&gt;");
                case '"' -> b.append("&quot;");
                case '\'' -> b.append("&#39;");
                default -> b.append(ch);
            }
        }
        return b.toString();
    }
}
