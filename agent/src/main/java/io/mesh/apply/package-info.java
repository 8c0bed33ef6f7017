/**
 * The apply (docs/design.md, "Apply"), built like the window from the host's {@code HostContext}
 * ({@code io.mesh.window}: store, engine, host id, process, journal, policy, secrets dir).
 *
 * <ul>
 *   <li>{@code Applier}: the section, or {@code deferred} (decision 3); recovery of a journalled window; the blip
 *       rule ({@code Applier.BLIP}, failure model row 23); {@code tryAgainNow} after a thaw, release or expiry.</li>
 *   <li>{@code ApplyPlanner} (pure: desired spec, observed containers and held names to per-container actions and
 *       reasons), {@code DependencyOrder} ({@code depends-on}), {@code SpecDiff} (the spec hash and the reasons field
 *       by field), {@code PlannedAction}.</li>
 *   <li>{@code ApplyExecution}: the plan's Docker calls, on the shared on-demand pool {@code CALLS} (decision 23),
 *       image pulls once per image ({@code ApplyExecution.Images}, decision 20), the policy check per apply.</li>
 *   <li>{@code ApplyAdmission}: the one question an apply asks its gates under the lock, a freeze (decision 14) then
 *       the rollout (decision 13). {@code LockedRead}: under the lock, held nodes, freezes and window node in one
 *       round trip.
 *       {@code NoOpReconcile}: nothing to do, no lock, no write (decision 4). {@code ReportWriter}: the report with
 *       the lock's release, and its log line (decision 5). {@code FailedTries}: a push's tries that were not ready, on
 *       local disk, and their back-off (decision 10). {@code ModuleNetworks}: created before the plan, recreated in
 *       place when changed, removed after it when unused, never adopted when another's (decision 31).
 *       {@code MissingHostPaths} (decision 17). {@code DryRun}: a plan's answer (decision 12).
 *       {@code ApplyProgress}, {@code ProgressNode}: what an apply not done yet waits for, rate-limited, in its
 *       ephemeral progress node (decision 32).</li>
 * </ul>
 */
package io.mesh.apply;
