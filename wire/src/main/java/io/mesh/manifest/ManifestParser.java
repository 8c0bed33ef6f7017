package io.mesh.manifest;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.error.MarkedYAMLException;

import java.io.IOException;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Parses and validates a manifest: YAML, one module per document (SPEC.md, "Manifest").
 *
 * <p>Every document is checked field by field before anything is returned: unknown fields, wrong types, bad
 * names, bad cron expressions and time zones, bad durations, a {@code while-stopped} or {@code volumes-from} that
 * names no container of the module, duplicate keys, duplicate modules, and two containers of different modules with
 * one Docker name ({@link #dockerNameTaken}). All problems are collected and thrown
 * together as a {@link ManifestException}, so a push is either entirely valid or not written at all.
 *
 * <p>YAML safety: SnakeYAML's alias, nesting and size limits are set ({@link LoaderOptions}); Jackson builds only
 * plain trees, never Java types named by tags.
 */
public final class ManifestParser {
    private static final Pattern HOST = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,62}");
    /** A secret delivered as a variable: a name every shell and program reads. */
    private static final Pattern ENV_KEY = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    /** An {@code env} key: Docker takes any; '.' and '-' too, as settings such as OpenSearch's {@code discovery.type} need. */
    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_.-]*");
    private static final Pattern NETWORK = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}");
    private static final Pattern VOLUME_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,127}");
    private static final Pattern PORT = Pattern.compile("(?:(\\d{1,3}(?:\\.\\d{1,3}){3}):)?(\\d{1,5}):(\\d{1,5})(?:/(tcp|udp))?");
    private static final Pattern IMAGE = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,254}");
    private static final Set<String> RESTART = Set.of("no", "on-failure", "unless-stopped", "always");
    private static final Set<String> PULL = Arrays.stream(PullPolicy.values()).map(PullPolicy::wire).collect(Collectors.toUnmodifiableSet());

    static final Set<String> MODULE_FIELDS = Set.of("module", "hosts", "networks", "containers", "schedules", "rollout");
    static final Set<String> ROLLOUT_FIELDS = Set.of("max-parallel", "canary", "on-failure", "promote", "max-failed", "soak", "gate", "silence");
    static final Set<String> CONTAINER_FIELDS = union(Set.of("image", "command", "env", "network", "ports", "volumes", "restart",
            "stop-timeout", "privileged", "pid", "cap-add", "healthcheck", "ready", "depends-on", "secrets", "pull", "networks", "hooks"),
            ContainerFields.NAMES);
    private static final Set<String> SECRET_FIELDS = Set.of("file", "target");
    /** A file-delivered secret's name: it names nothing in Docker, only the secret in reasons. */
    private static final Pattern SECRET_NAME = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9._-]{0,62}");
    static final Set<String> HEALTHCHECK_FIELDS = Set.of("test", "interval", "timeout", "retries", "start-period");
    static final Set<String> READY_FIELDS = Set.of("min-healthy", "deadline");
    static final Set<String> HOOKS_FIELDS = Set.of("pre-stop", "post-start", "timeout");
    /** Linux capabilities a container may add ({@code cap-add}), as Docker names them (without {@code CAP_}). */
    public static final Set<String> CAPABILITIES = Set.of("ALL", "AUDIT_CONTROL", "AUDIT_READ", "AUDIT_WRITE", "BLOCK_SUSPEND",
            "BPF", "CHECKPOINT_RESTORE", "CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID", "IPC_LOCK", "IPC_OWNER",
            "KILL", "LEASE", "LINUX_IMMUTABLE", "MAC_ADMIN", "MAC_OVERRIDE", "MKNOD", "NET_ADMIN", "NET_BIND_SERVICE",
            "NET_BROADCAST", "NET_RAW", "PERFMON", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_ADMIN", "SYS_BOOT",
            "SYS_CHROOT", "SYSLOG", "SYS_MODULE", "SYS_NICE", "SYS_PACCT", "SYS_PTRACE", "SYS_RAWIO", "SYS_RESOURCE",
            "SYS_TIME", "SYS_TTY_CONFIG", "WAKE_ALARM");
    static final Set<String> SCHEDULE_FIELDS = Set.of("cron", "timezone", "while-stopped", "step", "timeout", "max-concurrent", "group",
            "jitter", "start-by", "gate", "silence");
    static final Set<String> SILENCE_FIELDS = Set.of("alertmanager", "matchers");
    /** A Prometheus label name (Alertmanager's matchers name labels). */
    private static final java.util.regex.Pattern LABEL_NAME = java.util.regex.Pattern.compile("[a-zA-Z_][a-zA-Z0-9_]*");
    static final Set<String> GATE_FIELDS = Set.of("prometheus", "on-blocked");
    static final Set<String> PROMETHEUS_FIELDS = Set.of("url", "query");
    static final Set<String> STEP_FIELDS = Set.of("image", "command", "env", "volumes-from", "volumes", "network");

    private static Set<String> union(Set<String> a, Set<String> b) {
        Set<String> all = new HashSet<>(a);
        all.addAll(b);
        return Set.copyOf(all);
    }

    /** Most problems listed in one {@link ManifestException}; the rest are counted. */
    public static final int MAX_ERRORS = 50;

    /** Largest manifest accepted, in characters. */
    public static final int MAX_CHARS = 1 << 20;

    /** Deepest nesting of lists and mappings accepted (the manifest itself needs 6). */
    public static final int MAX_DEPTH = 20;

    /*
     * Shared by every parser in the process: thread-safe once configured, and the mapper caches the deserializers it
     * builds (building ModuleSpec's costs more than parsing a module).
     */
    private static final YAMLFactory YAML = yamlFactory();
    /** The same limits for JSON: nesting depth; duplicate keys are TreeBuilder's. */
    private static final JsonFactory JSON = JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(MAX_DEPTH).build())
            .build();
    private static final ObjectMapper PLAIN = new ObjectMapper();

    /** A parser with mesh's YAML limits. Thread-safe. */
    public ManifestParser() {}

    private static YAMLFactory yamlFactory() {
        LoaderOptions loader = new LoaderOptions();
        loader.setAllowDuplicateKeys(false);
        loader.setMaxAliasesForCollections(20);
        loader.setNestingDepthLimit(MAX_DEPTH);
        loader.setCodePointLimit(MAX_CHARS);
        loader.setAllowRecursiveKeys(false);
        YAMLFactory factory = YAMLFactory.builder()
                .loaderOptions(loader)
                .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(MAX_DEPTH).build())
                .build();
        // Duplicate keys are found by TreeBuilder, which names their field path and reads on.
        factory.disable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
        // "key:" with nothing after it is null, as YAML says; only a quoted "" is the empty string.
        factory.enable(YAMLParser.Feature.EMPTY_STRING_AS_NULL);
        return factory;
    }

    /**
     * @param text the manifest: one or more YAML documents
     * @return the modules in document order
     * @throws ManifestException naming document, field and fix for every problem; nothing is returned then
     */
    public List<ModuleSpec> parse(String text) throws ManifestException {
        return parse(text, YAML, "YAML");
    }

    /**
     * Validates one module written as JSON, as the coordinator writes a desired node's {@code spec}: the same rules
     * and messages as {@link #parse(String)}, read with Jackson's JSON parser rather than SnakeYAML, which costs
     * several times more per document, and every agent validates every desired node it reads.
     * JSON is YAML's subset for these documents: every string is quoted, so no scalar is read differently.
     *
     * @param json one JSON object: module, hosts, containers, schedules
     * @return the module
     * @throws ManifestException naming field and fix for every problem, or when the text holds more than one module
     */
    public ModuleSpec parseJson(String json) throws ManifestException {
        List<ModuleSpec> modules = parse(json, JSON, "JSON");
        if (modules.size() != 1) {
            throw new ManifestException(List.of(new ManifestError(1, "", "one module expected, " + modules.size() + " found: give exactly one JSON object")));
        }
        return modules.get(0);
    }

    private List<ModuleSpec> parse(String text, JsonFactory factory, String syntax) throws ManifestException {
        List<ManifestError> errors = new ArrayList<>();
        List<ModuleSpec> modules = new ArrayList<>();
        if (text == null || text.isBlank()) {
            throw new ManifestException(List.of(new ManifestError(1, "", "the manifest is empty: give at least one module document (module, hosts, containers)")));
        }
        if (text.length() > MAX_CHARS) {
            throw new ManifestException(List.of(new ManifestError(1, "", "the manifest is over " + MAX_CHARS + " characters: split it into several pushes")));
        }
        Map<String, Integer> seen = new LinkedHashMap<>();
        Map<String, DockerNameOwner> dockerNames = new HashMap<>();
        int doc = 0;
        // The tree is built token by token (not with MappingIterator/readTree): a root-level list must stay one
        // document, duplicate keys and aliases must be reported with their field path, and scalars must keep
        // the text the operator wrote (env: {V: 1.10} is "1.10", not "1.1").
        try (JsonParser p = factory.createParser(text)) {
            while (true) {
                doc++;
                List<ManifestError> docErrors = new ArrayList<>();
                Map<String, String> raw = new HashMap<>();
                JsonNode node;
                try {
                    JsonToken t = p.nextToken();
                    if (t == null) break;
                    node = new TreeBuilder(p, doc, docErrors, raw).value(t, "");
                } catch (IOException | RuntimeException e) {
                    errors.addAll(docErrors);
                    errors.add(new ManifestError(doc, "", "not valid " + syntax + ": " + describe(e)));
                    break; // the stream cannot be read past a syntax error
                }
                ModuleSpec m = docErrors.isEmpty() ? module(doc, node, docErrors, raw) : null;
                errors.addAll(docErrors);
                if (m != null && docErrors.isEmpty()) {
                    Integer first = seen.putIfAbsent(m.module(), doc);
                    if (first != null) {
                        errors.add(new ManifestError(doc, "module", "module '" + m.module() + "' is already defined in document " + first + ": one document per module, merge the two or rename one"));
                    } else {
                        modules.add(m);
                        for (String c : m.containers().keySet()) {
                            DockerNameOwner other = dockerNames.putIfAbsent(m.dockerName(c), new DockerNameOwner(m.module(), c, "document " + doc));
                            if (other != null) errors.add(dockerNameTaken(doc, m.module(), c, other));
                        }
                    }
                }
            }
        } catch (IOException e) {
            errors.add(new ManifestError(Math.max(doc, 1), "", "not valid " + syntax + ": " + describe(e)));
        }
        if (errors.isEmpty() && modules.isEmpty()) {
            errors.add(new ManifestError(1, "", "the manifest holds no module: give at least one document with module, hosts and containers"));
        }
        if (errors.size() > MAX_ERRORS) {
            int more = errors.size() - MAX_ERRORS;
            ManifestError last = errors.get(MAX_ERRORS - 1);
            errors = new ArrayList<>(errors.subList(0, MAX_ERRORS));
            errors.add(new ManifestError(last.document(), "", more + " more problems not listed: fix those above and push again"));
        }
        if (!errors.isEmpty()) throw new ManifestException(errors);
        return modules;
    }

    /**
     * Who already has a Docker name: container {@code container} of module {@code module}, found at {@code where}
     * (such as {@code document 1}, or a desired node's path).
     *
     * @param module    the module
     * @param container the container name within it
     * @param where     where that module was read, for the message
     */
    public record DockerNameOwner(String module, String container, String where) {}

    /**
     * The one rule that Docker names are unique across modules (SPEC.md, "ZooKeeper layout": a container's Docker
     * name is {@code <module>-<name>}, so module {@code store} container {@code cache-db} and module
     * {@code store-cache} container {@code db} are both {@code store-cache-db}), as the error that names both
     * modules and the name. Used within a push here and against the desired state by the coordinator.
     *
     * @param doc       the document of the container that came second
     * @param module    its module
     * @param container its name
     * @param other     who has the Docker name already
     * @return the error, on field {@code containers.<container>}
     */
    public static ManifestError dockerNameTaken(int doc, String module, String container, DockerNameOwner other) {
        String name = ModuleSpec.dockerName(module, container);
        return new ManifestError(doc, "containers." + container, "Docker name '" + name + "' of container '" + container
                + "' of module '" + module + "' is also the Docker name of container '" + other.container() + "' of module '"
                + other.module() + "' (" + other.where() + "): a Docker name is <module>-<container> and must be unique across "
                + "modules, so rename one of the two containers, or one of the modules");
    }

    private static final String SYNTAX_HINT = ": check the indentation (spaces, not tabs), the quoting and the brackets near there";

    private static String describe(Exception e) {
        String what;
        String loc = "";
        if (e instanceof JsonProcessingException j) {
            if (j.getLocation() != null && j.getLocation().getLineNr() > 0) {
                loc = " (line " + j.getLocation().getLineNr() + ", column " + j.getLocation().getColumnNr() + ")";
            }
            what = j.getOriginalMessage();
            if (j.getCause() instanceof MarkedYAMLException y && y.getProblem() != null) {
                what = (y.getContext() == null ? "" : y.getContext() + ": ") + y.getProblem();
            }
        } else {
            what = e.getMessage();
        }
        what = what == null ? e.getClass().getSimpleName() : what.lines().findFirst().orElse("").trim();
        if (what.contains("nesting depth")) {
            return "nested deeper than " + MAX_DEPTH + " levels" + loc + ": a manifest needs only a few levels, flatten it";
        }
        if (what.startsWith("Expected a field name")) {
            return "a key is a list, a mapping or an alias" + loc + ": keys must be plain names such as image";
        }
        return what + loc + SYNTAX_HINT;
    }

    /**
     * Builds the plain tree of one document from the parser's tokens. Duplicate keys, aliases and tags are
     * recorded as errors with their field path; the non-string scalars' text is kept in {@code raw} by path.
     */
    private static final class TreeBuilder {
        private final JsonParser p;
        private final Check c;
        private final Map<String, String> raw;

        TreeBuilder(JsonParser p, int doc, List<ManifestError> errors, Map<String, String> raw) {
            this.p = p;
            this.c = new Check(doc, errors, Map.of());
            this.raw = raw;
        }

        JsonNode value(JsonToken t, String path) throws IOException {
            String at = path.isEmpty() ? "" : path;
            if (p instanceof YAMLParser y && y.isCurrentAlias()) {
                c.error(at, "the alias '*" + Check.printable(y.getText()) + "' is not supported: write the value out in full (mesh refuses YAML anchors and aliases)");
                return NullNode.getInstance();
            }
            if (p.getTypeId() != null) {
                String tag = String.valueOf(p.getTypeId()).replaceFirst("^tag:yaml\\.org,2002:", "!");
                c.error(at, "the tag '!" + Check.printable(tag) + "' is not supported: remove it, and quote the value if it must be a string");
                p.skipChildren();
                return NullNode.getInstance();
            }
            JsonNodeFactory f = JsonNodeFactory.instance;
            switch (t) {
                case START_OBJECT -> {
                    ObjectNode o = f.objectNode();
                    for (JsonToken k = p.nextToken(); k != JsonToken.END_OBJECT; k = p.nextToken()) {
                        String name = p.currentName();
                        String child = path.isEmpty() ? name : path + "." + name;
                        JsonToken v = p.nextToken();
                        if (o.has(name)) {
                            c.error(Check.printable(child), "the key '" + Check.printable(name) + "' appears twice in one mapping: keep only one");
                            p.skipChildren();
                        } else {
                            o.set(name, value(v, child));
                        }
                    }
                    return o;
                }
                case START_ARRAY -> {
                    ArrayNode a = f.arrayNode();
                    int i = 0;
                    for (JsonToken v = p.nextToken(); v != JsonToken.END_ARRAY; v = p.nextToken()) {
                        a.add(value(v, path + "[" + i++ + "]"));
                    }
                    return a;
                }
                case VALUE_STRING -> { return f.textNode(p.getText()); }
                case VALUE_NULL -> { return f.nullNode(); }
                case VALUE_TRUE, VALUE_FALSE -> {
                    raw.put(path, p.getText());
                    return f.booleanNode(t == JsonToken.VALUE_TRUE);
                }
                case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> {
                    raw.put(path, p.getText());
                    try {
                        return t == JsonToken.VALUE_NUMBER_INT ? f.numberNode(p.getBigIntegerValue()) : f.numberNode(p.getDecimalValue());
                    } catch (IOException | NumberFormatException e) {
                        return f.textNode(p.getText()); // .inf, .nan: keep as written
                    }
                }
                default -> { return f.textNode(p.getText()); }
            }
        }
    }

    private ModuleSpec module(int doc, JsonNode node, List<ManifestError> errors, Map<String, String> raw) {
        Check c = new Check(doc, errors, raw);
        if (node == null || node.isNull() || node.isMissingNode() || (node.isTextual() && node.asText().isBlank())) {
            c.error("", "the document is empty: remove the extra '---', or give module, hosts and containers");
            return null;
        }
        if (!node.isObject()) {
            c.error("", "the document must be a mapping with module, hosts and containers, not a " + kind(node));
            return null;
        }
        c.onlyFields(node, "", MODULE_FIELDS);
        String module = c.name(node.get("module"), "module", true);
        List<String> hosts = c.hosts(node.get("hosts"));
        Set<String> networks = NetworkFields.module(c, (ObjectNode) node);
        Set<String> networkKeys = new HashSet<>();
        if (node.get("networks") != null && node.get("networks").isObject()) node.get("networks").fieldNames().forEachRemaining(networkKeys::add);
        JsonNode containers = node.get("containers");
        Set<String> containerNames = new HashSet<>();
        Set<String> badNames = new HashSet<>(); // container keys refused by the name rule, already reported
        if (containers == null) {
            c.error("containers", "missing: give a mapping of container name to its image and settings");
        } else if (!containers.isObject()) {
            c.error("containers", "must be a mapping of container name to settings, not a " + kind(containers));
        } else if (containers.isEmpty()) {
            // An agent reading the desired node back would find no containers and refuse it on every host.
            c.error("containers", "empty: give at least one container, as name: {image: ...}");
        } else {
            for (Map.Entry<String, JsonNode> e : containers.properties()) {
                String path = "containers." + Check.printable(e.getKey());
                if (c.nameOk(e.getKey(), path)) containerNames.add(e.getKey());
                else badNames.add(e.getKey());
                container(c, path, e.getValue());
                if (e.getValue() instanceof ObjectNode o) NetworkFields.container(c, path, o, networks, networkKeys);
            }
        }
        JsonNode schedules = node.get("schedules");
        if (schedules != null && !schedules.isNull()) {
            if (!schedules.isObject()) {
                c.error("schedules", "must be a mapping of schedule name to cron, step and timeout, not a " + kind(schedules));
            } else {
                for (Map.Entry<String, JsonNode> e : schedules.properties()) {
                    String path = "schedules." + Check.printable(e.getKey());
                    c.nameOk(e.getKey(), path);
                    schedule(c, path, e.getValue(), containerNames, badNames);
                }
            }
        }
        if (containers != null && containers.isObject()) dependsOn(c, (ObjectNode) containers, containerNames);
        NetworkFields.uniqueNames(c, containers);
        rollout(c, node);
        if (!errors.isEmpty() || module == null || hosts == null) return null;
        try {
            ObjectNode copy = ((ObjectNode) node).deepCopy();
            return PLAIN.treeToValue(copy, ModuleSpec.class);
        } catch (IOException | IllegalArgumentException e) {
            c.error("", "cannot be read as a module: " + describe(e));
            return null;
        }
    }

    private void container(Check c, String path, JsonNode node) {
        if (node == null || !node.isObject()) {
            c.error(path, "must be a mapping with at least image, not a " + kind(node));
            return;
        }
        c.onlyFields(node, path, CONTAINER_FIELDS);
        c.image(node.get("image"), path + ".image");
        c.stringList(node.get("command"), path + ".command", false);
        c.env(node.get("env"), path + ".env");
        String network = c.network(node.get("network"), path + ".network");
        JsonNode ports = node.get("ports");
        List<String> portList = c.stringList(ports, path + ".ports", false);
        if (portList != null && !portList.isEmpty()) {
            // Ports take effect only on bridge networks. With host or none Docker discards them, and so does
            // mesh (SPEC's own example sets them with network: host), rather than refusing the manifest.
            for (int i = 0; i < portList.size(); i++) {
                var m = PORT.matcher(portList.get(i));
                if (!m.matches() || !portOk(m.group(2)) || !portOk(m.group(3))) {
                    c.error(path + ".ports[" + i + "]", "'" + portList.get(i) + "' is not a port binding: write \"hostPort:containerPort\", such as \"5000:5000\" (ports 1-65535)");
                }
            }
        }
        c.volumes(node.get("volumes"), path + ".volumes");
        secrets(c, path, node);
        JsonNode restart = node.get("restart");
        if (restart != null && restart.isBoolean() && "no".equals(c.text(restart, path + ".restart")) && node instanceof ObjectNode o) {
            restart = o.textNode("no"); // YAML 1.1 reads a bare no as false; the operator wrote the policy "no"
            o.set("restart", restart);
        }
        if (restart != null && !(restart.isTextual() && RESTART.contains(restart.asText()))) {
            c.error(path + ".restart", "must be one of no, on-failure, unless-stopped, always" + (restart.isBoolean() ? " (write \"no\" in quotes)" : "") + "; got " + show(restart));
        }
        c.duration(node.get("stop-timeout"), path + ".stop-timeout", Duration.ofHours(24));
        JsonNode pull = node.get("pull");
        if (pull != null && !(pull.isTextual() && PULL.contains(pull.asText()))) {
            c.error(path + ".pull", "must be missing (pull when the image is not on the host; the default), always (pull at every"
                    + " apply) or never (only an image already on the host); got " + show(pull));
        }
        JsonNode privileged = node.get("privileged");
        if (privileged != null && !privileged.isBoolean()) {
            c.error(path + ".privileged", "must be true or false; got " + show(privileged));
        }
        JsonNode pid = node.get("pid");
        if (pid != null && !(pid.isTextual() && pid.asText().equals(ContainerSpec.PID_HOST))) {
            c.error(path + ".pid", "must be host (share the host's process namespace), or left out; got " + show(pid));
        }
        healthcheck(c, path + ".healthcheck", node.get("healthcheck"));
        ready(c, path + ".ready", node.get("ready"));
        hooks(c, path + ".hooks", node.get("hooks"));
        if (node instanceof ObjectNode o) ContainerFields.check(c, path, o);
        List<String> caps = c.stringList(node.get("cap-add"), path + ".cap-add", false);
        if (caps != null) {
            Set<String> dup = new HashSet<>();
            for (int i = 0; i < caps.size(); i++) {
                String cap = caps.get(i);
                if (!CAPABILITIES.contains(cap)) {
                    c.error(path + ".cap-add[" + i + "]", "'" + Check.printable(cap) + "' is not a Linux capability: use an upper-case name without CAP_, such as NET_ADMIN or SYS_PTRACE");
                } else if (!dup.add(cap)) {
                    c.error(path + ".cap-add[" + i + "]", "'" + cap + "' is listed twice: name each capability once");
                }
            }
        }
    }

    /**
     * {@code secrets} (SPEC.md, "Secrets"; decision 18): {@code NAME: {file}} is an environment variable, so NAME follows
     * the variable rule and must not also be in {@code env}; {@code name: {file, target}} is mounted read-only at an
     * absolute target that no other secret, volume or tmpfs of the container uses. {@code file} is relative to the agent's
     * secrets dir and stays inside it as written (no {@code ..}); where it leads after links is the agent's check.
     */
    private void secrets(Check c, String container, JsonNode node) {
        JsonNode secrets = node.get("secrets");
        if (secrets == null || secrets.isNull()) return;
        String path = container + ".secrets";
        if (!secrets.isObject()) {
            c.error(path, "must be a mapping of name to {file: relative/path} (an environment variable) or {file: ..., target: /abs/path}"
                    + " (a file mounted read-only); got " + show(secrets));
            return;
        }
        JsonNode env = node.get("env");
        Set<String> taken = new HashSet<>(); // container paths of volumes and earlier secrets
        List<String> volumes = node.get("volumes") != null && node.get("volumes").isArray() ? c.quietStrings(node.get("volumes")) : List.of();
        for (String v : volumes) {
            String[] parts = v.split(":", -1);
            if (parts.length >= 2) taken.add(parts[1]);
        }
        // Docker refuses a bind at a tmpfs's own path ("Duplicate mount point") at create; one under a tmpfs works.
        JsonNode tmpfsNode = node.get("tmpfs");
        Set<String> tmpfs = new HashSet<>();
        for (String t : tmpfsNode == null ? List.<String>of() : tmpfsNode.isTextual() ? List.of(tmpfsNode.asText()) : c.quietStrings(tmpfsNode)) {
            tmpfs.add(t.split(":", 2)[0]);
        }
        for (Map.Entry<String, JsonNode> e : secrets.properties()) {
            String name = e.getKey();
            String p = path + "." + Check.printable(name);
            JsonNode s = e.getValue();
            if (!(s instanceof ObjectNode)) {
                c.error(p, "must be {file: relative/path} or {file: relative/path, target: /abs/path}; got " + show(s));
                continue;
            }
            c.onlyFields(s, p, SECRET_FIELDS);
            c.secretFile(s.get("file"), p + ".file");
            JsonNode target = s.get("target");
            if (target == null) {
                if (!ENV_KEY.matcher(name).matches()) {
                    c.error(p, "'" + Check.printable(name) + "' is not a variable name (letters, digits and '_', not starting with a digit):"
                            + " rename it, or give a target to mount it as a file");
                } else if (env != null && env.isObject() && env.has(name)) {
                    c.error(p, "'" + name + "' is also set in env: give the variable once, in env or in secrets");
                }
                continue;
            }
            if (!SECRET_NAME.matcher(name).matches()) {
                c.error(p, "'" + Check.printable(name) + "' is not a secret name: use letters, digits, '_', '.' and '-', at most 63 characters");
            }
            if (!target.isTextual() || !ContainerFields.cleanAbsolute(target.asText()) || target.asText().equals("/")) {
                c.error(p + ".target", "must be an absolute, clean path in the container other than /, such as /run/secrets/tls.key; got " + show(target));
            } else if (tmpfs.contains(target.asText())) {
                c.error(p + ".target", "'" + target.asText() + "' is also a tmpfs of this container, and Docker mounts one thing at a path:"
                        + " mount the secret at another path (a file under the tmpfs works, such as " + target.asText() + "/" + Check.printable(name) + "),"
                        + " or remove the tmpfs");
            } else if (!taken.add(target.asText())) {
                c.error(p + ".target", "'" + target.asText() + "' is already mounted by a volume or another secret of this container: give each its own path");
            }
        }
    }

    /**
     * {@code healthcheck} (SPEC.md, "Health and readiness"): {@code test} is {@code [CMD, ...]},
     * {@code [CMD-SHELL, "..."]} or {@code [NONE]}; a plain string is compose's shorthand for {@code CMD-SHELL}.
     */
    private void healthcheck(Check c, String path, JsonNode node) {
        if (node == null) return;
        if (!(node instanceof ObjectNode o)) {
            c.error(path, "must be a mapping with test (and interval, timeout, retries, start-period), not a " + kind(node));
            return;
        }
        c.onlyFields(node, path, HEALTHCHECK_FIELDS);
        JsonNode test = node.get("test");
        if (test != null && test.isTextual()) {
            test = o.arrayNode().add("CMD-SHELL").add(test.asText()); // compose's shorthand
            o.set("test", test);
        }
        List<String> t = c.stringList(test, path + ".test", true);
        if (t != null) {
            String kind = t.isEmpty() ? "" : t.get(0);
            if (!Set.of("CMD", "CMD-SHELL", "NONE").contains(kind)) {
                c.error(path + ".test", "must start with CMD, CMD-SHELL or NONE, such as [\"CMD-SHELL\", \"wget -q -O- http://127.0.0.1:5000/ || exit 1\"]");
            } else if (kind.equals("NONE") && t.size() > 1) {
                c.error(path + ".test", "[NONE] turns the image's healthcheck off and takes nothing after it");
            } else if (!kind.equals("NONE") && (t.size() < 2 || t.get(1).isBlank())) {
                c.error(path + ".test", "gives no command after " + kind + ": add the command to run");
            } else if (kind.equals("NONE") && node.size() > 1) {
                c.error(path, "with test [NONE] there is no check to time: remove interval, timeout, retries and start-period");
            }
        }
        for (String f : List.of("interval", "timeout", "start-period")) c.duration(node.get(f), path + "." + f, Duration.ofHours(1));
        JsonNode retries = node.get("retries");
        if (retries != null && !(retries.isIntegralNumber() && retries.canConvertToInt() && retries.asInt() >= 1 && retries.asInt() <= 100)) {
            c.error(path + ".retries", "must be a whole number from 1 to 100 (failures in a row that make it unhealthy); got " + show(retries));
        }
    }

    /**
     * {@code depends-on} of every container: compose's two forms, a list of names ({@code condition: started}) or a
     * mapping of name to {@code {condition: started | healthy}}, rewritten to the mapping; each name a container of the
     * module other than itself; {@code healthy} only on a dependency with a {@code healthcheck}; no cycle.
     */
    private void dependsOn(Check c, ObjectNode containers, Set<String> names) {
        Map<String, Set<String>> edges = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> e : containers.properties()) {
            if (!(e.getValue() instanceof ObjectNode container) || !container.has("depends-on")) continue;
            String path = "containers." + Check.printable(e.getKey()) + ".depends-on";
            JsonNode d = container.get("depends-on");
            ObjectNode normal = PLAIN.createObjectNode();
            if (d.isArray()) {
                for (JsonNode n : d) {
                    if (!n.isTextual()) {
                        c.error(path, "list a container's name as text, such as [db], not a " + kind(n));
                        continue;
                    }
                    normal.putObject(n.asText()).put("condition", ContainerSpec.DependsOn.STARTED);
                }
            } else if (d.isObject()) {
                for (Iterator<Map.Entry<String, JsonNode>> j = d.fields(); j.hasNext(); ) {
                    Map.Entry<String, JsonNode> dep = j.next();
                    String at = path + "." + Check.printable(dep.getKey());
                    JsonNode cond = dep.getValue() == null ? null : dep.getValue().get("condition");
                    if (!(dep.getValue() instanceof ObjectNode o) || o.size() != 1 || cond == null || !cond.isTextual()
                            || !Set.of(ContainerSpec.DependsOn.STARTED, ContainerSpec.DependsOn.HEALTHY).contains(cond.asText())) {
                        c.error(at, "must be {condition: started} or {condition: healthy} (compose's service_started and service_healthy); got " + show(dep.getValue()));
                        continue;
                    }
                    normal.putObject(dep.getKey()).put("condition", cond.asText());
                }
            } else {
                c.error(path, "must be a list of container names, such as [db], or a mapping such as {db: {condition: healthy}}, not a " + kind(d));
                continue;
            }
            Set<String> to = new LinkedHashSet<>();
            for (Iterator<Map.Entry<String, JsonNode>> j = normal.fields(); j.hasNext(); ) {
                Map.Entry<String, JsonNode> dep = j.next();
                String at = path + "." + Check.printable(dep.getKey());
                if (dep.getKey().equals(e.getKey())) {
                    c.error(at, "a container cannot depend on itself: remove it");
                } else if (!names.contains(dep.getKey())) {
                    c.error(at, "'" + Check.printable(dep.getKey()) + "' is not a container of this module: depends-on names containers of the same module " + new TreeSet<>(names));
                } else {
                    to.add(dep.getKey());
                    JsonNode target = containers.get(dep.getKey());
                    JsonNode hc = target == null ? null : target.get("healthcheck");
                    boolean checked = hc != null && hc.isObject() && !(hc.path("test").isArray() && "NONE".equals(hc.path("test").path(0).asText()));
                    if (ContainerSpec.DependsOn.HEALTHY.equals(dep.getValue().path("condition").asText()) && !checked) {
                        c.error(at, "condition healthy needs a healthcheck on " + Check.printable(dep.getKey())
                                + ": give it one, or use condition: started");
                    }
                }
            }
            container.set("depends-on", normal);
            edges.put(e.getKey(), to);
        }
        List<String> cycle = cycle(edges);
        if (!cycle.isEmpty()) {
            c.error("containers." + Check.printable(cycle.get(0)) + ".depends-on", "a cycle: " + String.join(" -> ", cycle)
                    + ": no container of it could start first; remove one of these dependencies");
        }
    }

    /** @return one cycle of the graph as its path ({@code a, b, a}), or empty when there is none */
    static List<String> cycle(Map<String, Set<String>> edges) {
        Map<String, Integer> state = new HashMap<>(); // 1 on the path, 2 done
        Deque<String> path = new ArrayDeque<>();
        for (String start : new TreeSet<>(edges.keySet())) {
            List<String> found = visit(start, edges, state, path);
            if (!found.isEmpty()) return found;
        }
        return List.of();
    }

    private static List<String> visit(String n, Map<String, Set<String>> edges, Map<String, Integer> state, Deque<String> path) {
        Integer s = state.get(n);
        if (s != null && s == 2) return List.of();
        if (s != null && s == 1) {
            List<String> onPath = new ArrayList<>(path);
            List<String> loop = new ArrayList<>(onPath.subList(onPath.indexOf(n), onPath.size()));
            loop.add(n);
            return loop;
        }
        state.put(n, 1);
        path.addLast(n);
        for (String m : edges.getOrDefault(n, Set.of())) {
            List<String> found = visit(m, edges, state, path);
            if (!found.isEmpty()) return found;
        }
        path.removeLast();
        state.put(n, 2);
        return List.of();
    }

    /**
     * {@code rollout} (SPEC.md, "Rollouts" and "The rest of the operator's stack"): {@code max-parallel} a whole number
     * from 1 or a percentage from 1% to 100% (stored as text), {@code canary} a whole number from 0, {@code on-failure}
     * pause, revert or continue, {@code promote} auto or manual, {@code max-failed} a whole number from 0 or a
     * percentage from 0% to 100% (stored as text), {@code soak} a duration up to 24 h, {@code gate} as a schedule's but
     * {@code on-blocked: wait} only.
     */
    private void rollout(Check c, JsonNode module) {
        JsonNode node = module.get("rollout");
        if (node == null || node.isNull()) return;
        if (!(node instanceof ObjectNode o)) {
            c.error("rollout", "must be a mapping with max-parallel, canary and on-failure, such as {max-parallel: 1, canary: 1}, not a " + kind(node));
            return;
        }
        c.onlyFields(node, "rollout", ROLLOUT_FIELDS);
        hostsOrPercent(c, o, node, "max-parallel", RolloutSpec.MAX_PARALLEL,
                "must be a whole number of hosts from 1, such as 2, or a percentage of the targeted hosts from 1% to 100%, such as \"25%\"");
        JsonNode canary = node.get("canary");
        if (canary != null && !(canary.isIntegralNumber() && canary.canConvertToInt() && canary.asInt() >= 0 && canary.asInt() <= 1000)) {
            c.error("rollout.canary", "must be a whole number of hosts from 0 to 1000 (the hosts that go first); got " + show(canary));
        }
        JsonNode onFailure = node.get("on-failure");
        if (onFailure != null && !(onFailure.isTextual() && Set.of("pause", "revert", "continue").contains(onFailure.asText()))) {
            c.error("rollout.on-failure", "must be pause, revert or continue (what a host's failure does to the rollout); got " + show(onFailure));
        }
        JsonNode promote = node.get("promote");
        if (promote != null && !(promote.isTextual() && Set.of("auto", "manual").contains(promote.asText()))) {
            c.error("rollout.promote", "must be auto or manual (manual: the hosts after the canaries wait for mesh rollout promote MODULE); got "
                    + show(promote));
        }
        hostsOrPercent(c, o, node, "max-failed", RolloutSpec.MAX_FAILED, "must be a whole number of hosts from 0, such as 1, or a percentage "
                + "of the targeted hosts from 0% to 100%, such as \"10%\" (the failures on-failure waits for)");
        c.duration(node.get("soak"), "rollout.soak", Duration.ofHours(24));
        gate(c, "rollout.gate", node.get("gate"));
        silence(c, "rollout.silence", node.get("silence"));
        JsonNode gate = node.get("gate");
        if (gate != null && gate.isObject() && gate.has("on-blocked") && "skip".equals(gate.get("on-blocked").asText())) {
            c.error("rollout.gate.on-blocked", "must be wait for a rollout: a host whose gate is blocked waits in its wave and asks"
                    + " again (skip is a window's: it skips that window)");
        }
    }

    /**
     * A rollout field that is a count of hosts or a percentage of them ({@code max-parallel}, {@code max-failed}):
     * written to the desired node as text, one form; refused naming the field, with {@code rule}, otherwise.
     *
     * @param form its pattern: group 1 the number, group 2 a {@code %} or nothing
     */
    private static void hostsOrPercent(Check c, ObjectNode o, JsonNode rollout, String field, Pattern form, String rule) {
        JsonNode v = rollout.get(field);
        if (v == null) return;
        String text = v.isTextual() || v.isIntegralNumber() ? c.text(v, "rollout." + field).strip() : "";
        Matcher m = form.matcher(text);
        if (!m.matches() || (!m.group(2).isEmpty() && Integer.parseInt(m.group(1)) > 100)) {
            c.error("rollout." + field, rule + "; got " + show(v));
        } else {
            o.put(field, text); // one form in the desired node: text
        }
    }

    /** {@code ready} (SPEC.md, "Health and readiness"): {@code min-healthy} may be {@code 0s}; it must be below the deadline. */
    private void ready(Check c, String path, JsonNode node) {
        if (node == null) return;
        if (!node.isObject()) {
            c.error(path, "must be a mapping with min-healthy and deadline, such as {min-healthy: 10s, deadline: 2m}, not a " + kind(node));
            return;
        }
        c.onlyFields(node, path, READY_FIELDS);
        Duration min = c.durationZeroAllowed(node.get("min-healthy"), path + ".min-healthy", Duration.ofHours(1));
        c.duration(node.get("deadline"), path + ".deadline", Duration.ofHours(24));
        JsonNode deadline = node.get("deadline");
        if (min != null && deadline != null && deadline.isTextual()) {
            try {
                Duration d = Durations.parse(deadline.asText());
                if (min.compareTo(d) >= 0) {
                    c.error(path + ".min-healthy", "'" + node.get("min-healthy").asText() + "' is not below the deadline '" + deadline.asText()
                            + "': a container could never be ready in time; give a shorter min-healthy or a longer deadline");
                }
            } catch (IllegalArgumentException e) {
                // reported by the duration check
            }
        } else if (min != null && deadline == null && min.compareTo(Durations.parse(ReadySpec.DEFAULT_DEADLINE)) >= 0) {
            c.error(path + ".min-healthy", "'" + node.get("min-healthy").asText() + "' is not below the default deadline, "
                    + ReadySpec.DEFAULT_DEADLINE + ": give a shorter min-healthy or a longer deadline");
        } else if (node.get("min-healthy") == null && deadline != null && deadline.isTextual()) {
            try {
                if (Durations.parse(deadline.asText()).compareTo(Durations.parseZeroAllowed(ReadySpec.DEFAULT_MIN_HEALTHY)) <= 0) {
                    c.error(path + ".deadline", "'" + deadline.asText() + "' is not above the default min-healthy, " + ReadySpec.DEFAULT_MIN_HEALTHY
                            + ": a container could never be ready in time; give a longer deadline or a shorter min-healthy");
                }
            } catch (IllegalArgumentException e) {
                // reported by the duration check
            }
        }
    }

    /**
     * {@code hooks} (SPEC.md, "The rest of the operator's stack"; decision 38): {@code pre-stop} and {@code post-start}
     * each one command as a non-empty list of strings, at least one of them; {@code timeout} a duration up to
     * {@link HooksSpec#MAX_TIMEOUT}.
     */
    private void hooks(Check c, String path, JsonNode node) {
        if (node == null) return;
        if (!node.isObject()) {
            c.error(path, "must be a mapping with pre-stop, post-start and timeout, such as {pre-stop: [sh, -c, \"drain\"], timeout: 30s}, not a " + kind(node));
            return;
        }
        c.onlyFields(node, path, HOOKS_FIELDS);
        if (!node.has("pre-stop") && !node.has("post-start")) {
            c.error(path, "has no hook: give pre-stop or post-start (a command as a list, such as [sh, -c, \"drain\"]), or leave hooks out");
        }
        for (String hook : List.of("pre-stop", "post-start")) {
            JsonNode h = node.get(hook);
            if (h == null) continue;
            if (!h.isArray()) {
                c.error(path + "." + hook, "must be one command as a list of strings, such as [sh, -c, \"echo drained\"] (run without a shell); got " + show(h));
                continue;
            }
            List<String> cmd = c.stringList(h, path + "." + hook, true);
            if (cmd != null && cmd.isEmpty()) {
                c.error(path + "." + hook, "is empty: give the command to run, such as [sh, -c, \"echo drained\"], or leave " + hook + " out");
            } else if (cmd != null && cmd.get(0).isBlank()) {
                c.error(path + "." + hook + "[0]", "is blank: the first item is the program to run, such as sh or /usr/local/bin/drain");
            }
        }
        c.duration(node.get("timeout"), path + ".timeout", HooksSpec.MAX_TIMEOUT);
    }

    private static boolean portOk(String p) {
        int n = Integer.parseInt(p);
        return n >= 1 && n <= 65535;
    }

    private void schedule(Check c, String path, JsonNode node, Set<String> containers, Set<String> badNames) {
        if (node == null || !node.isObject()) {
            c.error(path, "must be a mapping with cron and step, not a " + kind(node));
            return;
        }
        c.onlyFields(node, path, SCHEDULE_FIELDS);
        JsonNode cron = node.get("cron");
        if (cron == null) {
            c.error(path + ".cron", "missing: give a 5-field cron expression such as \"30 3 * * *\"");
        } else if (!cron.isTextual()) {
            c.error(path + ".cron", "must be a 5-field cron expression in quotes, such as \"30 3 * * *\"; got " + show(cron));
        } else {
            String expr = cron.asText().trim();
            if (expr.split("\\s+").length != 5) {
                c.error(path + ".cron", "'" + expr + "' is not a 5-field cron expression (minute hour day-of-month month day-of-week), such as \"30 3 * * *\"");
            } else {
                try {
                    CronTimes.check(expr);
                } catch (IllegalArgumentException e) {
                    c.error(path + ".cron", "'" + expr + "' is not a valid cron expression: " + e.getMessage()
                            + "; write minute hour day-of-month month day-of-week, such as \"30 3 * * *\"");
                }
            }
        }
        JsonNode tz = node.get("timezone");
        if (tz != null) {
            if (!tz.isTextual()) {
                c.error(path + ".timezone", "must be a time zone id such as UTC or Europe/Paris; got " + show(tz));
            } else {
                try {
                    ZoneId.of(tz.asText());
                } catch (DateTimeException e) {
                    c.error(path + ".timezone", "'" + tz.asText() + "' is not a time zone: use an IANA id such as UTC or Europe/Paris");
                }
            }
        }
        List<String> ws = c.stringList(node.get("while-stopped"), path + ".while-stopped", false);
        if (ws != null) {
            Set<String> dup = new HashSet<>();
            for (int i = 0; i < ws.size(); i++) {
                String w = ws.get(i);
                if (badNames.contains(w)) {
                    continue; // its container's name is wrong, and reported there
                } else if (!containers.contains(w)) {
                    c.error(path + ".while-stopped[" + i + "]", "'" + w + "' names no container of this module: use one of " + new TreeSet<>(containers));
                } else if (!dup.add(w)) {
                    c.error(path + ".while-stopped[" + i + "]", "'" + w + "' is listed twice: name each container once");
                }
            }
        }
        JsonNode step = node.get("step");
        if (step == null) {
            c.error(path + ".step", "missing: give the step's image and command");
        } else if (!step.isObject()) {
            c.error(path + ".step", "must be a mapping with image and command, not a " + kind(step));
        } else {
            String sp = path + ".step";
            c.onlyFields(step, sp, STEP_FIELDS);
            c.image(step.get("image"), sp + ".image");
            c.stringList(step.get("command"), sp + ".command", false);
            c.env(step.get("env"), sp + ".env");
            c.volumes(step.get("volumes"), sp + ".volumes");
            c.network(step.get("network"), sp + ".network");
            JsonNode vf = step.get("volumes-from");
            if (vf != null) {
                if (!vf.isTextual()) {
                    c.error(sp + ".volumes-from", "must be the name of a container of this module; got " + show(vf));
                } else if (!containers.contains(vf.asText()) && !badNames.contains(vf.asText())) {
                    c.error(sp + ".volumes-from", "'" + vf.asText() + "' names no container of this module: use one of " + new TreeSet<>(containers));
                }
            }
        }
        c.duration(node.get("timeout"), path + ".timeout", Duration.ofDays(2));
        fleetWide(c, path, node);
        gate(c, path + ".gate", node.get("gate"));
        silence(c, path + ".silence", node.get("silence"));
    }

    /**
     * A schedule's {@code silence} (SPEC.md, "The rest of the operator's stack"): {@code alertmanager} an http(s) URL,
     * {@code matchers} label names to values; {@code mesh_host} and {@code mesh_container} are mesh's to add.
     */
    private void silence(Check c, String path, JsonNode node) {
        if (node == null) return;
        if (!node.isObject()) {
            c.error(path, "must be a mapping with alertmanager and matchers, such as {alertmanager: http://127.0.0.1:9093, matchers: {job: registry}}, not a " + kind(node));
            return;
        }
        c.onlyFields(node, path, SILENCE_FIELDS);
        JsonNode url = node.get("alertmanager");
        if (url != null && url.isTextual() && credentials(url.asText())) {
            c.error(path + ".alertmanager", CREDENTIALS);
        } else if (url == null || !url.isTextual() || !httpUrl(url.asText())) {
            c.error(path + ".alertmanager", "must be the Alertmanager server's http or https URL, such as http://127.0.0.1:9093; got " + show(url));
        }
        JsonNode m = node.get("matchers");
        if (m == null) return;
        if (!m.isObject()) {
            c.error(path + ".matchers", "must be a mapping of label names to values, such as {job: registry}, not a " + kind(m));
            return;
        }
        m.fields().forEachRemaining(f -> {
            String k = f.getKey();
            if (!LABEL_NAME.matcher(k).matches()) {
                c.error(path + ".matchers." + Check.printable(k), "is not a label name: use letters, digits and '_', not starting with a digit, such as job");
            } else if (k.equals("mesh_host") || k.equals("mesh_container")) {
                c.error(path + ".matchers." + k, "is mesh's to add (the held container's host and name): leave it out");
            } else if (!f.getValue().isTextual() || f.getValue().asText().isEmpty()) {
                c.error(path + ".matchers." + k, "must be a label value in quotes, such as \"registry\"; got " + show(f.getValue()));
            }
        });
    }

    /**
     * A schedule's {@code gate} (SPEC.md, "The rest of the operator's stack"): {@code prometheus} with an http(s)
     * {@code url} and a {@code query}, {@code on-blocked} wait or skip.
     */
    private void gate(Check c, String path, JsonNode node) {
        if (node == null) return;
        if (!node.isObject()) {
            c.error(path, "must be a mapping with prometheus and on-blocked, such as {prometheus: {url: http://127.0.0.1:9090, query: 'ALERTS{severity=\"critical\"}'}, on-blocked: wait}, not a " + kind(node));
            return;
        }
        c.onlyFields(node, path, GATE_FIELDS);
        JsonNode p = node.get("prometheus");
        if (p == null || !p.isObject()) {
            c.error(path + ".prometheus", "must be a mapping with url and query, such as {url: http://127.0.0.1:9090, query: 'ALERTS{severity=\"critical\"}'}"
                    + (p == null ? "; it is missing" : ", not a " + kind(p)));
        } else {
            c.onlyFields(p, path + ".prometheus", PROMETHEUS_FIELDS);
            JsonNode url = p.get("url");
            if (url != null && url.isTextual() && credentials(url.asText())) {
                c.error(path + ".prometheus.url", CREDENTIALS);
            } else if (url == null || !url.isTextual() || !httpUrl(url.asText())) {
                c.error(path + ".prometheus.url", "must be the Prometheus server's http or https URL, such as http://127.0.0.1:9090; got " + show(url));
            }
            JsonNode query = p.get("query");
            if (query == null || !query.isTextual() || query.asText().isBlank() || query.asText().length() > 4096) {
                c.error(path + ".prometheus.query", "must be a PromQL query of up to 4096 characters, such as 'ALERTS{alertstate=\"firing\"}': any series in its answer blocks the window; got " + show(query));
            } else if (unbalanced(query.asText()) != null) {
                // A query Prometheus refuses blocks every window and wave for good: the obvious mistakes are refused here
                c.error(path + ".prometheus.query", unbalanced(query.asText()) + " in " + show(query) + ": Prometheus would refuse it, and a gate "
                        + "that cannot be asked blocks");
            }
        }
        JsonNode onBlocked = node.get("on-blocked");
        if (onBlocked != null && !(onBlocked.isTextual() && Set.of("wait", "skip").contains(onBlocked.asText()))) {
            c.error(path + ".on-blocked", "must be wait (ask again until start-by, then skipped) or skip; got " + show(onBlocked));
        }
    }

    /** Why a URL with {@code user:password@} is refused. */
    private static final String CREDENTIALS = "must not carry credentials (user:password@): the desired state is readable by every host and "
            + "mesh sends none; give the server's URL alone";

    /** @return true when {@code s} is a URL with a user part ({@code user:password@host}) */
    private static boolean credentials(String s) {
        try {
            return new java.net.URI(s).getRawUserInfo() != null;
        } catch (java.net.URISyntaxException e) {
            return false;
        }
    }

    /**
     * @param q a PromQL query
     * @return what is unbalanced in it, outside its quoted strings (a bracket not closed or not opened, a quote not
     *         closed), or {@code null} when nothing is
     */
    static String unbalanced(String q) {
        java.util.ArrayDeque<Character> open = new java.util.ArrayDeque<>();
        char quote = 0;
        for (int i = 0; i < q.length(); i++) {
            char ch = q.charAt(i);
            if (quote != 0) {
                if (ch == '\\' && quote != '`') i++;
                else if (ch == quote) quote = 0;
                continue;
            }
            switch (ch) {
                case '"', '\'', '`' -> quote = ch;
                case '(', '{', '[' -> open.push(ch);
                case ')', '}', ']' -> {
                    char want = ch == ')' ? '(' : ch == '}' ? '{' : '[';
                    if (open.isEmpty() || open.pop() != want) return "'" + ch + "' closes nothing opened";
                }
                default -> { }
            }
        }
        if (quote != 0) return "a " + quote + " is not closed";
        if (!open.isEmpty()) return "'" + open.peek() + "' is not closed";
        return null;
    }

    private static boolean httpUrl(String s) {
        try {
            java.net.URI u = new java.net.URI(s);
            return ("http".equals(u.getScheme()) || "https".equals(u.getScheme())) && u.getHost() != null && u.getQuery() == null
                    && u.getFragment() == null;
        } catch (java.net.URISyntaxException e) {
            return false;
        }
    }

    /**
     * A schedule's fleet-wide fields (SPEC.md, "Fleet-wide windows"): {@code max-concurrent} a whole number from 1,
     * {@code group} a name, {@code jitter} a duration from 0s below {@code start-by}, {@code start-by} a duration.
     */
    private void fleetWide(Check c, String path, JsonNode node) {
        JsonNode max = node.get("max-concurrent");
        if (max != null && (!max.isIntegralNumber() || max.asLong() < 1 || max.asLong() > 10_000)) {
            c.error(path + ".max-concurrent", "must be a whole number of hosts from 1, such as 1 (one host at a time); got " + show(max));
        }
        JsonNode group = node.get("group");
        if (group != null && (!group.isTextual() || !ModuleName.matches(group.asText()))) {
            c.error(path + ".group", "must be a name of lower-case letters, digits and '-', such as registries; got " + show(group));
        }
        Duration jitter = c.durationZeroAllowed(node.get("jitter"), path + ".jitter", Duration.ofDays(1));
        c.duration(node.get("start-by"), path + ".start-by", Duration.ofDays(2));
        JsonNode startBy = node.get("start-by");
        JsonNode timeout = node.get("timeout");
        try {
            Duration limit = startBy != null && startBy.isTextual() ? Durations.parse(startBy.asText())
                    : timeout != null && timeout.isTextual() ? Durations.parse(timeout.asText()) : Durations.parse(ScheduleSpec.DEFAULT_TIMEOUT);
            if (jitter != null && !jitter.isZero() && jitter.compareTo(limit) >= 0) {
                c.error(path + ".jitter", "'" + node.get("jitter").asText() + "' is not below start-by (" + (startBy != null ? startBy.asText()
                        : "the timeout, " + (timeout != null ? timeout.asText() : ScheduleSpec.DEFAULT_TIMEOUT)) + "): every window could be "
                        + "skipped; give a shorter jitter or a longer start-by");
            }
        } catch (IllegalArgumentException e) {
            // a bad start-by or timeout is reported by its own check
        }
    }

    private static String kind(JsonNode n) {
        if (n == null || n.isNull() || n.isMissingNode()) return "null";
        if (n.isObject()) return "mapping";
        if (n.isArray()) return "list";
        if (n.isTextual()) return "string";
        if (n.isNumber()) return "number";
        if (n.isBoolean()) return "boolean";
        return n.getNodeType().name().toLowerCase(Locale.ROOT);
    }

    private static String show(JsonNode n) {
        String s = n == null ? "nothing" : n.isContainerNode() ? "a " + kind(n) : n.toString();
        return s.length() > 80 ? s.substring(0, 77) + "..." : s;
    }

    /** Collects errors for one document. */
    static final class Check implements ContainerFields.Sink {
        private final int doc;
        private final List<ManifestError> errors;
        /** The text as written of each non-string scalar, by field path. */
        private final Map<String, String> raw;

        Check(int doc, List<ManifestError> errors, Map<String, String> raw) { this.doc = doc; this.errors = errors; this.raw = raw; }

        /** @return the scalar's text as the operator wrote it (for numbers and booleans taken as strings) */
        @Override
        public String text(JsonNode n, String path) {
            return n.isTextual() ? n.asText() : raw.getOrDefault(path, n.asText());
        }

        @Override
        public void error(String field, String message) { errors.add(new ManifestError(doc, field, message)); }

        void onlyFields(JsonNode node, String path, Set<String> allowed) {
            for (Iterator<String> i = node.fieldNames(); i.hasNext(); ) {
                String f = i.next();
                if (!allowed.contains(f)) {
                    error(path.isEmpty() ? printable(f) : path + "." + printable(f), "unknown field '" + printable(f) + "': allowed here are " + new TreeSet<>(allowed));
                }
            }
        }

        String name(JsonNode n, String path, boolean required) {
            if (n == null) {
                if (required) error(path, "missing: give a name of " + ModuleName.RULE);
                return null;
            }
            if (!n.isTextual()) {
                error(path, "must be a name of " + ModuleName.RULE + "; got " + show(n));
                return null;
            }
            return nameOk(n.asText(), path) ? n.asText() : null;
        }

        boolean nameOk(String name, String path) {
            if (!ModuleName.matches(name)) {
                error(path, "'" + printable(name) + "' is not a valid name: use " + ModuleName.RULE);
                return false;
            }
            return true;
        }

        List<String> hosts(JsonNode n) {
            if (n == null || n.isNull()) {
                error("hosts", "missing: give a list of host ids, such as [host-a], or [\"*\"] for every host");
                return null;
            }
            List<String> hosts = stringList(n, "hosts", true);
            if (hosts == null) return null;
            if (hosts.isEmpty()) {
                error("hosts", "is empty: name at least one host id, or [\"*\"] for every host");
                return null;
            }
            boolean ok = true;
            Set<String> seen = new HashSet<>();
            for (int i = 0; i < hosts.size(); i++) {
                String h = hosts.get(i);
                if (h.equals(ModuleSpec.ALL_HOSTS)) {
                    if (hosts.size() > 1) {
                        error("hosts[" + i + "]", "\"*\" means every host: give it alone, or list host ids without it");
                        ok = false;
                    }
                } else if (!HOST.matcher(h).matches()) {
                    error("hosts[" + i + "]", "'" + printable(h) + "' is not a host id: use letters, digits, '.', '_' and '-', such as host-a");
                    ok = false;
                } else if (!seen.add(h)) {
                    error("hosts[" + i + "]", "'" + h + "' is listed twice: name each host once");
                    ok = false;
                }
            }
            return ok ? hosts : null;
        }

        List<String> stringList(JsonNode n, String path, boolean required) {
            if (n == null || n.isNull()) {
                if (required) error(path, "missing: give a list of strings");
                return n == null ? null : List.of();
            }
            if (!n.isArray()) {
                error(path, "must be a list of strings, such as [\"a\", \"b\"]; got " + show(n));
                return null;
            }
            List<String> out = new ArrayList<>();
            boolean ok = true;
            for (int i = 0; i < n.size(); i++) {
                JsonNode e = n.get(i);
                if (!e.isTextual() && !(e.isNumber())) {
                    error(path + "[" + i + "]", "must be a string; got " + show(e));
                    ok = false;
                } else if (ContainerFields.hasControl(e.asText())) {
                    error(path + "[" + i + "]", "contains a control character: remove it");
                    ok = false;
                } else {
                    String t = text(e, path + "[" + i + "]");
                    if (!e.isTextual() && n instanceof ArrayNode a) a.set(i, a.textNode(t)); // a number, as written
                    out.add(t);
                }
            }
            return ok ? out : null;
        }

        void image(JsonNode n, String path) {
            if (n == null) {
                error(path, "missing: give an image reference such as mesh-demo/busybox:1");
            } else if (!n.isTextual() || !IMAGE.matcher(n.asText()).matches()) {
                error(path, "must be an image reference such as mesh-demo/registry:2.8.2; got " + show(n));
            }
        }

        void env(JsonNode n, String path) {
            if (n == null || n.isNull()) return;
            if (!n.isObject()) {
                error(path, "must be a mapping of variable name to value, such as {KEY: \"value\"}; got " + show(n));
                return;
            }
            for (Map.Entry<String, JsonNode> e : n.properties()) {
                if (!ENV_NAME.matcher(e.getKey()).matches()) {
                    error(path + "." + printable(e.getKey()), "'" + printable(e.getKey()) + "' is not a variable name: use letters, digits, '_', '.' and '-', not starting with a digit");
                }
                JsonNode v = e.getValue();
                String vp = path + "." + printable(e.getKey());
                if (!v.isValueNode() || v.isNull()) {
                    error(vp, "must be a string value such as \"text\" (write \"\" for an empty one); got " + show(v));
                } else if (v.asText().indexOf('\0') >= 0) {
                    error(vp, "contains a NUL character: remove it");
                }
            }
            // Numbers and booleans become the text the operator wrote (1.10 stays "1.10", yes stays "yes").
            if (n instanceof ObjectNode o) {
                o.fields().forEachRemaining(e -> { if (e.getValue().isValueNode() && !e.getValue().isTextual() && !e.getValue().isNull()) e.setValue(o.textNode(text(e.getValue(), path + "." + e.getKey()))); });
            }
        }

        String network(JsonNode n, String path) {
            if (n == null) return null;
            if (!n.isTextual() || !NETWORK.matcher(n.asText()).matches()) {
                error(path, "must be host, none, bridge or a network name (letters, digits, '_', '.', '-'); got " + show(n));
                return null;
            }
            return n.asText();
        }

        void volumes(JsonNode n, String path) {
            List<String> list = stringList(n, path, false);
            if (list == null) return;
            for (int i = 0; i < list.size(); i++) {
                String v = list.get(i);
                String p = path + "[" + i + "]";
                String[] parts = v.split(":", -1);
                if (parts.length < 2 || parts.length > 3 || (parts.length == 3 && !parts[2].equals("ro") && !parts[2].equals("rw"))) {
                    error(p, "'" + printable(v) + "' is not a volume: write \"<volume name or absolute host path>:<absolute container path>[:ro]\", such as \"store-data:/var/lib/registry\"");
                    continue;
                }
                String src = parts[0], dst = parts[1];
                if (src.startsWith("/")) {
                    if (!ContainerFields.cleanAbsolute(src)) error(p, "host path '" + printable(src) + "' must be absolute and clean (no '.', '..' or '//' segments)");
                } else if (!VOLUME_NAME.matcher(src).matches()) {
                    error(p, "'" + printable(src) + "' is neither a volume name (letters, digits, '_', '.', '-') nor an absolute host path");
                }
                if (!dst.startsWith("/") || !ContainerFields.cleanAbsolute(dst)) {
                    error(p, "container path '" + printable(dst) + "' must be absolute and clean, such as /var/lib/registry");
                }
            }
        }

        /**
         * A secret's {@code file}: relative to the secrets dir, clean, and inside it as written. It names where a
         * value lives, so showing it in an error leaks nothing.
         */
        void secretFile(JsonNode n, String path) {
            if (n == null) {
                error(path, "missing: give the file's path relative to the agent's --secrets-dir, such as db/password");
                return;
            }
            if (!n.isTextual() || n.asText().isEmpty()) {
                error(path, "must be a path relative to the agent's --secrets-dir, such as db/password; got " + show(n));
                return;
            }
            String f = n.asText();
            if (f.startsWith("/")) {
                error(path, "'" + printable(f) + "' is absolute: give it relative to the agent's --secrets-dir, such as db/password");
            } else if (ContainerFields.hasControl(f) || !ContainerFields.cleanAbsolute("/" + f) || f.endsWith("/")) {
                error(path, "'" + printable(f) + "' must be a clean relative path inside the agent's --secrets-dir (no '..', '.' or empty segments), such as db/password");
            }
        }

        /** @return the strings of a list already checked by {@link #stringList} (whose errors are reported there) */
        List<String> quietStrings(JsonNode n) {
            List<String> out = new ArrayList<>();
            n.forEach(e -> { if (e.isValueNode()) out.add(e.asText()); });
            return out;
        }

        void duration(JsonNode n, String path, Duration max) {
            if (n == null) return;
            if (!n.isTextual()) {
                error(path, "must be a duration in quotes such as \"30s\", \"30m\" or \"1h30m\"; got " + show(n));
                return;
            }
            try {
                if (Durations.parse(n.asText()).compareTo(max) > 0) {
                    error(path, "'" + n.asText() + "' is longer than the most allowed here, " + max.toString().substring(2).toLowerCase(Locale.ROOT) + ": give a shorter duration");
                }
            } catch (IllegalArgumentException e) {
                error(path, e.getMessage());
            }
        }

        /** @return the duration, or {@code null} when missing or refused (the refusal recorded) */
        Duration durationZeroAllowed(JsonNode n, String path, Duration max) {
            if (n == null) return null;
            if (!n.isTextual()) {
                error(path, "must be a duration in quotes such as \"0s\", \"10s\" or \"1m\"; got " + show(n));
                return null;
            }
            try {
                Duration d = Durations.parseZeroAllowed(n.asText());
                if (d.compareTo(max) > 0) {
                    error(path, "'" + n.asText() + "' is longer than the most allowed here, " + max.toString().substring(2).toLowerCase(Locale.ROOT) + ": give a shorter duration");
                    return null;
                }
                return d;
            } catch (IllegalArgumentException e) {
                error(path, e.getMessage());
                return null;
            }
        }

        static String printable(String s) { return Printable.of(s, 60); }
    }
}
