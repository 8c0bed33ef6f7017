package io.mesh.wire;

import java.util.ArrayList;
import java.util.List;

/**
 * Data of {@code /mesh/audits/<audit>/<host>/page-<n>}: one page of a host's ledger slice, at most {@link #MAX_BYTES}
 * of JSON, so that a day's ledger crosses ZooKeeper (whose requests stop at about 1 MiB) in pieces (decision 28).
 *
 * @param page  its number, from 0
 * @param lines its ledger lines, in the slice's order
 */
public record AuditPage(int page, List<LedgerEntry> lines) {
    /** The most bytes of JSON one page holds: 512 KiB. */
    public static final int MAX_BYTES = 512 * 1024;
    /**
     * The most pages one host's answer has (20 MiB of ledger lines): ZooKeeper holds its data in memory on every server,
     * so a slice over this is refused with the fix (a shorter span, one module) rather than written.
     */
    public static final int MAX_PAGES = 40;
    /** Room kept for the page's own JSON ({@code {"page":N,"lines":[...]}}). */
    private static final int ENVELOPE = 64;

    /**
     * Splits a slice into pages of at most {@code maxBytes} of JSON each. A line that alone would not fit one page
     * (never written by mesh: a line is under a kilobyte) travels as a {@code gap} saying so, so that a page never
     * outgrows ZooKeeper and the span is not taken as covered.
     *
     * @param lines    the slice
     * @param maxBytes the most bytes of JSON a page holds, &gt; 1 KiB ({@link #MAX_BYTES} on the wire)
     * @return the pages, numbered from 0; at least one (an empty slice is one empty page)
     */
    public static List<AuditPage> split(List<LedgerEntry> lines, int maxBytes) {
        if (maxBytes <= 1024) throw new IllegalArgumentException("maxBytes must be above 1024; got " + maxBytes);
        List<AuditPage> pages = new ArrayList<>();
        List<LedgerEntry> current = new ArrayList<>();
        long size = ENVELOPE;
        for (LedgerEntry line : lines) {
            LedgerEntry l = line;
            int n = Json.bytes(l).length + 1; // and its comma
            if (n + ENVELOPE > maxBytes) {
                l = LedgerEntry.gap(line.at(), line.end() != null ? line.end() : line.at(),
                        "a ledger line of " + n + " bytes does not fit an audit page of " + maxBytes + " bytes");
                n = Json.bytes(l).length + 1;
            }
            if (size + n > maxBytes && !current.isEmpty()) {
                pages.add(new AuditPage(pages.size(), List.copyOf(current)));
                current.clear();
                size = ENVELOPE;
            }
            current.add(l);
            size += n;
        }
        pages.add(new AuditPage(pages.size(), List.copyOf(current)));
        return pages;
    }

    /**
     * @param pages pages in any order
     * @return their lines, page after page
     * @throws IllegalArgumentException when a page is missing or twice
     */
    public static List<LedgerEntry> join(List<AuditPage> pages) {
        List<AuditPage> sorted = new ArrayList<>(pages);
        sorted.sort(java.util.Comparator.comparingInt(AuditPage::page));
        List<LedgerEntry> out = new ArrayList<>();
        for (int i = 0; i < sorted.size(); i++) {
            if (sorted.get(i).page() != i) throw new IllegalArgumentException("audit page " + i + " is missing (got page " + sorted.get(i).page() + ")");
            if (sorted.get(i).lines() != null) out.addAll(sorted.get(i).lines());
        }
        return out;
    }
}
