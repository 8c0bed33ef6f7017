/**
 * The coordinator: the authority for no fleet state, a cache of ZooKeeper (decision 22); any number can run.
 *
 * <ul>
 *   <li>Push: {@code PushWriter} validates, then writes one transaction with the history nodes; rollback and delete
 *       are pushes written the same way (decision 11). {@code PushStatus}, {@code PushCancels}: pending, applied,
 *       deferred, failed, superseded, cancelled, expired (docs/design.md, "Push status"; decisions 24, 30).</li>
 *   <li>HTTP: {@code HttpApi}, Jetty 12 core, JSON (docs/reference/http.md); limits in {@code HttpLimits},
 *       {@code HeadDeadline}, {@code Exchange} (decision 7); credentials {@code BearerToken}, {@code WebhookSecret};
 *       a request refused is a {@code Refusal} (status, field, message) that the stores throw and {@code HttpApi}
 *       answers in one place, {@code {"error"}} with {@code "field"} when it names one;
 *       its OpenAPI document {@code openapi.json} in this package's resources ({@code GET /v1/openapi.json}), written by {@code OpenApiDocument} and
 *       held to the real answers by {@code OpenApiTest}.</li>
 *   <li>Fleet view: {@code FleetStatus}, {@code FleetView}, {@code FleetCache}, {@code NodeSource},
 *       {@code VanishedWindows}: hosts by modules, open windows, slots, locks, pending pushes ({@code /v1/fleet},
 *       {@code /v1/windows}, {@code /v1/locks}), reports and agents from the cache.</li>
 *   <li>The page: {@code Dashboard}, {@code Timeline}, {@code Html} (the escaping both use), {@code AuditSource} and the {@code ui/} resources ({@code mesh.css},
 *       {@code mesh.js}: refresh): {@code GET /} server-rendered; "Last 24 hours" (SPEC.md, "Audit"): each host's and
 *       module's windows, holds, freezes and applies on one UTC axis, violations as marks linking to {@code /v1/audit}
 *       around them, from the {@code AuditSource} given by
 *       {@code HttpApi.auditSource} (none: "audit unavailable"), asked at most once a minute from its own thread, a
 *       page waiting for it at most 2 s (decision 28).</li>
 *   <li>Requests answered by agents: {@code WindowRequestStore} (docs/design.md, "Window requests"), {@code PlanStore}
 *       and {@code ScheduleDiff} (the schedules a push would add, change or remove, answered in {@code POST /v1/plans}'
 *       {@code schedules}; decision 12), {@code AuditStore}, {@code AuditQuery} (each host's ledger slice travels as a plan's answer does, in pages, and the
 *       one checker judges it here; decision 28),
 *       {@code WhyStore} ({@code mesh why}: held node, deferred report, rollout, freezes, slot queue, last apply, today's
 *       audit of the container; {@code WhyReason}).</li>
 *   <li>Rollouts {@code RolloutStore} (start, resume, abort), {@code RolloutFold} (the fold into the node; decision 13); freezes {@code FreezeStore}
 *       (parse, check, write, and the applies under way it names) with {@code FreezeRequest} (decision 14); operator holds {@code HoldStore} (decision 15); host identities
 *       {@code HostCredentials} ({@code mesh-coordinator credentials HOST}: decision 19).</li>
 *   <li>Webhooks (decision 34): {@code Notifier} (the {@code LeaderLatch}, the outbox's cache, one queue per webhook and
 *       module, delivery state, retention), {@code WebhookCall} (one bounded POST), {@code NotifyConfig},
 *       {@code Webhook}, {@code NotifyFormat} ({@code --notify-config}); {@code CoordinatorEvents} (the events of holds
 *       and freezes this coordinator takes; {@code RolloutFold} writes {@code rollout.*} in its own transaction).</li>
 *   <li>{@code CoordinatorMain} ({@code serve}, {@code credentials}), {@code EmbeddedZk}, {@code Metrics};
 *       {@code PrintingCommand} (a command printing to its command line's streams; {@code mesh}'s commands too).</li>
 * </ul>
 */
package io.mesh.coordinator;
