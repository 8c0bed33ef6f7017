package io.mesh.coordinator;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.SerializationConfig;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.introspect.AnnotatedMember;
import com.fasterxml.jackson.databind.introspect.BeanPropertyDefinition;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mesh.manifest.ManifestError;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.HistoryRecord;
import io.mesh.wire.Json;
import io.mesh.wire.PushRecord;
import io.mesh.wire.RolloutRecord;
import io.mesh.wire.WindowRecord;
import io.mesh.wire.WindowRequest;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Writes the coordinator's OpenAPI 3.1 document, {@value #RESOURCE} in the coordinator's resources, served at
 * {@code GET /v1/openapi.json}: the paths as {@link HttpApi}'s javadoc and code answer them, and a schema for every record
 * an answer serialises, derived from the record by Jackson's own introspection of {@link Json#MAPPER} (property names,
 * {@code @JsonInclude}, {@code @JsonValue} enums), so that no field is guessed. {@code OpenApiTest} fails when the
 * committed file differs from what this writes; run {@code deploy/dev/reference.sh} to write it again.
 */
final class OpenApiDocument {
    /** Where the document is, under the coordinator's resources (and {@code HttpApi}'s class path). */
    static final String RESOURCE = "src/main/resources/io/mesh/coordinator/openapi.json";

    private static final JsonNodeFactory F = JsonNodeFactory.instance;
    private static final SerializationConfig CONFIG = Json.MAPPER.getSerializationConfig();

    private final ObjectNode doc = F.objectNode();
    private final ObjectNode paths = F.objectNode();
    /** Component name to schema; filled as {@link #ref} meets records. */
    private final Map<String, ObjectNode> schemas = new TreeMap<>();
    private final Map<String, Class<?>> named = new TreeMap<>();

    /** Writes the document to {@code args[0]}, or {@value #RESOURCE} from the coordinator module's directory. */
    public static void main(String[] args) throws IOException {
        Path out = Path.of(args.length > 0 ? args[0] : RESOURCE);
        Files.writeString(out, generate(), StandardCharsets.UTF_8);
        System.out.println("wrote " + out);
    }

    /** @return the document, pretty-printed, ending with a newline */
    static String generate() throws IOException {
        return Json.MAPPER.writer().with(SerializationFeature.INDENT_OUTPUT).writeValueAsString(new OpenApiDocument().build())
                .replace("\r\n", "\n") + "\n";
    }

    private ObjectNode build() {
        doc.put("openapi", "3.1.0");
        ObjectNode info = doc.putObject("info");
        info.put("title", "mesh coordinator HTTP API");
        info.put("version", "v1");
        info.put("description", "What the coordinator answers (HttpApi). JSON in and out; every error is {\"error\": \"...\"}, "
                + "or {\"error\", \"field\"} naming the field at fault, or {\"errors\": [...]} for an invalid manifest or audit query. "
                + "Writes take the bearer token (Authorization: Bearer <token>) when the coordinator has --token-file; pushes and "
                + "plans also take X-Hub-Signature-256 with --webhook-secret-file. A known path with another method is 405 "
                + "(with Allow); any other path is 404. Any request may be answered 503 {\"error\"} when ZooKeeper is unavailable, "
                + "or 500 {\"error\"} for an internal error. Reference: docs/reference/http.md.");
        ObjectNode sec = doc.putObject("components").putObject("securitySchemes");
        sec.putObject("bearer").put("type", "http").put("scheme", "bearer");
        sec.putObject("webhook").put("type", "apiKey").put("in", "header").put("name", WebhookSecret.HEADER)
                .put("description", "sha256=<HMAC-SHA256 of the body with the webhook secret> (pushes and plans only)");
        commonSchemas();
        doc.set("paths", paths);
        endpoints();
        ObjectNode comp = (ObjectNode) doc.get("components");
        ObjectNode s = comp.putObject("schemas");
        schemas.forEach(s::set);
        return doc;
    }

    // ---- the paths, as HttpApi routes them ----

    private void endpoints() {
        ObjectNode manifestBody = F.objectNode();
        manifestBody.putObject("content").putObject("application/yaml").putObject("schema").put("type", "string")
                .put("description", "manifest YAML, one or more documents (docs/reference/manifest.md), UTF-8");
        manifestBody.put("required", true);

        ObjectNode o = op("post", "/v1/pushes", "Push manifests",
                "Writes the modules' desired nodes and a push record in one ZooKeeper transaction (at most --max-push-bytes).");
        header(o, HttpApi.REVISION_HEADER, "the push's revision (default: one derived from the content)");
        header(o, HttpApi.SOURCE_HEADER, "where the push came from, such as a commit id: its source");
        header(o, "X-Mesh-User", "who asks, a claim recorded beside the token's name");
        query(o, "force", bool(), "send fields some targeted host's agent does not know anyway (docs/decisions/0041-upgrades.md)");
        o.set("requestBody", manifestBody.deepCopy());
        pushSecurity(o);
        ObjectNode accepted = obj(props("push", str(), "revision", str(), "modules", arr(str()), "hosts", arr(str())),
                "push", "revision", "modules", "hosts");
        ((ObjectNode) accepted.get("properties")).set("warnings", arr(str()).put("description", "one per named host without an agent"));
        resp(o, 202, "accepted: written to ZooKeeper", accepted);
        resp(o, 400, "invalid manifest, or a field some targeted agent's version does not know (without force): nothing written", named("ManifestErrors"));
        authErrors(o);
        resp(o, 408, "the body did not arrive within the read timeout", named("Error"));
        resp(o, 409, "racing writers won every attempt", named("Error"));
        resp(o, 413, "the body (or the transaction it makes) is over the limit", named("TooLarge"));
        resp(o, 503, "ZooKeeper is unavailable", named("Error"));

        o = op("get", "/v1/pushes", "List pushes", "Newest first.");
        query(o, "limit", F.objectNode().put("type", "integer").put("minimum", 1).put("maximum", HttpApi.MAX_LIST).put("default", HttpApi.DEFAULT_LIST),
                "at most this many (1 to " + HttpApi.MAX_LIST + ")");
        resp(o, 200, "the pushes", obj(props("pushes", arr(ref(PushRecord.class))), "pushes"));
        resp(o, 400, "limit is not a number", named("Error"));

        o = op("get", "/v1/pushes/{push}", "One push everywhere", "Each targeted host's outcome of the push.");
        pathParam(o, "push", "such as push-0000000002");
        resp(o, 200, "the push", ref(PushStatus.View.class));
        resp(o, 404, "no such push", named("Error"));

        o = op("post", "/v1/pushes/{push}/cancel", "Cancel a push",
                "Its pending, deferred and waiting targets read cancelled; the desired state is not changed (docs/decisions/0030-cancel-and-expire-pushes.md).");
        bearer(o);
        pathParam(o, "push", "such as push-0000000002");
        resp(o, 200, "the cancel (already: it was cancelled before)", obj(props("cancelled", ref(io.mesh.wire.PushCancel.class), "already", bool()),
                "cancelled", "already"));
        authErrors(o);
        resp(o, 404, "no such push", named("FieldError"));
        resp(o, 409, "nothing left to cancel: every target settled", named("FieldError"));

        o = op("get", "/v1/held", "Held containers", "Window holds, open windows, operator holds (each with whether it expired), drains, then the "
                + "window each host without an agent was running when it went, as last known.");
        resp(o, 200, "held containers", obj(props("held", arr(ref(HeldRecord.class)), "holds", arr(ref(HttpApi.OperatorHoldView.class)),
                "windows", arr(ref(WindowRecord.class)), "drains", arr(ref(DrainStore.Drain.class)), "offline", arr(obj(props("host", str(), "module", str(),
                        "lastKnown", ref(FleetStatus.LastKnownWindow.class)), "host", "module", "lastKnown"))), "held", "holds", "windows", "drains", "offline"));

        o = op("post", "/v1/holds", "Place an operator hold", "docs/decisions/0015-operator-holds.md; in force once the host's agent confirms it.");
        bearer(o);
        jsonBody(o, obj(props("host", str(), "container", str().put("description", "the Docker name, <module>-<name>"),
                "reason", str().put("description", "one line, at most 500 characters"),
                "for", str().put("description", "a duration such as 2h (at most 366 days); default: until released"),
                "stop", F.objectNode().put("type", "boolean").put("description", "stop the container while held")),
                "host", "container", "reason"), true);
        resp(o, 201, "the held node written", ref(HeldRecord.class));
        resp(o, 400, "a field at fault, nothing written", named("FieldError"));
        authErrors(o);
        resp(o, 404, "unknown host or container", named("FieldError"));
        resp(o, 409, "a window or another operator holds the container", named("FieldError"));
        smallBody(o, HttpApi.MAX_REQUEST_BODY);

        o = op("get", "/v1/holds/{host}/{container}", "One operator hold", "mesh hold follows it until hold.confirmed is set.");
        bearer(o);
        pathParam(o, "host", "such as host-a");
        pathParam(o, "container", "the Docker name, <module>-<name>");
        ObjectNode holdView = extended(HeldRecord.class, "HoldView", props("agent", bool().put("description", "the host's agent node exists"),
                "expired", bool().put("description", "its until has passed")), "agent", "expired");
        resp(o, 200, "the hold", holdView);
        resp(o, 400, "a bad host or container name", named("FieldError"));
        authErrors(o);
        resp(o, 404, "no operator hold there", named("FieldError"));

        o = op("delete", "/v1/holds/{host}/{container}", "Release an operator hold",
                "With stale=true (an admin's token, --admin), removes a held node nothing owns instead.");
        bearer(o);
        pathParam(o, "host", "such as host-a");
        pathParam(o, "container", "the Docker name, <module>-<name>");
        query(o, "stale", F.objectNode().put("type", "boolean"), "remove a held node nothing owns (admin only)");
        ObjectNode released = obj(props("released", ref(HeldRecord.class)), "released");
        ((ObjectNode) released.get("properties")).set("stale", F.objectNode().put("const", true));
        resp(o, 200, "released", released);
        resp(o, 400, "a bad host name", named("FieldError"));
        authErrors(o);
        resp(o, 404, "no (operator) hold there", named("FieldError"));
        resp(o, 409, "a window's hold, an operator's (stale=true), or a live session's node", named("FieldError"));

        o = op("get", "/v1/hosts", "Hosts", "Every host with its agent and its modules' last reports.");
        resp(o, 200, "hosts", obj(props("hosts", arr(ref(FleetView.Host.class))), "hosts"));

        o = op("get", "/healthz", "Health", "Whether the coordinator's ZooKeeper session is connected.");
        ObjectNode health = obj(props("status", enumOf("ok", "unavailable"), "zookeeper", enumOf("connected", "disconnected")), "status", "zookeeper");
        resp(o, 200, "connected", health);
        resp(o, 503, "ZooKeeper is not connected", health.deepCopy());

        o = op("get", "/metrics", "Prometheus metrics", "docs/reference/metrics.md.");
        text(resp(o, 200, "Prometheus text exposition format 0.0.4", null), "text/plain");

        o = op("get", "/v1/openapi.json", "This document", "The OpenAPI document of this API.");
        resp(o, 200, "the document", F.objectNode().put("type", "object").set("required", F.arrayNode().add("openapi").add("paths")));

        o = op("get", "/v1/fleet", "The fleet", "Hosts x modules, open windows, held containers, pending pushes, freezes.");
        resp(o, 200, "the fleet", ref(FleetStatus.Fleet.class));

        o = op("get", "/v1/windows", "Open windows and slots", "Open windows with when each should end and the push waiting on it; fleet-wide slots with who runs, "
                + "who waits and which hosts of a group are down for another cause; windows waiting for their gate.");
        resp(o, 200, "windows", obj(props("windows", arr(ref(FleetStatus.OpenWindow.class)), "slots", arr(ref(FleetStatus.Slot.class)),
                "gates", arr(ref(io.mesh.wire.GateWaitRecord.class))), "windows", "slots", "gates"));

        o = op("get", "/v1/locks", "Module locks", "Who holds and who waits for each module lock.");
        resp(o, 200, "locks", obj(props("locks", arr(ref(FleetStatus.Lock.class))), "locks"));

        o = op("post", "/v1/hosts/{host}/windows", "Run a window now", "Asks that host's agent to run a window now (WindowRequestStore).");
        bearer(o);
        pathParam(o, "host", "such as host-a");
        header(o, "X-Mesh-User", "who asks, a claim recorded beside the token's name");
        jsonBody(o, obj(props("module", str(), "schedule", str()), "module", "schedule"), true);
        resp(o, 202, "the request, written", obj(props("request", str(), "host", str(), "path", str().put("description", "its znode")),
                "request", "host", "path"));
        resp(o, 400, "a module, schedule or host that does not fit, or a body that is not JSON", named("Error"));
        authErrors(o);
        resp(o, 409, "the host has no agent", named("Error"));
        smallBody(o, HttpApi.MAX_REQUEST_BODY);

        o = op("get", "/v1/hosts/{host}/windows/{request}", "A window request", "The request and, once the agent ran it, its result.");
        pathParam(o, "host", "such as host-a");
        pathParam(o, "request", "such as request-0000000001");
        resp(o, 200, "the request", ref(WindowRequest.class));
        resp(o, 404, "done and deleted, or never made", named("Error"));

        o = op("delete", "/v1/hosts/{host}/windows/{request}", "Delete a window request", "Once read, or to cancel it before it runs.");
        bearer(o);
        pathParam(o, "host", "such as host-a");
        pathParam(o, "request", "such as request-0000000001");
        resp(o, 200, "deleted", obj(props("deleted", str().put("description", "its znode")), "deleted"));
        authErrors(o);
        resp(o, 404, "no such request", named("Error"));

        o = op("get", "/v1/modules/{module}/history", "A module's pushes", "Newest first, at most " + HistoryRecord.KEPT + ".");
        pathParam(o, "module", "such as store");
        resp(o, 200, "the history", obj(props("module", str(), "history", arr(ref(HistoryRecord.class))), "module", "history"));
        resp(o, 404, "a module never pushed", named("Error"));

        o = op("post", "/v1/modules/{module}/rollback", "Roll back a module",
                "Pushes that push's spec again (default: the revision before the current one); its push record carries rollbackOf.");
        bearer(o);
        pathParam(o, "module", "such as store");
        jsonBody(o, obj(props("to", F.objectNode().set("type", F.arrayNode().add("string").add("null")))), false);
        ObjectNode rolledBack = accepted.deepCopy();
        ((ObjectNode) rolledBack.get("properties")).set("rollbackOf", str());
        ((ArrayNode) rolledBack.get("required")).add("rollbackOf");
        resp(o, 202, "accepted", rolledBack);
        resp(o, 400, "a bad to, nothing to roll back to ({error, field}), or a spec no longer valid ({errors})",
                F.objectNode().set("oneOf", F.arrayNode().add(named("FieldError")).add(named("ManifestErrors"))));
        authErrors(o);
        resp(o, 404, "an unknown module, or a to not in its history", named("FieldError"));
        resp(o, 409, "racing writers won every attempt", named("Error"));
        smallBody(o, HttpApi.MAX_ROLLBACK_BODY);

        o = op("delete", "/v1/modules/{module}", "Delete a module", "Removes the module from every host (a tombstone desired node), recorded like a push.");
        bearer(o);
        pathParam(o, "module", "such as store");
        header(o, HttpApi.REVISION_HEADER, "the delete's revision");
        resp(o, 202, "accepted", accepted.deepCopy());
        authErrors(o);
        resp(o, 404, "no desired node, or deleted already", named("FieldError"));
        resp(o, 409, "racing writers won every attempt", named("Error"));

        o = op("post", "/v1/plans", "Plan a push", "Validated as a push, then planned by each targeted host's agent, which changes nothing (docs/decisions/0012-plans.md).");
        header(o, HttpApi.REVISION_HEADER, "the revision the push would have");
        o.set("requestBody", manifestBody.deepCopy());
        pushSecurity(o);
        resp(o, 202, "the plan, written", obj(props("plan", str(), "revision", str(), "modules", arr(str()), "hosts", arr(str()),
                "noAgent", arr(str()).put("description", "hosts asked that have no agent"), "path", str().put("description", "its znode"),
                "schedules", arr(ref(ScheduleDiff.Change.class)).put("description", "schedules the push would add, change or remove")),
                "plan", "revision", "modules", "hosts", "noAgent", "path"));
        resp(o, 400, "invalid manifest, nothing written", named("ManifestErrors"));
        authErrors(o);
        resp(o, 408, "the body did not arrive within the read timeout", named("Error"));
        resp(o, 413, "the body is over the limit", named("TooLarge"));

        o = op("get", "/v1/plans/{plan}", "A plan", "Per host: pending, no-agent, the agent's answer, or failed.");
        pathParam(o, "plan", "such as plan-0000000003");
        resp(o, 200, "the plan", ref(PlanStore.View.class));
        resp(o, 404, "unknown, or trimmed", named("Error"));

        o = op("get", "/v1/rollouts/{module}", "A module's rollout", "As its hosts' children say (docs/decisions/0013-rollouts.md).");
        pathParam(o, "module", "such as store");
        resp(o, 200, "the rollout", ref(RolloutRecord.class));
        resp(o, 404, "the module has no rollout", named("Error"));
        for (String move : List.of("resume", "abort", "promote")) {
            o = op("post", "/v1/rollouts/{module}/" + move, switch (move) {
                        case "resume" -> "Resume a paused rollout";
                        case "abort" -> "Abort a rollout";
                        default -> "Let the hosts after the canaries of a promote: manual rollout go";
                    }, "With {\"push\"}, only when the rollout is of that push.");
            bearer(o);
            pathParam(o, "module", "such as store");
            jsonBody(o, obj(props("push", F.objectNode().set("type", F.arrayNode().add("string").add("null")))), false);
            resp(o, 200, "the rollout as written", ref(RolloutRecord.class));
            resp(o, 400, "a body that is not {\"push\"}", named("FieldError"));
            authErrors(o);
            resp(o, 404, "the module has no rollout", named("Error"));
            resp(o, 409, switch (move) {
                case "resume" -> "not paused, or of another push";
                case "abort" -> "ended, or of another push";
                default -> "not promote: manual, promoted already, not rolling, or of another push";
            }, named("Error"));
            smallBody(o, HttpApi.MAX_ROLLBACK_BODY);
        }

        o = op("post", "/v1/freezes", "Freeze a module, or every module", "No change of the module lands until the freeze ends (docs/decisions/0014-freezes.md).");
        bearer(o);
        jsonBody(o, obj(props("module", str(), "all", bool(), "for", str().put("description", "a duration such as 2h; with cron, each span's length"),
                "until", str().put("format", "date-time").put("description", "the end; with cron, the recurrence's end"), "reason", str(),
                "cron", str().put("description", "a recurring freeze: in force from each time of this 5-field cron expression for `for` (decision 37)"),
                "timezone", str().put("description", "the IANA zone cron is read in; UTC when left out")), "reason"), true);
        ObjectNode frozen = extended(FreezeStore.Freeze.class, "FreezeWritten", props("replaced", ref(FreezeStore.Freeze.class),
                "applying", arr(obj(props("module", str(), "host", str(), "since", str().put("format", "date-time"), "process", str()),
                        "module", "host", "since", "process"))));
        resp(o, 201, "the freeze as written; replaced: the freeze it replaces; applying: applies in progress, whose begun changes still land", frozen);
        resp(o, 400, "a field at fault, nothing written", named("FieldError"));
        authErrors(o);
        resp(o, 404, "a module never pushed", named("FieldError"));
        smallBody(o, HttpApi.MAX_FREEZE_BODY);

        o = op("get", "/v1/freezes", "Freezes", "Every freeze, active or ended but not yet removed.");
        resp(o, 200, "freezes", obj(props("freezes", arr(ref(FreezeStore.Freeze.class))), "freezes"));

        o = op("delete", "/v1/freezes/{module}", "Thaw", "A module's own freeze, or _all for the freeze of every module.");
        bearer(o);
        pathParam(o, "module", "a module, or _all");
        resp(o, 200, "thawed", obj(props("thawed", str().put("description", "the freeze's znode"),
                "ended", str().put("format", "date-time").put("description", "when a one-span freeze had ended by its until (no freeze.ended is sent again); absent for a freeze in force")), "thawed"));
        resp(o, 400, "not a module name", named("FieldError"));
        authErrors(o);
        resp(o, 404, "no such freeze", named("Error"));

        o = op("post", "/v1/drains", "Drain a host", "Its agent holds every container of its modules, no window runs there, rollouts pass over it "
                + "(docs/decisions/0037-recurring-freezes-drains-and-one-budget.md).");
        bearer(o);
        jsonBody(o, obj(props("host", str(), "reason", str(), "for", str().put("description", "a duration such as 2h; none: until undrained"),
                "stop", bool().put("description", "the holds stop their containers")), "host", "reason"), true);
        resp(o, 201, "the drain as written; agentDown: the host has no running agent, nothing is held until it is back", ref(DrainStore.Drain.class));
        resp(o, 400, "a field at fault, nothing written", named("FieldError"));
        authErrors(o);
        resp(o, 404, "an unknown host", named("FieldError"));
        resp(o, 409, "the host is drained already: mesh undrain it first", named("FieldError"));

        o = op("get", "/v1/drains", "Drains", "Every drained host; ended: past its until (its holds are released), not yet undrained.");
        resp(o, 200, "drains", obj(props("drains", arr(ref(DrainStore.Drain.class))), "drains"));

        o = op("delete", "/v1/drains/{host}", "Undrain", "The drain and the holds it placed go in one transaction; the host's agent applies its modules.");
        bearer(o);
        pathParam(o, "host", "such as host-a");
        resp(o, 200, "undrained", ref(DrainStore.Undrained.class));
        resp(o, 400, "not a host id", named("FieldError"));
        authErrors(o);
        resp(o, 404, "the host is not drained", named("FieldError"));

        o = op("get", "/v1/backup", "Backup", "Desired state, history, pushes, rollouts, freezes, drains and operators' holds as one "
                + "document (an admin's token, --admin; docs/decisions/0039-backups-and-an-empty-ensemble.md).");
        bearer(o);
        resp(o, 200, "the backup", ref(BackupDocument.class));
        authErrors(o);

        o = op("post", "/v1/restore", "Restore", "Writes a backup's nodes: holds, freezes, drains and the rest first, the desired state last "
                + "(an admin's token). Refused, nothing written, for a document cut short, edited, of a newer mesh or format, or into a "
                + "tree that is not empty without force.");
        bearer(o);
        query(o, "force", bool(), "write over a tree that already holds such nodes (the others stay)");
        jsonBody(o, ref(BackupDocument.class), true);
        resp(o, 200, "restored", ref(BackupStore.Restored.class));
        resp(o, 400, "not a whole, unedited backup of this mesh or an older one", named("FieldError"));
        authErrors(o);
        resp(o, 409, "the tree is not empty (without force)", named("FieldError"));

        o = op("get", "/v1/audit", "Audit", "Each host's ledger over the span, judged by AuditChecker (docs/decisions/0028-the-ledger-and-one-checker.md). "
                + "Waits up to timeout for the hosts.");
        query(o, "since", str(), "a duration back from now (24h) or an ISO-8601 UTC time; default 24h");
        query(o, "until", str().put("format", "date-time"), "an ISO-8601 UTC time; default now");
        query(o, "host", str(), "hosts, repeated or comma-separated; default every host");
        query(o, "module", str(), "modules, repeated or comma-separated; default every module");
        query(o, "timeout", str(), "how long to wait for the hosts, a duration; default 10s");
        resp(o, 200, "the audit", ref(AuditStore.Result.class));
        resp(o, 400, "each field at fault", named("AuditErrors"));
        resp(o, 503, MAX_AUDITS_TEXT, named("Error"));

        o = op("get", "/v1/why/{host}/{container}", "Why a container is as it is",
                "Held, deferred, rollout, freeze, slot, last apply, today's audit violations (asks the host's ledger for up to 5 s).");
        pathParam(o, "host", "such as host-a");
        pathParam(o, "container", "the Docker name, <module>-<name>");
        resp(o, 200, "the chain of reasons", ref(WhyStore.Why.class));
        resp(o, 404, "an unknown host or container", named("FieldError"));
        resp(o, 503, MAX_AUDITS_TEXT, named("Error"));

        for (String[] page : new String[][] {{"/", "The page", "text/html"}, {"/index.html", "The page", "text/html"},
                {"/ui/fragment", "The page's live part", "text/html"}, {"/ui/mesh.css", "The page's style", "text/css"},
                {"/ui/mesh.js", "The page's script", "text/javascript"}}) {
            o = op("get", page[0], page[1], "For browsers.");
            text(resp(o, 200, page[1], null), page[2]);
        }
    }

    private static final String MAX_AUDITS_TEXT = HttpApi.MAX_AUDITS + " audits are waiting for their hosts already (Retry-After)";

    // ---- building blocks ----

    private ObjectNode op(String method, String path, String summary, String description) {
        ObjectNode item = paths.has(path) ? (ObjectNode) paths.get(path) : paths.putObject(path);
        ObjectNode o = item.putObject(method);
        o.put("summary", summary);
        o.put("description", description);
        o.put("operationId", method + path.replaceAll("[^A-Za-z0-9]+", "_"));
        o.putObject("responses");
        return o;
    }

    private static ObjectNode resp(ObjectNode op, int status, String description, ObjectNode schema) {
        ObjectNode r = ((ObjectNode) op.get("responses")).putObject(String.valueOf(status));
        r.put("description", description);
        if (schema != null) r.putObject("content").putObject("application/json").set("schema", schema);
        return r;
    }

    private static void text(ObjectNode response, String type) {
        response.putObject("content").putObject(type).putObject("schema").put("type", "string");
    }

    private void authErrors(ObjectNode op) {
        resp(op, 401, "no credentials, when the coordinator asks for some (WWW-Authenticate)", named("Error"));
        resp(op, 403, "wrong credentials", named("Error"));
    }

    /** The 408 and 413 of a request with a small JSON body (HttpApi.smallBody). */
    private void smallBody(ObjectNode op, int limit) {
        resp(op, 408, "the body did not arrive within the read timeout", named("Error"));
        resp(op, 413, "the body is over " + limit + " bytes", named("TooLarge"));
    }

    private static void bearer(ObjectNode op) {
        ArrayNode s = op.putArray("security");
        s.addObject().putArray("bearer");
        s.addObject(); // open when the coordinator has no credentials
    }

    private static void pushSecurity(ObjectNode op) {
        ArrayNode s = op.putArray("security");
        s.addObject().putArray("bearer");
        s.addObject().putArray("webhook");
        s.addObject();
    }

    private static void param(ObjectNode op, String in, String name, boolean required, ObjectNode schema, String description) {
        ArrayNode ps = op.has("parameters") ? (ArrayNode) op.get("parameters") : op.putArray("parameters");
        ObjectNode p = ps.addObject();
        p.put("name", name).put("in", in).put("required", required).put("description", description);
        p.set("schema", schema);
    }

    private static void pathParam(ObjectNode op, String name, String description) { param(op, "path", name, true, str(), description); }

    private static void query(ObjectNode op, String name, ObjectNode schema, String description) { param(op, "query", name, false, schema, description); }

    private static void header(ObjectNode op, String name, String description) { param(op, "header", name, false, str(), description); }

    private static void jsonBody(ObjectNode op, ObjectNode schema, boolean required) {
        ObjectNode b = op.putObject("requestBody");
        b.put("required", required);
        b.putObject("content").putObject("application/json").set("schema", schema);
    }

    private static ObjectNode str() { return F.objectNode().put("type", "string"); }

    private static ObjectNode bool() { return F.objectNode().put("type", "boolean"); }

    private static ObjectNode arr(ObjectNode items) {
        ObjectNode a = F.objectNode().put("type", "array");
        a.set("items", items);
        return a;
    }

    private static ObjectNode enumOf(String... values) {
        ObjectNode e = str();
        ArrayNode a = e.putArray("enum");
        for (String v : values) a.add(v);
        return e;
    }

    private static ObjectNode props(Object... nameSchema) {
        ObjectNode p = F.objectNode();
        for (int i = 0; i < nameSchema.length; i += 2) p.set((String) nameSchema[i], (ObjectNode) nameSchema[i + 1]);
        return p;
    }

    /** @return an object of those properties, the named ones required, no others */
    private static ObjectNode obj(ObjectNode properties, String... required) {
        ObjectNode o = F.objectNode().put("type", "object");
        o.set("properties", properties);
        if (required.length > 0) {
            ArrayNode r = o.putArray("required");
            for (String n : required) r.add(n);
        }
        o.put("additionalProperties", false);
        return o;
    }

    /**
     * @return a {@code $ref} to a new component {@code name}: the record's schema with those properties more (an answer
     *         that adds fields to a record)
     */
    private ObjectNode extended(Class<?> type, String name, ObjectNode more, String... required) {
        String base = ref(type).get("$ref").asText().substring("#/components/schemas/".length());
        ObjectNode s = schemas.get(base).deepCopy();
        more.fields().forEachRemaining(e -> ((ObjectNode) s.get("properties")).set(e.getKey(), e.getValue()));
        for (String r : required) ((ArrayNode) s.withArray("required")).add(r);
        s.put("description", s.get("description").asText() + ", with " + String.join(", ", (Iterable<String>) more::fieldNames));
        schemas.put(name, s);
        return named(name);
    }

    private static ObjectNode named(String component) { return F.objectNode().put("$ref", "#/components/schemas/" + component); }

    /** The error answers' shapes, written by hand: HttpApi builds them as maps. */
    private void commonSchemas() {
        schemas.put("Error", obj(props("error", str().put("description", "what is wrong and the fix")), "error"));
        schemas.put("FieldError", obj(props("error", str(), "field", str().put("description", "the field at fault")), "error", "field"));
        schemas.put("TooLarge", obj(props("error", str(), "limit", F.objectNode().put("type", "integer").put("description", "bytes")), "error", "limit"));
        schemas.put("ManifestErrors", obj(props("errors", arr(ref(ManifestError.class))), "errors"));
        schemas.put("AuditErrors", obj(props("errors", arr(ref(AuditQuery.FieldError.class))), "errors"));
    }

    // ---- schemas of records, by Jackson's introspection ----

    /** @return a {@code $ref} to the component of that record, adding it (and what it refers to) when new */
    private ObjectNode ref(Class<?> type) { return schemaOf(CONFIG.constructType(type)); }

    private ObjectNode schemaOf(JavaType t) {
        Class<?> raw = t.getRawClass();
        if (raw == String.class || raw == char.class || raw == Character.class) return str();
        if (raw == Instant.class) return str().put("format", "date-time");
        if (raw == Duration.class) {
            JsonNode sample = Json.MAPPER.valueToTree(Duration.ofSeconds(90));
            return sample.isTextual() ? str().put("description", "ISO-8601 duration, such as PT1M30S") : F.objectNode().put("type", "number").put("description", "seconds");
        }
        if (raw == boolean.class || raw == Boolean.class) return bool();
        if (raw == int.class || raw == long.class || raw == short.class || raw == byte.class || raw == Integer.class || raw == Long.class
                || raw == Short.class || raw == Byte.class) return F.objectNode().put("type", "integer");
        if (raw == double.class || raw == float.class || Number.class.isAssignableFrom(raw)) return F.objectNode().put("type", "number");
        if (raw.isEnum()) {
            ObjectNode e = str();
            ArrayNode values = e.putArray("enum");
            for (Object c : raw.getEnumConstants()) values.add(Json.MAPPER.valueToTree(c));
            return e;
        }
        if (t.isArrayType() || t.isCollectionLikeType()) return arr(schemaOf(t.getContentType()));
        if (t.isMapLikeType()) {
            ObjectNode m = F.objectNode().put("type", "object");
            m.set("additionalProperties", schemaOf(t.getContentType()));
            return m;
        }
        if (JsonNode.class.isAssignableFrom(raw) || raw == Object.class) return F.objectNode();
        if (raw == java.util.Optional.class) return schemaOf(t.getContentType());
        BeanDescription d = CONFIG.introspect(t);
        AnnotatedMember value = d.findJsonValueAccessor();
        if (value != null) return schemaOf(value.getType());
        if (!raw.getName().startsWith("io.mesh.")) throw new IllegalStateException("no schema for " + t + ": add it to OpenApiDocument");
        String name = componentName(raw);
        Class<?> before = named.putIfAbsent(name, raw);
        if (before != null && before != raw) throw new IllegalStateException(before + " and " + raw + " would both be " + name);
        if (before == null) {
            schemas.put(name, F.objectNode()); // placeholder: a record that refers to itself
            schemas.put(name, bean(raw, d));
        }
        return named(name);
    }

    /** @return {@code PushStatus.View} for a nested record, the simple name otherwise */
    private static String componentName(Class<?> raw) {
        return raw.getEnclosingClass() == null ? raw.getSimpleName() : componentName(raw.getEnclosingClass()) + "." + raw.getSimpleName();
    }

    /**
     * A record's properties as {@link Json#MAPPER} writes them: a property written always is required (and may be
     * {@code null} unless primitive); one under {@code @JsonInclude(NON_NULL)} or {@code NON_EMPTY} may be absent, never
     * {@code null}. No other property appears.
     */
    private ObjectNode bean(Class<?> raw, BeanDescription d) {
        JsonInclude.Value classInclusion = d.findPropertyInclusion(CONFIG.getDefaultPropertyInclusion(raw));
        ObjectNode properties = F.objectNode();
        List<String> required = new ArrayList<>();
        for (BeanPropertyDefinition p : d.findProperties()) {
            AnnotatedMember accessor = p.getAccessor();
            if (accessor == null || !p.couldSerialize()) continue;
            JsonInclude.Include inclusion = classInclusion.withOverrides(p.findInclusion()).getValueInclusion();
            ObjectNode s = schemaOf(accessor.getType());
            boolean always = inclusion == JsonInclude.Include.ALWAYS || inclusion == JsonInclude.Include.USE_DEFAULTS;
            if (always) {
                required.add(p.getName());
                if (!accessor.getRawType().isPrimitive()) s = nullable(s);
            }
            properties.set(p.getName(), s);
        }
        ObjectNode o = obj(properties, required.toArray(String[]::new));
        o.put("description", "the JSON of " + raw.getName().replace('$', '.'));
        return o;
    }

    private static ObjectNode nullable(ObjectNode s) {
        JsonNode type = s.get("type");
        if (type != null && type.isTextual() && !s.has("$ref")) {
            ObjectNode n = s.deepCopy();
            n.set("type", F.arrayNode().add(type.asText()).add("null"));
            if (n.has("enum")) ((ArrayNode) n.get("enum")).addNull();
            return n;
        }
        if (s.isEmpty()) return s; // anything, null too
        ObjectNode n = F.objectNode();
        n.putArray("anyOf").add(s).addObject().put("type", "null");
        return n;
    }
}
