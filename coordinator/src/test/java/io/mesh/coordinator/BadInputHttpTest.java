package io.mesh.coordinator;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.dockerjava.api.command.InspectContainerResponse;
import io.mesh.coordinator.CoordinatorExtension.Answer;
import io.mesh.docker.DockerEngine;
import io.mesh.manifest.ManifestParser;
import io.mesh.testing.AgentDaemonExtension;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.Json;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/**
 * Bad input over HTTP, through the real {@link HttpApi}, while a real agent daemon ({@link AgentDaemonExtension}) runs a
 * module on the real Docker engine: every malformed manifest gets a {@code 4xx} JSON error naming document, field
 * and fix; {@code /mesh/desired} (data and stat), {@code /mesh/pushes} and the running container are unchanged,
 * and the agent never applies anything. YAML safety (tags, aliases, nesting, an alias bomb, the body limit) is
 * proved the same way.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BadInputHttpTest {
    @RegisterExtension
    @Order(1)
    static final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    @Order(2)
    static final CoordinatorExtension api = new CoordinatorExtension(zk);
    /** A separate agent (its own ZooKeeper session) that must never apply anything the tests push. */
    @RegisterExtension
    @Order(3)
    static final AgentDaemonExtension agent = new AgentDaemonExtension(zk, "host-a").reconcileEvery(Duration.ofMinutes(30)).withOwnSession();
    private DockerEngine docker;
    private final String m = TestDocker.uniqueModule("bad");
    private InspectContainerResponse running;
    private ApplyReport applied;
    private Map<String, String> zkBefore;

    /** The module the agent runs; every malformed manifest below is a variant of it. */
    private String good() {
        return "module: " + m + "\nhosts: [host-a]\ncontainers:\n  web:\n    image: " + TestDocker.BUSYBOX + "\n"
                + "    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "    network: none\n    stop-timeout: 1s\n"
                + "schedules:\n  gc:\n    cron: \"30 3 * * *\"\n    while-stopped: [web]\n"
                + "    step: {image: " + TestDocker.BUSYBOX + ", command: [\"true\"], volumes-from: web}\n    timeout: 1m\n";
    }

    private String with(String from, String to) {
        String g = good();
        assertThat(g).contains(from);
        return g.replace(from, to);
    }

    /** The good manifest with extra lines in container {@code web}. */
    private String web(String... lines) {
        return with("    network: none\n", "    network: none\n" + String.join("", Arrays.stream(lines).map(l -> "    " + l + "\n").toList()));
    }

    @BeforeAll
    void theAgentRunsTheModule() throws Exception {
        docker = TestDocker.engine();
        Answer a = api.post("/v1/pushes", good().getBytes(StandardCharsets.UTF_8), Map.of("X-Mesh-Revision", "r1"));
        assertThat(a.status()).isEqualTo(202);
        applied = await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() -> {
            byte[] d = zk.client().checkExists().forPath(zk.paths().report("host-a", m)) == null ? null
                    : zk.client().getData().forPath(zk.paths().report("host-a", m));
            return d == null ? null : Json.read(d, ApplyReport.class);
        }, r -> r != null && r.outcome() == ApplyOutcome.APPLIED);
        running = docker.inspect(m + "-web");
        assertThat(running.getState().getRunning()).isTrue();
        zkBefore = snapshot();
    }

    @AfterAll
    void removeTheModule() {
        agent.close(); // before its containers go, so that it does not make them again
        TestDocker.clean(m);
    }

    @BeforeEach
    @AfterEach
    void nothingChanged() throws Exception {
        assertThat(snapshot()).isEqualTo(zkBefore);
        InspectContainerResponse now = docker.inspect(m + "-web");
        assertThat(now.getId()).isEqualTo(running.getId());
        assertThat(now.getState().getRunning()).isTrue();
        assertThat(now.getState().getStartedAt()).isEqualTo(running.getState().getStartedAt());
        assertThat(docker.moduleContainers(m)).hasSize(1);
        // The agent applied nothing since: its report is the first one.
        ApplyReport report = Json.read(zk.client().getData().forPath(zk.paths().report("host-a", m)), ApplyReport.class);
        assertThat(report.push()).isEqualTo(applied.push());
        assertThat(report.startedAt()).isEqualTo(applied.startedAt());
    }

    Stream<Arguments> malformed() {
        String name41 = "a".repeat(41);
        String two = good() + "---\nmodule: other\nhosts: [host-a]\ncontainers:\n  app: {imag: " + TestDocker.BUSYBOX + "}\n";
        return Stream.of(
                // YAML syntax
                arguments("unclosed flow list", with("hosts: [host-a]", "hosts: [host-a"), 1, "", "brackets"),
                arguments("tab indentation", with("  web:\n", "\tweb:\n"), 1, "", "not tabs"),
                arguments("unclosed quote", with("cron: \"30 3 * * *\"", "cron: \"30 3 * * *"), 1, "", "quoting"),
                arguments("mapping as a key", "{a: 1}: 2\n" + good(), 1, "", "plain names"),
                arguments("mapping inside a scalar", "module: " + m + "\n  hosts: x\n", 1, "", "indentation"),
                arguments("colon inside a plain value", with("stop-timeout: 1s", "stop-timeout: a: b"), 1, "", "indentation"),
                // wrong types
                arguments("module is a list", with("module: " + m, "module: [" + m + "]"), 1, "module", "lower-case letters"),
                arguments("hosts is a string", with("hosts: [host-a]", "hosts: host-a"), 1, "hosts", "list of strings"),
                arguments("containers is a list", "module: " + m + "\nhosts: [host-a]\ncontainers: [web]\n", 1, "containers", "mapping of container name"),
                arguments("container is a string", "module: " + m + "\nhosts: [host-a]\ncontainers: {web: busybox}\n", 1, "containers.web", "mapping with at least image"),
                arguments("command is a string", with("command: [sh, -c,", "command: sh\n    x: [sh, -c,"), 1, "containers.web.command", "list of strings"),
                arguments("env is a list", web("env: [A=1]"), 1, "containers.web.env", "mapping of variable name"),
                arguments("env value is a mapping", web("env: {A: {b: c}}"), 1, "containers.web.env.A", "string value"),
                arguments("restart is a boolean", web("restart: false"), 1, "containers.web.restart", "write \"no\" in quotes"),
                arguments("privileged is a string", web("privileged: \"yes please\""), 1, "containers.web.privileged", "true or false"),
                arguments("cron is a number", with("cron: \"30 3 * * *\"", "cron: 5"), 1, "schedules.gc.cron", "in quotes"),
                // missing fields
                arguments("missing containers", "module: " + m + "\nhosts: [host-a]\n", 1, "containers", "missing: give a mapping"),
                arguments("missing image", with("    image: " + TestDocker.BUSYBOX + "\n    command", "    command"), 1, "containers.web.image", "missing: give an image"),
                // unknown fields
                arguments("unknown module field", good() + "replicas: 3\n", 1, "replicas", "allowed here are"),
                arguments("unknown container field", web("mem_limit: 1g"), 1, "containers.web.mem_limit", "allowed here are"),
                arguments("unknown schedule field", with("    timeout: 1m\n", "    timeout: 1m\n    retries: 3\n"), 1, "schedules.gc.retries", "allowed here are"),
                arguments("unknown step field", with("volumes-from: web}", "volumes-from: web, user: root}"), 1, "schedules.gc.step.user", "allowed here are"),
                // bad names: path traversal, slashes, control characters, case, length
                arguments("module path traversal", with("module: " + m, "module: ../etc"), 1, "module", "lower-case letters"),
                arguments("module with a slash", with("module: " + m, "module: a/b"), 1, "module", "lower-case letters"),
                arguments("module with a control character", with("module: " + m, "module: \"st\\x07ore\""), 1, "module", "lower-case letters"),
                arguments("module upper-case", with("module: " + m, "module: Store"), 1, "module", "lower-case letters"),
                arguments("41-character module", with("module: " + m, "module: " + name41), 1, "module", "at most 40 characters"),
                arguments("container path traversal", with("  web:\n", "  \"../web\":\n").replace("[web]", "[x]").replace("volumes-from: web", "volumes-from: x"),
                        1, "containers.../web", "lower-case letters"),
                arguments("container with a NUL", with("  web:\n", "  \"w\\0b\":\n"), 1, "containers.w\\u0000b", "lower-case letters"),
                arguments("host path traversal", with("hosts: [host-a]", "hosts: [\"../../etc\"]"), 1, "hosts[0]", "such as host-a"),
                arguments("host with a newline", with("hosts: [host-a]", "hosts: [\"host-a\\nx\"]"), 1, "hosts[0]", "remove it"),
                arguments("schedule upper-case", with("  gc:\n", "  GC:\n"), 1, "schedules.GC", "lower-case letters"),
                arguments("env name with '='", web("env: {\"A=B\": x}"), 1, "containers.web.env.A=B", "not starting with a digit"),
                // cron and time zones
                arguments("cron with 4 fields", with("30 3 * * *", "30 3 * *"), 1, "schedules.gc.cron", "5-field cron expression"),
                arguments("cron minute 61", with("30 3 * * *", "61 3 * * *"), 1, "schedules.gc.cron", "such as \"30 3 * * *\""),
                arguments("cron macro", with("30 3 * * *", "@daily"), 1, "schedules.gc.cron", "5-field cron expression"),
                arguments("unknown time zone", with("    timeout: 1m\n", "    timeout: 1m\n    timezone: Mars/Olympus\n"), 1, "schedules.gc.timezone", "IANA id"),
                arguments("time zone path traversal", with("    timeout: 1m\n", "    timeout: 1m\n    timezone: ../../etc/passwd\n"), 1, "schedules.gc.timezone", "IANA id"),
                // durations
                arguments("timeout without a unit", with("timeout: 1m", "timeout: \"30\""), 1, "schedules.gc.timeout", "such as 90s, 30m or 1h30m"),
                arguments("timeout zero", with("timeout: 1m", "timeout: 0s"), 1, "schedules.gc.timeout", "above 0"),
                arguments("timeout in days", with("timeout: 1m", "timeout: 3d"), 1, "schedules.gc.timeout", "such as 90s, 30m or 1h30m"),
                arguments("stop-timeout too long", with("stop-timeout: 1s", "stop-timeout: 999999h"), 1, "containers.web.stop-timeout", "shorter"),
                // references inside the module
                arguments("while-stopped names nothing", with("while-stopped: [web]", "while-stopped: [db]"), 1, "schedules.gc.while-stopped[0]", "use one of [web]"),
                arguments("while-stopped listed twice", with("while-stopped: [web]", "while-stopped: [web, web]"), 1, "schedules.gc.while-stopped[1]", "name each container once"),
                arguments("volumes-from names nothing", with("volumes-from: web", "volumes-from: db"), 1, "schedules.gc.step.volumes-from", "use one of [web]"),
                arguments("volumes-from is a list", with("volumes-from: web", "volumes-from: [web]"), 1, "schedules.gc.step.volumes-from", "name of a container"),
                // volumes, ports, capabilities
                arguments("host path with ..", web("volumes: [\"/srv/../etc:/data\"]"), 1, "containers.web.volumes[0]", "no '.', '..' or '//' segments"),
                arguments("relative host path", web("volumes: [\"data/x:/data\"]"), 1, "containers.web.volumes[0]", "absolute host path"),
                arguments("container path traversal", web("volumes: [\"data:/var/../etc\"]"), 1, "containers.web.volumes[0]", "absolute and clean"),
                arguments("port out of range", with("network: none", "network: bridge\n    ports: [\"70000:80\"]"), 1, "containers.web.ports[0]", "ports 1-65535"),
                arguments("unknown capability", web("cap-add: [FLY]"), 1, "containers.web.cap-add[0]", "not a Linux capability"),
                arguments("pid other than host", web("pid: container:x"), 1, "containers.web.pid", "must be host"),
                // documents
                arguments("duplicate module", good() + "---\n" + good(), 2, "module", "already defined in document 1"),
                arguments("bad second document after a good first", two, 2, "containers.app.imag", "allowed here are"),
                arguments("syntax error in document 2", good() + "---\nmodule: [cache\n", 2, "", "brackets"),
                arguments("trailing empty document", good() + "---\n", 2, "", "remove the extra '---'"),
                arguments("empty body", "", 1, "", "give at least one module"),
                arguments("blank body", "  \n\n", 1, "", "give at least one module"),
                arguments("comments only", "# nothing here\n", 1, "", "give at least one document"),
                arguments("document is a list", "- module: " + m + "\n- hosts: [host-a]\n", 1, "", "must be a mapping"),
                arguments("document is a scalar", "hello\n", 1, "", "must be a mapping"),
                arguments("second document is a number", good() + "---\n42\n", 2, "", "must be a mapping"),
                // YAML features mesh refuses
                arguments("java type tag", with("module: " + m, "module: !!java.lang.ProcessBuilder [touch, /tmp/pwned]"), 1, "module", "remove it"),
                arguments("java tag inside a value", web("env: {A: !!javax.script.ScriptEngineManager [!!java.net.URLClassLoader [[!!java.net.URL [\"http://127.0.0.1:1/\"]]]]}"),
                        1, "containers.web.env.A", "is not supported"),
                arguments("local tag", with("image: " + TestDocker.BUSYBOX + "\n    command", "image: !env IMAGE\n    command"), 1, "containers.web.image", "remove it"),
                arguments("alias", with("hosts: [host-a]", "hosts: &h [host-a]\nx: *h"), 1, "x", "write the value out in full"),
                arguments("merge key", "module: " + m + "\nhosts: [host-a]\ncontainers:\n  a: &base {image: x}\n  b:\n    <<: *base\n", 1, "containers.b.<<", "write the value out in full"),
                arguments("recursive alias", "a: &a [*a]\n" + good(), 1, "a[0]", "write the value out in full"),
                arguments("deep nesting", web("env: {A: " + "[".repeat(300) + "]".repeat(300) + "}"), 1, "", "flatten it"),
                arguments("very deep nesting", web("env: {A: " + "[".repeat(100_000) + "]".repeat(100_000) + "}"), 1, "", "flatten it"));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("malformed")
    void aMalformedManifestIs400NamingDocumentFieldAndFixAndChangesNothing(String name, String yaml, int document, String field, String fix) throws Exception {
        Answer a = api.post("/v1/pushes", yaml.getBytes(StandardCharsets.UTF_8), Map.of("X-Mesh-Revision", "bad"));

        assertThat(a.status()).as(name).isEqualTo(400);
        assertThat(a.raw().headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t).startsWith("application/json"));
        JsonNode errors = a.json().get("errors");
        assertThat(errors).as(name).isNotEmpty();
        for (JsonNode e : errors) {
            assertThat(e.get("document").isInt()).isTrue();
            assertThat(e.get("field").isTextual()).isTrue();
            assertThat(e.get("message").asText()).isNotBlank();
        }
        assertThat(errors).as("%s: %s", name, a.body()).anySatisfy(e -> {
            assertThat(e.get("document").asInt()).isEqualTo(document);
            assertThat(e.get("field").asText()).isEqualTo(field);
            assertThat(e.get("message").asText()).contains(fix);
        });
    }

    @Test
    void theCorpusHasAtLeastFiftyCases() {
        assertThat(malformed().count()).isGreaterThanOrEqualTo(50);
    }

    @Test
    void anAliasBombIsRefusedQuicklyWithLittleMemory() throws Exception {
        // 10^12 elements if expanded: the parser never expands an alias, it refuses each.
        StringBuilder b = new StringBuilder("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
        for (int i = 1; i < 13; i++) {
            b.append("a").append(i).append(": &a").append(i).append(" [");
            for (int j = 0; j < 10; j++) b.append(j == 0 ? "" : ", ").append("*a").append(i - 1);
            b.append("]\n");
        }
        String bomb = b + good().replace("network: none", "network: none\n    command: *a12").replace("    command: [sh", "    x: [sh");
        String fanOut = "a: &a [" + "x, ".repeat(1000) + "x]\nb: [" + "*a, ".repeat(20_000) + "*a]\n" + good();
        for (String body : List.of(bomb, fanOut)) {
            long allocatedBefore = allocatedBytes();
            long t0 = System.nanoTime();
            Answer a = api.post("/v1/pushes", body.getBytes(StandardCharsets.UTF_8), Map.of());
            Duration took = Duration.ofNanos(System.nanoTime() - t0);
            long allocated = allocatedBytes() - allocatedBefore;

            assertThat(a.status()).isEqualTo(400);
            assertThat(a.json().get("errors")).anySatisfy(e -> assertThat(e.get("message").asText()).contains("alias"));
            assertThat(a.json().get("errors").size()).isLessThanOrEqualTo(ManifestParser.MAX_ERRORS + 1);
            assertThat(took).isLessThan(Duration.ofSeconds(3));
            // Every thread of this JVM together (HTTP workers, the agent, ZooKeeper, this one): far below what an
            // expansion would need (gigabytes), bounded by a small multiple of the body.
            assertThat(allocated).as("bytes allocated").isLessThan(256L << 20);
        }
    }

    @Test
    void anOversizedBodyIs413() throws Exception {
        byte[] big = new byte[HttpApi.MAX_BODY + 1];
        Arrays.fill(big, (byte) '#');
        Answer tooBig = api.post("/v1/pushes", big, Map.of());
        assertThat(tooBig.status()).isEqualTo(413);
        assertThat(tooBig.json().get("error").asText()).contains("split it into several pushes");
    }

    @Test
    void aNonUtf8BodyIs400() throws Exception {
        byte[] latin1 = (good() + "# caf\u00e9\n").getBytes(StandardCharsets.ISO_8859_1);
        Answer notUtf8 = api.post("/v1/pushes", latin1, Map.of());
        assertThat(notUtf8.status()).isEqualTo(400);
        assertThat(notUtf8.json().at("/errors/0/document").asInt()).isEqualTo(1);
        assertThat(notUtf8.json().at("/errors/0/message").asText()).contains("save the manifest as UTF-8");
    }

    Stream<String> badRevisions() {
        return Stream.of("r 1;rm -rf /", "../../etc", "-r1", "r$(id)", "x".repeat(200));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("badRevisions")
    void aBadRevisionIs400(String rev) throws Exception {
        Answer badRev = api.post("/v1/pushes", good().getBytes(StandardCharsets.UTF_8), Map.of("X-Mesh-Revision", rev));
        assertThat(badRev.status()).as(rev).isEqualTo(400);
        assertThat(badRev.json().at("/errors/0/document").asInt()).isEqualTo(0);
        assertThat(badRev.json().at("/errors/0/field").asText()).isEqualTo("X-Mesh-Revision");
        assertThat(badRev.json().at("/errors/0/message").asText()).contains("such as a git sha or r2");
    }

    /** Every node under /mesh/desired and /mesh/pushes, and those two: path to data, mzxid, version, cversion. */
    private Map<String, String> snapshot() throws Exception {
        Map<String, String> out = new TreeMap<>();
        for (String root : List.of(zk.paths().desired(), zk.paths().pushes())) {
            Stat rs = new Stat();
            byte[] rd = zk.client().getData().storingStatIn(rs).forPath(root);
            out.put(root, new String(rd, StandardCharsets.UTF_8) + " " + rs);
            for (String c : zk.client().getChildren().forPath(root)) {
                Stat s = new Stat();
                byte[] d = zk.client().getData().storingStatIn(s).forPath(root + "/" + c);
                out.put(root + "/" + c, new String(d, StandardCharsets.UTF_8) + " " + s);
            }
        }
        return out;
    }

    private static long allocatedBytes() {
        com.sun.management.ThreadMXBean t = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        return Arrays.stream(t.getThreadAllocatedBytes(t.getAllThreadIds())).filter(n -> n > 0).sum();
    }
}
