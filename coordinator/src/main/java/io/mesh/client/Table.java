package io.mesh.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;

import static io.mesh.client.ClientText.pad;

/** Rows under a header, printed in columns as wide as their widest cell, two spaces apart. */
final class Table {
    private final List<String[]> rows = new ArrayList<>();

    Table(String... header) { rows.add(header); }

    /** @return a table of the rows {@code add} makes of each element of {@code array}, under {@code header} */
    static Table of(JsonNode array, BiConsumer<Table, JsonNode> add, String... header) {
        Table table = new Table(header);
        for (JsonNode element : array) add.accept(table, element);
        return table;
    }

    /** Adds a row of as many cells as the header has. */
    void add(String... row) { rows.add(row); }

    /** Prints the table, or the line {@code none} when no row was added. */
    void print(PrintWriter out, String none) {
        if (rows.size() == 1) {
            out.println(none);
            return;
        }
        int cols = rows.get(0).length;
        int[] w = new int[cols];
        for (String[] row : rows) for (int i = 0; i < cols; i++) w[i] = Math.max(w[i], row[i].length());
        for (String[] row : rows) {
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < cols; i++) {
                b.append(i == cols - 1 ? row[i] : pad(row[i], w[i])).append(i == cols - 1 ? "" : "  ");
            }
            out.println(b.toString().stripTrailing());
        }
    }
}
