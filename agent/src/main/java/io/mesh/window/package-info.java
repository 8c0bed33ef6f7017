/**
 * The window (docs/design.md, "Window", "Crash recovery", "Cron"). {@code WindowRunner}: the section, window and
 * held nodes ({@code HeldRegistry.publish}, decision 2), the journal, {@code WindowStage}s opened in order and closed
 * in reverse by {@code WindowClosing}; {@code cutShort} on a stop (decision 26). {@code WindowSlot}:
 * {@code max-concurrent}, {@code group}, {@code start-by} (decision 16). {@code WindowJournal},
 * {@code WindowRecovery}: a window's stages on local disk, and finishing one that is not running (failure model
 * rows 1, 20). {@code WindowScheduler}: cron-utils, the next run of each schedule, each cron time fired once
 * (decision 6). {@code HostContext}: what the apply and the window are built from. {@code StepRedaction}: a step's log lines
 * without the secret values it could print (decision 18). {@code WindowEvents}: {@code window.*} for webhooks, posted into the
 * host's outbox, never waited for (decision 34).
 */
package io.mesh.window;
