package io.mesh.coordinator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import io.mesh.coordinator.CoordinatorExtension.Answer;
import io.mesh.wire.AgentRecord;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.Json;
import io.mesh.wire.Times;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The OpenAPI document ({@code GET /v1/openapi.json}) against the coordinator that serves it: the committed document is
 * what {@link OpenApiDocument} derives from the code; every operation in it is called on a real {@link HttpApi} (on a
 * real ZooKeeper, no agent running) and each answer's JSON is valid against the schema the document gives for its path,
 * method and status; and the document has every route {@link HttpApi} serves, with the methods it allows, and no other.
 */
class OpenApiTest {
    @RegisterExtension
    static final CoordinatorFixture fx = new CoordinatorFixture();

    private static final Path FILE = Path.of(OpenApiDocument.RESOURCE);
    private static final SchemaRegistry SCHEMAS = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12);

    private JsonNode doc;
    /** {@code METHOD template} of every operation called. */
    private final Set<String> called = new TreeSet<>();

    @Test
    void theCommittedDocumentIsWhatTheCodeGives() throws Exception {
        String generated = OpenApiDocument.generate();
        if (Boolean.getBoolean("mesh.reference.write")) Files.writeString(FILE, generated, StandardCharsets.UTF_8);
        assertThat(Files.readString(FILE, StandardCharsets.UTF_8))
                .as("%s is stale: run deploy/dev/reference.sh and commit what it writes", FILE)
                .isEqualTo(generated);
    }

    @Test
    void everyOperationAnswersAsTheDocumentSays() throws Exception {
        doc = Json.MAPPER.readTree(Files.readString(FILE));
        Answer served = call("GET", "/v1/openapi.json", "/v1/openapi.json", null, 200);
        assertThat(served.json()).as("served as committed").isEqualTo(doc);
        call("GET", "/healthz", "/healthz", null, 200);
        call("GET", "/metrics", "/metrics", null, 200);
        for (String page : List.of("/", "/index.html", "/ui/fragment", "/ui/mesh.css", "/ui/mesh.js")) call("GET", page, page, null, 200);

        // Audit first: no host is known yet, so it asks no agent and answers at once.
        call("GET", "/v1/audit", "/v1/audit?since=1h", null, 200);
        call("GET", "/v1/audit", "/v1/audit?since=never&bogus=1", null, 400);

        // Pushes; host-a gets an agent node (no agent runs), host-b is named only.
        call("POST", "/v1/pushes", "/v1/pushes", yaml(Manifests.TWO), 202);
        fx.zk.client().create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL)
                .forPath(fx.zk.paths().agent("host-a"), Json.bytes(new AgentRecord("host-a", "0.1.0", 4242, Times.now())));
        fx.awaitServed(fx.zk.paths().agent("host-a"));
        call("POST", "/v1/pushes", "/v1/pushes", yaml(Manifests.store("[host-a, host-b]")), 202);
        String rollout = "module: roll\nhosts: [host-a, host-b]\nrollout: {canary: 1}\n"
                + "networks: {default: {}, back: {internal: true, labels: {team: roll}}, shared: {external: true, name: infra-net}}\n"
                + "containers:\n  app: {image: mesh-demo/busybox:1, networks: {default: {}, back: {aliases: [cache]}, shared: {}}}\n";
        call("POST", "/v1/pushes", "/v1/pushes", yaml(rollout), 202);
        call("POST", "/v1/pushes", "/v1/pushes", yaml("module: bad\nhosts: []\ncontainers: {}\n"), 400);
        call("POST", "/v1/pushes", "/v1/pushes", new byte[HttpLimits.MAX_PUSH_BYTES + 1], 413);
        call("GET", "/v1/pushes", "/v1/pushes?limit=2", null, 200);
        call("GET", "/v1/pushes", "/v1/pushes?limit=many", null, 400);
        call("GET", "/v1/pushes/{push}", "/v1/pushes/push-0000000001", null, 200);
        call("GET", "/v1/pushes/{push}", "/v1/pushes/push-0000000099", null, 404);
        call("POST", "/v1/pushes/{push}/cancel", "/v1/pushes/push-0000000001/cancel", new byte[0], 200); // host-b has no agent
        call("POST", "/v1/pushes/{push}/cancel", "/v1/pushes/push-0000000001/cancel", new byte[0], 200); // already
        call("POST", "/v1/pushes/{push}/cancel", "/v1/pushes/push-0000000099/cancel", new byte[0], 404);

        call("GET", "/v1/hosts", "/v1/hosts", null, 200);
        call("GET", "/v1/fleet", "/v1/fleet", null, 200);
        call("GET", "/v1/windows", "/v1/windows", null, 200);
        call("GET", "/v1/locks", "/v1/locks", null, 200);

        // Operator holds.
        call("POST", "/v1/holds", "/v1/holds", json("{\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"disk swap\",\"for\":\"2h\"}"), 201);
        call("POST", "/v1/holds", "/v1/holds", json("{\"host\":\"host-a\",\"container\":\"store-registry\"}"), 400);
        call("POST", "/v1/holds", "/v1/holds", json("{\"host\":\"host-z\",\"container\":\"store-registry\",\"reason\":\"r\"}"), 404);
        call("POST", "/v1/holds", "/v1/holds", json("{\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"again\"}"), 409);
        call("POST", "/v1/holds", "/v1/holds", new byte[HttpApi.MAX_REQUEST_BODY + 1], 413);
        call("GET", "/v1/held", "/v1/held", null, 200);
        call("GET", "/v1/holds/{host}/{container}", "/v1/holds/host-a/store-registry", null, 200);
        call("GET", "/v1/holds/{host}/{container}", "/v1/holds/Host_A!/store-registry", null, 400);
        call("GET", "/v1/holds/{host}/{container}", "/v1/holds/host-a/web-app", null, 404);
        call("DELETE", "/v1/holds/{host}/{container}", "/v1/holds/host-a/store-registry?stale=true", null, 409);
        call("DELETE", "/v1/holds/{host}/{container}", "/v1/holds/host-a/store-registry", null, 200);
        call("DELETE", "/v1/holds/{host}/{container}", "/v1/holds/host-a/store-registry", null, 404);
        call("DELETE", "/v1/holds/{host}/{container}", "/v1/holds/Host_A!/store-registry", null, 400);

        // Window requests: host-a has an agent node, host-b none.
        Answer req = call("POST", "/v1/hosts/{host}/windows", "/v1/hosts/host-a/windows", json("{\"module\":\"store\",\"schedule\":\"garbage-collect\"}"), 202);
        call("POST", "/v1/hosts/{host}/windows", "/v1/hosts/host-a/windows", json("{\"module\":\"store\",\"schedule\":\"nope\"}"), 400);
        call("POST", "/v1/hosts/{host}/windows", "/v1/hosts/host-b/windows", json("{\"module\":\"store\",\"schedule\":\"garbage-collect\"}"), 409);
        call("POST", "/v1/hosts/{host}/windows", "/v1/hosts/host-a/windows", new byte[HttpApi.MAX_REQUEST_BODY + 1], 413);
        String request = "/v1/hosts/host-a/windows/" + req.json().path("request").asText();
        call("GET", "/v1/hosts/{host}/windows/{request}", request, null, 200);
        call("DELETE", "/v1/hosts/{host}/windows/{request}", request, null, 200);
        call("GET", "/v1/hosts/{host}/windows/{request}", request, null, 404);
        call("DELETE", "/v1/hosts/{host}/windows/{request}", request, null, 404);

        // History, rollback, delete.
        call("GET", "/v1/modules/{module}/history", "/v1/modules/store/history", null, 200);
        call("GET", "/v1/modules/{module}/history", "/v1/modules/roll/history", null, 200); // a spec with networks
        call("GET", "/v1/modules/{module}/history", "/v1/modules/nope/history", null, 404);
        call("POST", "/v1/modules/{module}/rollback", "/v1/modules/store/rollback", new byte[0], 202);
        call("POST", "/v1/modules/{module}/rollback", "/v1/modules/store/rollback", json("{\"to\":1}"), 400);
        call("POST", "/v1/modules/{module}/rollback", "/v1/modules/store/rollback", json("{\"to\":\"push-0000000099\"}"), 404);
        call("POST", "/v1/modules/{module}/rollback", "/v1/modules/nope/rollback", new byte[0], 404);
        call("DELETE", "/v1/modules/{module}", "/v1/modules/web", null, 202);
        call("DELETE", "/v1/modules/{module}", "/v1/modules/web", null, 404);

        // Plans: host-a's agent never answers (none runs), host-b has none.
        Answer plan = call("POST", "/v1/plans", "/v1/plans", yaml(Manifests.store("[host-a, host-b]")), 202);
        call("POST", "/v1/plans", "/v1/plans", yaml("module: bad\nhosts: []\ncontainers: {}\n"), 400);
        call("POST", "/v1/plans", "/v1/plans", new byte[HttpLimits.MAX_PUSH_BYTES + 1], 413);
        call("GET", "/v1/plans/{plan}", "/v1/plans/" + plan.json().path("plan").asText(), null, 200);
        call("GET", "/v1/plans/{plan}", "/v1/plans/plan-0000000099", null, 404);

        // Rollouts: roll's is rolling.
        call("GET", "/v1/rollouts/{module}", "/v1/rollouts/roll", null, 200);
        call("GET", "/v1/rollouts/{module}", "/v1/rollouts/store", null, 404);
        call("POST", "/v1/rollouts/{module}/resume", "/v1/rollouts/roll/resume", new byte[0], 409);
        call("POST", "/v1/rollouts/{module}/resume", "/v1/rollouts/roll/resume", json("{\"other\":1}"), 400);
        call("POST", "/v1/rollouts/{module}/resume", "/v1/rollouts/store/resume", new byte[0], 404);
        call("POST", "/v1/rollouts/{module}/promote", "/v1/rollouts/roll/promote", new byte[0], 409); // promote: auto
        call("POST", "/v1/rollouts/{module}/promote", "/v1/rollouts/roll/promote", json("[]"), 400);
        call("POST", "/v1/rollouts/{module}/promote", "/v1/rollouts/store/promote", new byte[0], 404);
        call("POST", "/v1/rollouts/{module}/abort", "/v1/rollouts/roll/abort", new byte[0], 200);
        call("POST", "/v1/rollouts/{module}/abort", "/v1/rollouts/roll/abort", new byte[0], 409);
        call("POST", "/v1/rollouts/{module}/abort", "/v1/rollouts/roll/abort", json("[]"), 400);
        call("POST", "/v1/rollouts/{module}/abort", "/v1/rollouts/store/abort", new byte[0], 404);

        // Freezes.
        call("POST", "/v1/freezes", "/v1/freezes", json("{\"module\":\"store\",\"for\":\"2h\",\"reason\":\"audit week\"}"), 201);
        call("POST", "/v1/freezes", "/v1/freezes", json("{\"module\":\"store\",\"for\":\"1h\",\"reason\":\"shorter\"}"), 201);
        call("POST", "/v1/freezes", "/v1/freezes", json("{\"module\":\"store\",\"reason\":\"no end\"}"), 400);
        call("POST", "/v1/freezes", "/v1/freezes", json("{\"module\":\"nope\",\"for\":\"1h\",\"reason\":\"r\"}"), 404);
        call("GET", "/v1/freezes", "/v1/freezes", null, 200);
        call("POST", "/v1/drains", "/v1/drains", json("{\"host\":\"host-a\",\"reason\":\"kernel\",\"stop\":true}"), 201);
        call("POST", "/v1/drains", "/v1/drains", json("{\"host\":\"host-a\",\"reason\":\"again\"}"), 409);
        call("POST", "/v1/drains", "/v1/drains", json("{\"host\":\"host-a\"}"), 400);
        call("POST", "/v1/drains", "/v1/drains", json("{\"host\":\"host-z\",\"reason\":\"r\"}"), 404);
        call("GET", "/v1/drains", "/v1/drains", null, 200);
        call("DELETE", "/v1/drains/{host}", "/v1/drains/host-a", null, 200);
        call("DELETE", "/v1/drains/{host}", "/v1/drains/host-a", null, 404);
        call("DELETE", "/v1/drains/{host}", "/v1/drains/-bad", null, 400);
        call("GET", "/v1/fleet", "/v1/fleet", null, 200);
        call("DELETE", "/v1/freezes/{module}", "/v1/freezes/store", null, 200);
        call("DELETE", "/v1/freezes/{module}", "/v1/freezes/store", null, 404);
        call("DELETE", "/v1/freezes/{module}", "/v1/freezes/No!", null, 400);

        call("GET", "/v1/why/{host}/{container}", "/v1/why/Host_A!/store-registry", null, 404);
        call("GET", "/v1/why/{host}/{container}", "/v1/why/host-z/store-registry", null, 404);
        // A host known by its report alone (no agent node): the why asks no agent, and answers at once.
        ApplyReport report = new ApplyReport("host-c", "store", "r1", "push-0000000002", io.mesh.wire.ApplyOutcome.APPLIED, Times.now(),
                Times.now(), null, List.of(new ApplyReport.ContainerResult("registry", "store-registry", io.mesh.wire.ContainerAction.CREATED,
                List.of(), "c".repeat(64))), null, null, null, null, null, List.of());
        fx.writeReport(report);
        Answer why = call("GET", "/v1/why/{host}/{container}", "/v1/why/host-c/store-registry", null, 200);
        assertThat(why.body()).contains("store-registry");

        // A backup, and restores refused and done (an open coordinator takes an admin's requests from anyone)
        Answer backup = call("GET", "/v1/backup", "/v1/backup", null, 200);
        byte[] backupDoc = backup.body().getBytes(java.nio.charset.StandardCharsets.UTF_8);
        call("POST", "/v1/restore", "/v1/restore", backupDoc, 409);
        call("POST", "/v1/restore", "/v1/restore?force=true", json("{\"format\":\"mesh-backup\",\"version\":7}"), 400);
        call("POST", "/v1/restore", "/v1/restore?force=true", backupDoc, 200);

        // Every operation of the document was called.
        Set<String> operations = new TreeSet<>();
        for (Iterator<Map.Entry<String, JsonNode>> p = doc.get("paths").fields(); p.hasNext(); ) {
            Map.Entry<String, JsonNode> e = p.next();
            e.getValue().fieldNames().forEachRemaining(m -> operations.add(m.toUpperCase() + " " + e.getKey()));
        }
        assertThat(called).as("operations called").containsExactlyElementsOf(operations);
        // docs/reference/http.md lists them too.
        String http = Files.readString(Path.of("../docs/reference/http.md"));
        for (String operation : operations) assertThat(http).as("docs/reference/http.md lists %s", operation).contains("`" + operation + "`");
    }

    @Test
    void theDocumentHasEveryRouteHttpApiServesAndNoOther() throws Exception {
        doc = Json.MAPPER.readTree(Files.readString(FILE));
        List<String> templates = new ArrayList<>();
        doc.get("paths").fieldNames().forEachRemaining(templates::add);
        String source = Files.readString(Path.of("src/main/java/io/mesh/coordinator/HttpApi.java"));

        // Each route of HttpApi.route (its case labels, its patterns and its prefixes) is a path of the document.
        List<String> routes = new ArrayList<>();
        Matcher cases = Pattern.compile("case (\"/[^\"]*\"(?:, \"/[^\"]*\")*) ->").matcher(source);
        while (cases.find()) for (String c : cases.group(1).split(", ")) routes.add(c.replace("\"", ""));
        assertThat(routes).as("case labels found").hasSizeGreaterThan(10);
        for (String route : routes) assertThat(templates).as("route %s", route).contains(route);
        Matcher patterns = Pattern.compile("Pattern.compile\\(\"(/v1/[^\"]*)\"\\)").matcher(source);
        int found = 0;
        while (patterns.find()) {
            Pattern route = Pattern.compile(patterns.group(1));
            assertThat(templates).as("route %s", route).anyMatch(t -> route.matcher(concrete(t)).matches());
            found++;
        }
        assertThat(found).as("patterns found").isGreaterThan(5);
        Matcher prefixes = Pattern.compile("path.startsWith\\(\"(/v1/[^\"]*/)\"\\)").matcher(source);
        while (prefixes.find()) {
            String prefix = prefixes.group(1);
            assertThat(templates).as("route %s...", prefix).anyMatch(t -> t.startsWith(prefix) && t.indexOf('/', prefix.length()) < 0);
        }

        // Each path of the document is served, with the methods it lists and no other: another method is 405 naming them.
        for (String t : templates) {
            Set<String> documented = new TreeSet<>();
            doc.get("paths").get(t).fieldNames().forEachRemaining(m -> documented.add(m.toUpperCase()));
            Answer a = fx.api.method("PUT", concrete(t));
            assertThat(a.status()).as("PUT %s: %s", t, a.body()).isEqualTo(405);
            Set<String> allowed = Arrays.stream(a.raw().headers().firstValue("Allow").orElse("").split(",\\s*")).collect(Collectors.toCollection(TreeSet::new));
            assertThat(allowed).as("methods of %s", t).isEqualTo(documented);
        }
        Answer unknown = fx.api.get("/v1/nothing");
        assertThat(unknown.status()).isEqualTo(404);
        assertThat(unknown.json().path("error").asText()).contains("/v1/openapi.json");
    }

    /** @return the template with each {parameter} filled with a name that fits it */
    private static String concrete(String template) {
        return template.replaceAll("\\{[^}]+}", "x1");
    }

    private static byte[] yaml(String text) { return text.getBytes(StandardCharsets.UTF_8); }

    private static byte[] json(String text) { return text.getBytes(StandardCharsets.UTF_8); }

    /**
     * Calls {@code method path}, asserts the status, and validates the answer against the document's response for
     * {@code template}, {@code method} and that status: its JSON against the schema, or its content type.
     *
     * @param body the body, or {@code null} for none
     */
    private Answer call(String method, String template, String path, byte[] body, int status) throws Exception {
        Map<String, String> headers = body == null || body.length == 0 ? Map.of() : Map.of("Content-Type", "application/json");
        Answer a = fx.api.method(method, path, body == null ? new byte[0] : body, headers);
        assertThat(a.status()).as("%s %s: %s", method, path, a.body()).isEqualTo(status);
        String pointer = "/paths/" + template.replace("~", "~0").replace("/", "~1") + "/" + method.toLowerCase() + "/responses/" + status;
        JsonNode response = doc.at(pointer);
        assertThat(response.isMissingNode()).as("%s %s %d is in the document", method, template, status).isFalse();
        JsonNode content = response.path("content");
        String type = a.raw().headers().firstValue("Content-Type").orElse("");
        if (content.has("application/json")) {
            assertThat(type).as("%s %s", method, path).startsWith("application/json");
            assertThat(a.json()).as("%s %s answers JSON", method, path).isNotNull();
            List<Error> errors = schema(pointer + "/content/application~1json/schema").validate(a.json());
            assertThat(errors).as("%s %s %d: %s against %s", method, path, status, a.body(), pointer).isEmpty();
        } else {
            String documented = content.fieldNames().hasNext() ? content.fieldNames().next() : "";
            assertThat(type).as("%s %s", method, path).startsWith(documented);
        }
        called.add(method + " " + template);
        return a;
    }

    /** @return the schema at that pointer of the document, its {@code $ref}s resolved in the document's components */
    private Schema schema(String pointer) {
        ObjectNode root = Json.MAPPER.createObjectNode();
        root.put("$schema", "https://json-schema.org/draft/2020-12/schema");
        root.put("$ref", "#/answer");
        root.set("answer", doc.at(pointer));
        root.set("components", doc.get("components"));
        return SCHEMAS.getSchema(root);
    }
}
