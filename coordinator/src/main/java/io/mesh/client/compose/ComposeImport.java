package io.mesh.client.compose;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.mesh.manifest.ManifestError;
import io.mesh.manifest.ManifestException;
import io.mesh.manifest.ManifestParser;
import io.mesh.manifest.ModuleName;
import io.mesh.manifest.ModuleSpec;
import io.mesh.manifest.Printable;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * {@code mesh import-compose}'s conversion (SPEC.md, "Containers"; decision 21): a compose file (the Compose
 * Specification) in, the module manifest out, or every field mesh does not do refused with its path. Pure: it reads no
 * file (but names the compose file's directory, against which relative host paths resolve) and touches nothing. The
 * manifest it returns has passed {@link ManifestParser}; an error that parser finds is reported at the compose path it
 * came from.
 *
 * <p>Top level: {@code services} become containers ({@link ServiceFields}); {@code volumes} declare the names services
 * use, whose Docker names are compose's ({@code <project>_<key>}, or {@code name}, or the key when {@code external}),
 * so that a host moving from compose to mesh keeps its volumes; {@code networks}, with compose's implicit
 * {@code default}, become the module's networks ({@link ComposeNetworks}); {@code name} names the
 * project; {@code version} is obsolete and ignored, as compose ignores it; {@code x-*} are extension fields, ignored
 * as compose ignores them; everything else is refused.
 */
public final class ComposeImport {
    /** The manifest's container and module names. */
    private static final Set<String> TOP_LEVEL = Set.of("version", "name", "services", "volumes", "networks");
    private static final Map<String, String> TOP_LEVEL_REFUSED = Map.of(
            "configs", "mesh mounts no compose configs: put each file on every host and mount it read-only with a service's volumes",
            "secrets", ServiceFields.REFUSED.get("secrets"),
            "include", "mesh imports one file: import each included file on its own (as its own module), or merge them first (docker compose config)");
    private static final YAMLMapper YAML = new YAMLMapper(YAMLFactory.builder()
            .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
            .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES)
            .enable(YAMLGenerator.Feature.ALWAYS_QUOTE_NUMBERS_AS_STRINGS)
            .enable(YAMLGenerator.Feature.INDENT_ARRAYS_WITH_INDICATOR)
            .disable(YAMLGenerator.Feature.SPLIT_LINES)
            .build());

    private final Path file;
    private final String module;
    private final List<String> hosts;

    private ComposeImport(Path file, String module, List<String> hosts) {
        this.file = file.toAbsolutePath().normalize();
        this.module = module;
        this.hosts = List.copyOf(hosts);
    }

    /**
     * @param file  the compose file: its directory resolves relative host paths and, without {@code name} or a module,
     *              names the project as compose does
     * @param hosts the module's {@code hosts}
     * @return an import of that file for those hosts; the module name comes from the file unless {@link #module} says
     */
    public static ComposeImport of(Path file, List<String> hosts) { return new ComposeImport(file, null, hosts); }

    /**
     * @param name the module's name ({@code --module}), or {@code null} for compose's {@code name}, else the directory's
     * @return this import with that module name
     */
    public ComposeImport module(String name) { return new ComposeImport(file, name, hosts); }

    /**
     * The converted file.
     *
     * @param manifest the module manifest, YAML, fields in SPEC.md's order, ending in a newline
     * @param spec     the same, as {@link ManifestParser} read it
     * @param notes    what the import chose that the operator should know (relative paths resolved, ports bound to
     *                 loopback, renamed services ...), each with its path
     */
    public record Imported(String manifest, ModuleSpec spec, List<ComposeProblem> notes) {}

    /**
     * @param text the compose file's text
     * @return the manifest, with notes
     * @throws ComposeRefusedException with every refusal, each naming its path and the fix; nothing is returned then
     */
    public Imported convert(String text) throws ComposeRefusedException {
        ImportContext ctx = new ImportContext(file.getParent());
        JsonNode root = ComposeYaml.read(text, ctx.refusals);
        if (root == null) throw new ComposeRefusedException(ctx.refusals);
        if (!(root instanceof ObjectNode top)) throw new ComposeRefusedException(List.of(new ComposeProblem("", "must be a mapping with services")));
        for (Iterator<String> i = top.fieldNames(); i.hasNext(); ) {
            String k = i.next();
            if (k.startsWith("x-") || TOP_LEVEL.contains(k)) continue;
            String why = TOP_LEVEL_REFUSED.get(k);
            ctx.refuse(k, why != null ? why : "unknown top-level field '" + k + "': compose files have services, volumes, networks and name");
        }
        String project = project(top, ctx);
        String moduleName = moduleName(project, ctx);
        declareVolumes(top.get("volumes"), project, ctx);
        ComposeNetworks.declare(top.get("networks"), project, ctx);
        ObjectNode containers = services(top.get("services"), ctx);
        ObjectNode networks = ComposeNetworks.moduleNetworks(moduleName, ctx);

        ObjectNode manifest = JsonNodeFactory.instance.objectNode();
        manifest.put("module", moduleName);
        ArrayNode h = manifest.putArray("hosts");
        hosts.forEach(h::add);
        ctx.origin("hosts", "--hosts");
        if (!networks.isEmpty()) manifest.set("networks", networks);
        ctx.origin("containers", "services");
        manifest.set("containers", containers);
        String yaml;
        try {
            yaml = "# mesh import-compose " + file.getFileName() + "\n" + YAML.writeValueAsString(manifest);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a tree of strings, numbers and booleans is always written", e);
        }
        // The manifest is checked even when fields were refused (they are left out of it), so that one run lists every
        // refusal: a value mesh's parser refuses is reported with the fields mesh does not do.
        List<ComposeProblem> refused = new ArrayList<>(ctx.refusals);
        try {
            List<ModuleSpec> parsed = new ManifestParser().parse(yaml);
            if (refused.isEmpty()) return new Imported(yaml, parsed.get(0), ctx.notes());
        } catch (ManifestException e) {
            for (ManifestError error : e.errors()) {
                String at = Printable.of(ctx.composePath(error.field())); // as the refusals' paths are
                if (refused.stream().anyMatch(r -> !r.path().isEmpty() && (at.equals(r.path()) || at.startsWith(r.path() + ".")))) continue;
                String mesh = error.field().isEmpty() || at.equals(error.field()) ? "" : " (mesh's " + error.field() + ")";
                refused.add(new ComposeProblem(at, error.message() + mesh));
            }
        }
        throw new ComposeRefusedException(refused);
    }

    /** Compose's project name: {@code name}, else the directory's name lower-cased without other characters than compose keeps. */
    private String project(ObjectNode top, ImportContext ctx) {
        JsonNode name = top.get("name");
        if (name != null && name.isTextual() && !name.asText().isEmpty()) {
            ctx.origin("module", "name");
            return name.asText();
        }
        if (name != null) ctx.refuse("name", "must be the project's name, such as shop");
        Path dir = file.getParent();
        String base = dir == null || dir.getFileName() == null ? "" : dir.getFileName().toString();
        String normal = base.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9_-]", "").replaceFirst("^[_-]+", "");
        ctx.origin("module", "(the directory's name, '" + base + "')");
        if (normal.isEmpty() && module == null) ctx.refuse("name", "the directory's name '" + base + "' gives no project name: give name in the file, or --module");
        return normal;
    }

    private String moduleName(String project, ImportContext ctx) {
        if (module != null) {
            ctx.origin("module", "--module");
            return module;
        }
        String name = ServiceFields.containerName(project);
        if (!name.equals(project)) ctx.note("module", "the project '" + project + "' is the module '" + name + "' (mesh's names have no '_'); give --module to choose another");
        if (!ModuleName.matches(name)) ctx.refuse("module", "'" + name + "' is not a module name (lower-case letters, digits and '-', at most 40): give --module NAME");
        return name;
    }

    private static void declareVolumes(JsonNode volumes, String project, ImportContext ctx) {
        declare(volumes, "volumes", project, ctx, ctx.volumes, Set.of("driver"), "local",
                "mesh lets Docker create named volumes with the local driver and no options: create this one yourself on every host and declare it external: true");
    }

    /**
     * Top-level {@code volumes}: each key's Docker name is {@code name}, else the key when
     * {@code external}, else {@code <project>_<key>} (compose's names). {@code driver} may be the one default driver;
     * other settings are refused with {@code why}.
     */
    private static void declare(JsonNode node, String field, String project, ImportContext ctx, Map<String, String> names,
                                Set<String> driverKeys, String defaultDriver, String why) {
        if (node == null || node.isNull()) return;
        if (!(node instanceof ObjectNode o)) {
            ctx.refuse(field, "must be a mapping of names to their settings");
            return;
        }
        o.fields().forEachRemaining(e -> {
            String key = e.getKey();
            if (key.startsWith("x-")) return;
            String p = field + "." + key;
            String name = null;
            boolean external = false;
            if (e.getValue() instanceof ObjectNode settings) {
                for (Map.Entry<String, JsonNode> s : settings.properties()) {
                    String v = s.getValue().isValueNode() ? s.getValue().asText() : null;
                    switch (s.getKey()) {
                        case "name" -> name = v;
                        case "external" -> {
                            if (s.getValue() instanceof ObjectNode legacy && legacy.hasNonNull("name")) { // compose's old form, external: {name: x}
                                external = true;
                                name = legacy.get("name").asText();
                            } else {
                                external = "true".equalsIgnoreCase(v);
                            }
                        }
                        default -> {
                            if (s.getKey().startsWith("x-")) continue;
                            if (driverKeys.contains(s.getKey()) && defaultDriver.equals(v)) continue;
                            ctx.refuse(p + "." + s.getKey(), why);
                        }
                    }
                }
            } else if (!e.getValue().isNull()) {
                ctx.refuse(p, "must be empty or a mapping of settings");
            }
            String docker = name != null ? name : external ? key : project + "_" + key;
            names.put(key, docker);
            if (!external && name == null && !key.equals("default")) {
                ctx.note(p, "is the Docker " + field.substring(0, field.length() - 1) + " '" + docker + "', as compose names it (so what compose left there is used); "
                        + "give it a name to choose another");
            }
        });
    }

    private static ObjectNode services(JsonNode services, ImportContext ctx) {
        ObjectNode containers = JsonNodeFactory.instance.objectNode();
        if (!(services instanceof ObjectNode s) || s.isEmpty()) {
            ctx.refuse("services", "missing or empty: give at least one service");
            return containers;
        }
        for (Map.Entry<String, JsonNode> e : s.properties()) {
            String service = e.getKey();
            String p = "services." + service;
            String container = ServiceFields.containerName(service);
            if (!ModuleName.matches(container)) {
                ctx.refuse(p, "'" + service + "' cannot be a container's name: rename the service with lower-case letters, digits, '-' and '_', at most 40 characters");
                continue;
            }
            if (!container.equals(service)) ctx.note(p, "is the container '" + container + "' (mesh's names have no '_')");
            String other = ctx.services.putIfAbsent(container, service);
            if (other != null) {
                ctx.refuse(p, "is the container '" + container + "', as is the service '" + other + "': rename one of them");
                continue;
            }
            if (!(e.getValue() instanceof ObjectNode node)) {
                ctx.refuse(p, "must be a mapping with at least image");
                continue;
            }
            containers.set(container, ServiceFields.convert(ctx, service, container, node));
        }
        return containers;
    }

    @Override
    public String toString() { return "import of " + file + " as " + Objects.requireNonNullElse(module, "(its project)") + " for " + hosts; }
}
