package io.mesh.client.compose;

import java.util.ArrayList;
import java.util.List;

/**
 * Splits compose's string form of {@code command} and {@code entrypoint} into words as compose does (go-shellwords,
 * without its environment and backtick expansion): blanks separate words, single quotes keep everything literally,
 * double quotes keep blanks, a backslash outside single quotes takes the next character literally. No shell runs, so an
 * unquoted shell operator ({@code ; & | < >}, a backtick, {@code $(}) would reach the program as a word or cut the
 * command short (go-shellwords stops there): it is refused instead. No library in the build does this split (commons-text's
 * tokenizer knows no backslash escapes), and it is this small.
 */
final class ShellWords {
    private ShellWords() {}

    /**
     * @param line such as {@code redis-server --save "" --appendonly yes}
     * @return its words, such as {@code [redis-server, --save, "", --appendonly, yes]}
     * @throws IllegalArgumentException naming the fix, for an unclosed quote or an unquoted shell operator
     */
    static List<String> split(String line) {
        List<String> words = new ArrayList<>();
        StringBuilder word = new StringBuilder();
        boolean inWord = false;
        char quote = 0;
        for (int i = 0; i < line.length(); i++) {
            char ch = line.charAt(i);
            if (quote == '\'') {
                if (ch == '\'') quote = 0; else word.append(ch);
            } else if (ch == '\\') {
                if (i + 1 == line.length()) throw new IllegalArgumentException("ends in a backslash: remove it, or write the command as a list");
                word.append(line.charAt(++i));
                inWord = true;
            } else if (quote == '"') {
                if (ch == '"') quote = 0; else word.append(ch);
            } else if (ch == '\'' || ch == '"') {
                quote = ch;
                inWord = true;
            } else if (Character.isWhitespace(ch)) {
                if (inWord) words.add(word.toString());
                word.setLength(0);
                inWord = false;
            } else if (";&|<>`".indexOf(ch) >= 0 || (ch == '$' && i + 1 < line.length() && line.charAt(i + 1) == '(')) {
                throw new IllegalArgumentException("has the shell operator '" + (ch == '$' ? "$(" : String.valueOf(ch)) + "', but compose runs no shell: "
                        + "write the command as a list, such as [\"sh\", \"-c\", \"...\"], or quote the character");
            } else {
                word.append(ch);
                inWord = true;
            }
        }
        if (quote != 0) throw new IllegalArgumentException("has an unclosed " + (quote == '"' ? "double" : "single") + " quote: close it, or write the command as a list");
        if (inWord) words.add(word.toString());
        return words;
    }
}
