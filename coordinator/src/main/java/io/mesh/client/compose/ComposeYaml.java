package io.mesh.client.compose;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

import java.io.StringReader;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads a compose file into a plain tree as compose reads it, for {@link ComposeImport}: anchors, aliases and merge keys
 * ({@code <<: *common}) are resolved (compose files use them, mesh's manifests refuse them); every scalar is kept as the
 * text written ({@code 1.10} stays {@code 1.10}, a bare {@code no} stays {@code no}, as in compose's YAML 1.2), except
 * the null forms ({@code ~}, {@code null}, nothing), which are null. Compose's interpolation is not done: {@code $$} is
 * compose's escape for {@code $} and becomes one, and a value naming a variable ({@code ${DB_HOST}}, {@code $HOME}) is
 * refused with its path, since mesh has no shell environment to take it from. Keys starting with {@code x-} are
 * compose's extension fields: read (an anchor may live there) but never interpolated.
 */
final class ComposeYaml {
    /** Most nodes after aliases are expanded: an alias bomb stops here rather than filling the heap. */
    static final int MAX_NODES = 100_000;
    private static final int MAX_DEPTH = 40;
    private static final Set<String> NULLS = Set.of("", "~", "null", "Null", "NULL");

    private final List<ComposeProblem> problems;
    private int nodes;

    private ComposeYaml(List<ComposeProblem> problems) { this.problems = problems; }

    /**
     * @param text     the compose file
     * @param problems where refusals go, with their paths
     * @return the file's one document as a tree, or {@code null} when it cannot be read (the reason in {@code problems})
     */
    static JsonNode read(String text, List<ComposeProblem> problems) {
        LoaderOptions options = new LoaderOptions();
        options.setMaxAliasesForCollections(100);
        options.setNestingDepthLimit(MAX_DEPTH);
        options.setCodePointLimit(io.mesh.manifest.ManifestParser.MAX_CHARS);
        options.setAllowRecursiveKeys(false);
        Yaml yaml = new Yaml(options);
        List<Node> docs = new ArrayList<>();
        try {
            for (Node n : yaml.composeAll(new StringReader(text))) docs.add(n);
        } catch (MarkedYAMLException e) {
            problems.add(new ComposeProblem("", "not valid YAML: " + (e.getContext() == null ? "" : e.getContext() + ": ") + e.getProblem()
                    + (e.getProblemMark() == null ? "" : " (line " + (e.getProblemMark().getLine() + 1) + ", column " + (e.getProblemMark().getColumn() + 1) + ")")));
            return null;
        } catch (YAMLException e) {
            problems.add(new ComposeProblem("", "not valid YAML: " + e.getMessage()));
            return null;
        }
        if (docs.isEmpty()) {
            problems.add(new ComposeProblem("", "the file is empty: give services"));
            return null;
        }
        if (docs.size() > 1) {
            problems.add(new ComposeProblem("", "holds " + docs.size() + " YAML documents: compose reads one; import each as its own file"));
            return null;
        }
        ComposeYaml reader = new ComposeYaml(problems);
        return reader.tree(docs.get(0), "", false, 0);
    }

    private JsonNode tree(Node node, String path, boolean extension, int depth) {
        JsonNodeFactory f = JsonNodeFactory.instance;
        if (++nodes > MAX_NODES || depth > MAX_DEPTH) {
            if (nodes == MAX_NODES + 1 || depth == MAX_DEPTH + 1) {
                problems.add(new ComposeProblem(path, "too large or too deep once its aliases are expanded (over " + MAX_NODES + " values or "
                        + MAX_DEPTH + " levels): write it out plainly"));
            }
            return f.nullNode();
        }
        if (!node.getTag().getValue().startsWith(Tag.PREFIX)) {
            problems.add(new ComposeProblem(path, "the tag '" + node.getTag().getValue() + "' is not read here (compose's !reset and !override "
                    + "belong to override files; import one merged file, such as docker compose config prints): remove it"));
            return f.nullNode();
        }
        if (node instanceof ScalarNode s) {
            if (s.getScalarStyle() == DumperOptions.ScalarStyle.PLAIN && NULLS.contains(s.getValue())) return f.nullNode();
            return f.textNode(extension ? s.getValue() : interpolate(s.getValue(), path));
        }
        if (node instanceof SequenceNode seq) {
            ArrayNode a = f.arrayNode();
            int i = 0;
            for (Node item : seq.getValue()) a.add(tree(item, path + "[" + i++ + "]", extension, depth + 1));
            return a;
        }
        MappingNode map = (MappingNode) node;
        Map<String, Node> own = new LinkedHashMap<>();
        List<Node> merges = new ArrayList<>();
        for (NodeTuple t : map.getValue()) {
            if (!(t.getKeyNode() instanceof ScalarNode k)) {
                problems.add(new ComposeProblem(path, "a key is a list or a mapping: keys must be plain names"));
                continue;
            }
            if (k.getTag().equals(Tag.MERGE)) {
                if (t.getValueNode() instanceof SequenceNode s) merges.addAll(s.getValue()); else merges.add(t.getValueNode());
            } else if (own.putIfAbsent(k.getValue(), t.getValueNode()) != null) {
                problems.add(new ComposeProblem(join(path, k.getValue()), "the key '" + k.getValue() + "' appears twice in one mapping: keep one"));
            }
        }
        Map<String, Node> all = new LinkedHashMap<>(own);
        for (Node m : merges) { // the merge key: a mapping's own keys win, then the first merged mapping's
            if (!(m instanceof MappingNode mm)) {
                problems.add(new ComposeProblem(join(path, "<<"), "merges only mappings (<<: *anchor of a mapping)"));
                continue;
            }
            for (NodeTuple t : mm.getValue()) {
                if (t.getKeyNode() instanceof ScalarNode k && !k.getTag().equals(Tag.MERGE)) all.putIfAbsent(k.getValue(), t.getValueNode());
            }
        }
        ObjectNode o = f.objectNode();
        for (Iterator<Map.Entry<String, Node>> i = all.entrySet().iterator(); i.hasNext(); ) {
            Map.Entry<String, Node> e = i.next();
            String child = join(path, e.getKey());
            o.set(e.getKey(), tree(e.getValue(), child, extension || e.getKey().startsWith("x-"), depth + 1));
        }
        return o;
    }

    /** Compose's interpolation, refused: {@code $$} is a {@code $}; any other {@code $} names a variable or is invalid. */
    private String interpolate(String text, String path) {
        if (text.indexOf('$') < 0) return text;
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < text.length(); i++) {
            char ch = text.charAt(i);
            if (ch != '$') {
                b.append(ch);
            } else if (i + 1 < text.length() && text.charAt(i + 1) == '$') {
                b.append('$');
                i++;
            } else {
                int end = text.charAt(Math.min(i + 1, text.length() - 1)) == '{' ? text.indexOf('}', i) + 1 : i + 1;
                if (end == i + 1) while (end < text.length() && (Character.isLetterOrDigit(text.charAt(end)) || text.charAt(end) == '_')) end++;
                String ref = text.substring(i, Math.max(end, i + 1));
                problems.add(new ComposeProblem(path, ref.length() > 1
                        ? "compose would substitute " + ref + " from the shell or .env when it runs; mesh does not interpolate: write the value "
                        + "(a secret: give it through mesh's secrets, docs/reference/manifest.md, \"secrets\"), or write $$ for a literal $"
                        : "a lone $ is invalid in compose: write $$ for a literal $"));
                return text;
            }
        }
        return b.toString();
    }

    private static String join(String path, String key) { return path.isEmpty() ? key : path + "." + key; }
}
