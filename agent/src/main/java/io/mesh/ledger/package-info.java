/**
 * The host's ledger (decision 28, docs/decisions/0028-the-ledger-and-one-checker.md):
 * {@code <state-dir>/ledger/<start>-<pid>.jsonl}, {@code .jsonl.gz} once closed ({@code LedgerCompression},
 * decision 29): chained JSON lines of mesh containers' Docker events, every changing call of a module section with its
 * cause ({@code CallCause}), held intervals, freezes obeyed, gaps. {@code Ledger} is the writer: one thread per
 * process that never blocks a Docker call. {@code LedgerFiles} reads ({@code LedgerSource}: {@code mesh audit}'s
 * slice) and prunes; {@code EventFollower} follows the engine's events ({@code ledger/cursor}); {@code LedgerKeeper}
 * is the daemon's follower, compressor and pruner, and audits every 30 s with {@code AuditChecker} (wire).
 * {@code DurableFile} replaces a state file whole and durably (the events cursor, the window journal, failed tries).
 */
package io.mesh.ledger;
