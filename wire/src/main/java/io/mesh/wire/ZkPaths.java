package io.mesh.wire;

import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.common.PathUtils;

import java.util.Locale;
import java.util.regex.Pattern;

/**
 * The ZooKeeper layout of mesh, in one place (SPEC.md, "ZooKeeper layout").
 *
 * <pre>
 * {root}/desired/{module}            persistent   coordinator  {@link DesiredRecord}
 * {root}/pushes/push-{seq}           persistent   coordinator  {@link PushRecord}
 * {root}/pushes/push-{seq}/cancelled persistent  coordinator  {@link PushCancel} (mesh push cancel)
 * {root}/locks/{module}/{host}       Curator InterProcessMutex; lock children carry {@link LockHolder}
 * {root}/windows/{host}/{module}     ephemeral    window       {@link WindowRecord}
 * {root}/held/{host}/{container}     ephemeral    window       {@link HeldRecord}
 *                                     or persistent, coordinator (mesh hold): {@link HeldRecord} with hold
 * {root}/reports/{host}/{module}     persistent   agent        {@link ApplyReport}
 * {root}/agents/{host}               ephemeral    agent        {@link AgentRecord}
 * {root}/progress/{host}/{module}    ephemeral    agent        {@link ProgressRecord}, while an apply waits (decision 32)
 * {root}/waits/{host}/{module}--{schedule}  ephemeral  window  {@link GateWaitRecord}, while a window waits for its
 *                                     gate (decision 35)
 * {root}/history/{module}/rev-{seq} persistent-sequential  coordinator, in the push's transaction; newest 50 kept
 *                                     {@link HistoryRecord}
 * {root}/requests/{host}/window-{seq} persistent-sequential  coordinator (mesh window run); the agent of {host} runs
 *                                     it and writes the result into it  {@link WindowRequest}
 * {root}/plans/plan-{seq}            persistent   coordinator  {@link PlanRequest} (mesh push --plan)
 * {root}/plans/plan-{seq}/{host}     persistent   coordinator, then the agent of {host}  {@link PlanAnswer}
 * {root}/audits/audit-{seq}         persistent   coordinator  {@link AuditRequest} (mesh audit, mesh why)
 * {root}/audits/audit-{seq}/{host}  persistent   coordinator, then the agent of {host}  {@link AuditAnswer}
 * {root}/audits/audit-{seq}/{host}/page-{n}  persistent  the agent of {host}  {@link AuditPage}
 * {root}/freezes/{module}            persistent   coordinator  {@link FreezeRecord} (mesh freeze MODULE)
 * {root}/freezes/_all                persistent   coordinator  {@link FreezeRecord} (mesh freeze --all)
 * {root}/freeze-events/{name}       persistent   coordinators  the last boundary of freeze {name} announced as an event
 *                                     (freeze.started, freeze.ended), with that freeze's creation zxid (decision 37)
 * {root}/drains/{host}               persistent   coordinator  {@link DrainRecord} (mesh drain HOST); its agent places
 *                                     an operator hold of each of its containers under held/{host}
 * {root}/identities/{host}           persistent   mesh-coordinator credentials  {@code HostIdentity}; readable by the
 *                                     admin identity only (docs/decisions/0019-host-identities.md)
 * {root}/events/{host}/e-{seq}       persistent-sequential  that host's processes  {@link MeshEvent} without its id
 * {root}/events/_coordinators/e-{seq} persistent-sequential  coordinators  {@link MeshEvent} without its id
 *                                     (the webhooks' outbox, decision 34; an event's id is {writer}/e-{seq})
 * {root}/notify/{webhook}/{id}       persistent   the leading coordinator, once that webhook answered 2xx; {@code {}}
 * {root}/leader                      Curator LeaderLatch of the coordinators (who sends the webhooks)
 * </pre>
 *
 * The root defaults to {@code /mesh} (flag {@code --zk-root}). Every node's data is one line of UTF-8 JSON
 * ({@link Json}). Names are validated before they reach a path: module and container names by the manifest
 * rules, host ids by {@link #checkHost(String)}.
 */
public final class ZkPaths {
    /** The default root, {@code /mesh}. */
    public static final String DEFAULT_ROOT = "/mesh";
    /** Prefix of push node names; ZooKeeper's sequence suffix is ten zero-padded digits. */
    public static final String PUSH_PREFIX = "push-";
    /** Prefix of history node names ({@code rev-} and ZooKeeper's ten-digit sequence). */
    public static final String HISTORY_PREFIX = "rev-";
    /** Prefix of window request node names ({@code window-} and ZooKeeper's ten-digit sequence). */
    public static final String WINDOW_REQUEST_PREFIX = "window-";
    /** Prefix of plan node names ({@code plan-} and ten digits, named like a sequential node). */
    public static final String PLAN_PREFIX = "plan-";
    /** Prefix of audit request node names ({@code audit-} and ten digits, named like a sequential node). */
    public static final String AUDIT_PREFIX = "audit-";
    /** Prefix of an audit answer's page nodes ({@code page-} and the page's number). */
    public static final String AUDIT_PAGE_PREFIX = "page-";

    /** Prefix of event node names in the outbox ({@code e-} and ZooKeeper's ten-digit sequence; decision 34). */
    public static final String EVENT_PREFIX = "e-";
    /** The writer name of coordinators' events: {@code /mesh/events/_coordinators} (no host id starts with {@code _}). */
    public static final String COORDINATOR_EVENTS = "_coordinators";

    private final String root;

    /**
     * @param root absolute znode path such as {@code /mesh}; no trailing slash
     * @throws IllegalArgumentException when the root is not an absolute, valid ZooKeeper path
     */
    public ZkPaths(String root) {
        String r = root == null || root.isBlank() ? DEFAULT_ROOT : root.strip();
        if (r.length() > 1 && r.endsWith("/")) r = r.substring(0, r.length() - 1);
        if (!r.startsWith("/") || r.equals("/")) {
            throw new IllegalArgumentException("--zk-root must be an absolute znode path below /, such as /mesh; got '" + root + "'");
        }
        PathUtils.validatePath(r);
        this.root = r;
    }

    /** @return the root, such as {@code /mesh} */
    public String root() { return root; }

    /** @return {@code {root}/desired} */
    public String desired() { return root + "/desired"; }
    /** @return {@code {root}/desired/{module}} */
    public String desired(String module) { return ZKPaths.makePath(desired(), module); }

    /** @return {@code {root}/pushes} */
    public String pushes() { return root + "/pushes"; }
    /** @return {@code {root}/pushes/{push}}, where push is such as {@code push-0000000002} */
    public String push(String push) { return ZKPaths.makePath(pushes(), push); }
    /** @return {@code {root}/pushes/{push}/cancelled}: the push's cancel ({@link PushCancel}), when it was cancelled */
    public String pushCancel(String push) { return ZKPaths.makePath(pushes(), push, "cancelled"); }

    /** @return {@code {root}/locks} */
    public String locks() { return root + "/locks"; }
    /** @return {@code {root}/locks/{module}/{host}}: the module lock's {@code InterProcessMutex} path on one host */
    public String lock(String module, String host) { return ZKPaths.makePath(locks(), module, host); }

    /** @return {@code {root}/windows} */
    public String windows() { return root + "/windows"; }
    /** @return {@code {root}/windows/{host}} */
    public String windows(String host) { return ZKPaths.makePath(windows(), host); }
    /** @return {@code {root}/windows/{host}/{module}} */
    public String window(String host, String module) { return ZKPaths.makePath(windows(), host, module); }

    /** @return {@code {root}/held} */
    public String held() { return root + "/held"; }
    /** @return {@code {root}/held/{host}} */
    public String held(String host) { return ZKPaths.makePath(held(), host); }
    /** @return {@code {root}/held/{host}/{container}}, container being the Docker name {@code <module>-<name>} */
    public String held(String host, String container) { return ZKPaths.makePath(held(), host, container); }

    /** @return {@code {root}/reports} */
    public String reports() { return root + "/reports"; }
    /** @return {@code {root}/reports/{host}} */
    public String reports(String host) { return ZKPaths.makePath(reports(), host); }
    /** @return {@code {root}/reports/{host}/{module}} */
    public String report(String host, String module) { return ZKPaths.makePath(reports(), host, module); }

    /** @return {@code {root}/agents} */
    public String agents() { return root + "/agents"; }
    /** @return {@code {root}/agents/{host}} */
    public String agent(String host) { return ZKPaths.makePath(agents(), host); }

    /** @return {@code {root}/progress} */
    public String progress() { return root + "/progress"; }
    /** @return {@code {root}/progress/{host}}: made by that host's agent, as {@code {root}/agents/{host}} is */
    public String progress(String host) { return ZKPaths.makePath(progress(), host); }
    /** @return {@code {root}/progress/{host}/{module}}: an apply's progress while it is not done (decision 32) */
    public String progress(String host, String module) { return ZKPaths.makePath(progress(), host, module); }

    /** @return {@code {root}/waits}: windows waiting for their gate, by host */
    public String waits() { return root + "/waits"; }
    /** @return {@code {root}/waits/{host}}: made by that host's processes, as {@code {root}/progress/{host}} is */
    public String waits(String host) { return ZKPaths.makePath(waits(), checkHost(host)); }
    /** @return {@code {root}/waits/{host}/{module}--{schedule}}: a window of that schedule waiting for its gate (decision 35) */
    public String gateWait(String host, String module, String schedule) { return ZKPaths.makePath(waits(host), module + "--" + schedule); }

    /** @return {@code {root}/history} */
    public String history() { return root + "/history"; }
    /** @return {@code {root}/history/{module}}: the parent of the module's history nodes */
    public String history(String module) { return ZKPaths.makePath(history(), module); }
    /**
     * @param module module name
     * @param node   a history node name such as {@code rev-0000000003}
     * @return {@code {root}/history/{module}/{node}}
     */
    public String history(String module, String node) { return ZKPaths.makePath(history(), module, node); }
    /** @return the prefix a persistent-sequential create of a history node uses: {@code {root}/history/{module}/rev-} */
    public String historyPrefix(String module) { return history(module) + "/" + HISTORY_PREFIX; }

    /**
     * @param node a history node name such as {@code rev-0000000003}
     * @return its sequence number, or -1 when the name is not a history node's
     */
    public static long historySeq(String node) { return seq(node, HISTORY_PREFIX); }

    /** @return {@code {root}/requests} */
    public String requests() { return root + "/requests"; }
    /** @return {@code {root}/requests/{host}}: the requests the agent of that host watches */
    public String requests(String host) { return ZKPaths.makePath(requests(), host); }
    /**
     * @param host    host id
     * @param request a request node name such as {@code window-0000000003}
     * @return {@code {root}/requests/{host}/{request}}
     */
    public String request(String host, String request) { return ZKPaths.makePath(requests(), host, request); }
    /** @return the prefix a persistent-sequential create of a window request uses: {@code {root}/requests/{host}/window-} */
    public String windowRequestPrefix(String host) { return requests(host) + "/" + WINDOW_REQUEST_PREFIX; }

    /** @return {@code {root}/plans} */
    public String plans() { return root + "/plans"; }
    /** @return {@code {root}/plans/{plan}}, where plan is such as {@code plan-0000000003}: the plan request */
    public String plan(String plan) { return ZKPaths.makePath(plans(), plan); }
    /** @return {@code {root}/plans/{plan}/{host}}: the plan's node for one host, pending until its agent answers */
    public String plan(String plan, String host) { return ZKPaths.makePath(plans(), plan, host); }

    /** @return {@code {root}/audits} */
    public String audits() { return root + "/audits"; }
    /** @return {@code {root}/audits/{audit}}, where audit is such as {@code audit-0000000003}: the request */
    public String audit(String audit) { return ZKPaths.makePath(audits(), audit); }
    /** @return {@code {root}/audits/{audit}/{host}}: the request's node for one host, pending until its agent answers */
    public String audit(String audit, String host) { return ZKPaths.makePath(audits(), audit, host); }
    /** @return {@code {root}/audits/{audit}/{host}/page-{n}}: one page of that host's answer ({@link AuditPage}) */
    public String auditPage(String audit, String host, int page) { return ZKPaths.makePath(audit(audit, host), AUDIT_PAGE_PREFIX + page); }

    /**
     * @param seq sequence number, &gt;= 0
     * @return such as {@code audit-0000000003}
     */
    public static String auditName(long seq) { return sequential(AUDIT_PREFIX, seq); }

    /**
     * @param audit an audit node name such as {@code audit-0000000003}
     * @return its sequence number, or -1 when the name is not an audit name
     */
    public static long auditSeq(String audit) {
        return audit == null || audit.length() != AUDIT_PREFIX.length() + 10 ? -1 : seq(audit, AUDIT_PREFIX);
    }

    /** @return {@code {root}/rollouts} */
    public String rollouts() { return root + "/rollouts"; }
    /** @return {@code {root}/rollouts/{module}}: the module's rollout ({@link RolloutRecord}) */
    public String rollout(String module) { return ZKPaths.makePath(rollouts(), module); }
    /** @return {@code {root}/rollouts/{module}/{host}}: one host's progress in it ({@link RolloutHostRecord}) */
    public String rolloutHost(String module, String host) { return ZKPaths.makePath(rollout(module), host); }

    /** @return {@code {root}/freezes} */
    public String freezes() { return root + "/freezes"; }
    /** @return {@code {root}/freezes/{module}}: the module's freeze ({@link FreezeRecord}) */
    public String freeze(String module) { return ZKPaths.makePath(freezes(), module); }
    /** @return {@code {root}/freeze-events/{name}}: the last boundary of that freeze node the webhooks' events announced */
    public String freezeEvents(String name) { return ZKPaths.makePath(root + "/freeze-events", name); }

    /** @return {@code {root}/drains} */
    public String drains() { return root + "/drains"; }

    /** @return {@code {root}/drains/{host}}: the host's drain ({@link DrainRecord}) */
    public String drain(String host) { return ZKPaths.makePath(drains(), checkHost(host)); }

    /** @return {@code {root}/freezes/_all}: the freeze of every module ({@link FreezeRecord#ALL}) */
    public String freezeAll() { return freeze(FreezeRecord.ALL); }

    /** @return {@code {root}/identities} */
    public String identities() { return root + "/identities"; }
    /** @return {@code {root}/identities/{host}}: the host's ZooKeeper identity ({@code HostIdentity}) */
    public String identity(String host) { return ZKPaths.makePath(identities(), host); }

    /** @return {@code {root}/events}: the webhooks' outbox (docs/decisions/0034-webhooks-from-an-outbox.md) */
    public String events() { return root + "/events"; }
    /**
     * @param writer a host id, or {@link #COORDINATOR_EVENTS}
     * @return {@code {root}/events/{writer}}: the parent of that writer's events, writable by that host alone (decision 19)
     */
    public String events(String writer) { return ZKPaths.makePath(events(), writer); }
    /** @return the prefix a persistent-sequential create of an event uses: {@code {root}/events/{writer}/e-} */
    public String eventPrefix(String writer) { return events(writer) + "/" + EVENT_PREFIX; }
    /**
     * @param id an event's id, {@code {writer}/e-{seq}}
     * @return {@code {root}/events/{writer}/e-{seq}}
     */
    public String event(String id) { return events() + "/" + id; }
    /**
     * @param eventPath an event node's path, {@code {root}/events/{writer}/e-{seq}}
     * @return its id, {@code {writer}/e-{seq}}; {@code null} when the path is not an event's
     */
    public String eventId(String eventPath) {
        String prefix = events() + "/";
        if (eventPath == null || !eventPath.startsWith(prefix)) return null;
        String id = eventPath.substring(prefix.length());
        int slash = id.indexOf('/');
        if (slash <= 0 || slash != id.lastIndexOf('/') || !id.startsWith(EVENT_PREFIX, slash + 1)) return null;
        return id;
    }

    /** @return {@code {root}/notify}: webhooks' delivery state */
    public String notifications() { return root + "/notify"; }
    /** @return {@code {root}/notify/{webhook}} */
    public String notifications(String webhook) { return ZKPaths.makePath(notifications(), webhook); }
    /**
     * @param webhook a webhook's name
     * @param id      an event's id, {@code {writer}/e-{seq}}
     * @return {@code {root}/notify/{webhook}/{writer}/e-{seq}}: exists once that webhook answered 2xx for that event
     */
    public String delivered(String webhook, String id) { return notifications(webhook) + "/" + id; }

    /** @return {@code {root}/leader}: the coordinators' {@code LeaderLatch}; its leader sends the webhooks */
    public String leader() { return root + "/leader"; }

    /** @return {@code {root}/slots} */
    public String slots() { return root + "/slots"; }
    /** @return {@code {root}/slots/rollout-{module}}: the {@code InterProcessSemaphoreV2} of a module's rollout */
    public String rolloutSlots(String module) { return ZKPaths.makePath(slots(), "rollout-" + module); }
    /** @return {@code {root}/slots/window-{module}-{schedule}}: the slot of a schedule's {@code max-concurrent} */
    public String windowSlots(String module, String schedule) { return ZKPaths.makePath(slots(), "window-" + module + "-" + schedule); }
    /** @return {@code {root}/slots/group-{group}}: the slot every schedule naming the group shares */
    public String groupSlots(String group) { return ZKPaths.makePath(slots(), "group-" + group); }
    /** @return {@code {slot}/queue}: one ephemeral sequential node per window waiting for the slot, its {@code SlotRecord} */
    public static String slotQueue(String slot) { return ZKPaths.makePath(slot, "queue"); }
    /**
     * @return {@code {slot}/claims}: one persistent node per running window, its {@code SlotRecord}, which outlives a
     *         lost session until the window gives it back or its {@code until} passes (decision 16)
     */
    public static String slotClaims(String slot) { return ZKPaths.makePath(slot, "claims"); }
    /** @return {@code {slot}/leases}: Curator's {@code InterProcessSemaphoreV2} lease nodes */
    public static String slotLeases(String slot) { return ZKPaths.makePath(slot, "leases"); }

    /**
     * @param seq sequence number, &gt;= 0
     * @return such as {@code plan-0000000003} ({@code %010d}, as ZooKeeper names sequential nodes)
     */
    public static String planName(long seq) { return sequential(PLAN_PREFIX, seq); }

    /**
     * @param plan a plan node name such as {@code plan-0000000003}
     * @return its sequence number, or -1 when the name is not a plan name
     */
    public static long planSeq(String plan) {
        return plan == null || plan.length() != PLAN_PREFIX.length() + 10 ? -1 : seq(plan, PLAN_PREFIX);
    }

    /**
     * Formats a push node name from its sequence number, as ZooKeeper names sequential nodes
     * ({@code %010d}, the parent's cversion at creation).
     *
     * @param seq sequence number, &gt;= 0
     * @return such as {@code push-0000000002}
     */
    public static String pushName(long seq) { return sequential(PUSH_PREFIX, seq); }

    /**
     * @param push a push node name such as {@code push-0000000002}
     * @return its sequence number, or -1 when the name is not a push name
     */
    public static long pushSeq(String push) { return seq(push, PUSH_PREFIX); }

    /** Push node names: {@code push-} and ten digits, as {@link #pushName} makes them. */
    public static final Pattern PUSH_NAME = Pattern.compile("push-\\d{10}");

    /** @return {@code prefix} and {@code seq} as ZooKeeper names a sequential node: ten digits, zero-padded */
    private static String sequential(String prefix, long seq) { return prefix + String.format(Locale.ROOT, "%010d", seq); }

    /** @return the number after {@code prefix} in {@code name}; -1 when the name does not start with it or no number follows */
    private static long seq(String name, String prefix) {
        if (name == null || !name.startsWith(prefix)) return -1;
        try { return Long.parseLong(name.substring(prefix.length())); } catch (NumberFormatException e) { return -1; }
    }

    /** Host ids: same shape as a DNS label plus dots, so that they are safe as a znode name. */
    private static final Pattern HOST = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,62}");

    /**
     * @param host a host id such as {@code host-a}
     * @return the host id
     * @throws IllegalArgumentException naming the rule when the id is not a safe znode name
     */
    public static String checkHost(String host) {
        if (host == null || !HOST.matcher(host).matches()) {
            throw new IllegalArgumentException("--host must match [A-Za-z0-9][A-Za-z0-9._-]{0,62}, such as host-a; got '" + host + "'");
        }
        return host;
    }
}
