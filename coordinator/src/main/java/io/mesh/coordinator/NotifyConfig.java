package io.mesh.coordinator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.mesh.manifest.ModuleName;
import io.mesh.manifest.WireName;
import io.mesh.wire.EventType;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The webhooks of {@code mesh-coordinator serve --notify-config FILE} (SPEC.md, "The rest of the operator's stack"):
 *
 * <pre>
 * webhooks:
 *   - name: ops                              # [a-z0-9][a-z0-9-]{0,39}, unique
 *     url: http://127.0.0.1:9000/mesh        # http or https
 *     secret-file: /etc/mesh/ops.secret      # optional: X-Mesh-Signature: sha256=&lt;hex HMAC-SHA256 of the body&gt;
 *     events: [window.started, window.failed]
 *     format: json                           # json (default) | slack
 * </pre>
 *
 * Read once at start; a mistake refuses the start, naming the field ({@code webhooks[0].events[2]}) and the fix.
 * Unknown fields are mistakes too, as in a manifest.
 *
 * @param webhooks the webhooks, in the file's order
 */
public record NotifyConfig(List<Webhook> webhooks) {
    /** No webhooks: the leading coordinator deletes each event as it comes (nobody wants it). */
    public static final NotifyConfig NONE = new NotifyConfig(List.of());

    private static final Set<String> FIELDS = Set.of("name", "url", "secret-file", "events", "format");
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    /**
     * @param file the YAML file
     * @return its webhooks
     * @throws IllegalArgumentException naming the file, the field and the fix
     */
    public static NotifyConfig read(Path file) {
        String text;
        try {
            text = Files.readString(file);
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("--notify-config " + file + " does not exist: give the path of the webhooks' YAML file");
        } catch (IOException e) {
            throw new IllegalArgumentException("--notify-config " + file + " cannot be read: " + e.getMessage());
        }
        return parse(text, file.getParent() == null ? Path.of(".") : file.getParent(), "--notify-config " + file);
    }

    /**
     * @param yaml    the file's text
     * @param baseDir where a relative {@code secret-file} is found (the config file's directory)
     * @param source  how messages name the file
     * @return its webhooks
     * @throws IllegalArgumentException naming the field and the fix
     */
    public static NotifyConfig parse(String yaml, Path baseDir, String source) {
        JsonNode root;
        try {
            root = YAML.readTree(yaml);
        } catch (IOException e) {
            throw new IllegalArgumentException(source + ": not YAML: " + e.getMessage());
        }
        if (root == null || root.isMissingNode() || root.isNull()) {
            throw new IllegalArgumentException(source + ": empty; write 'webhooks:' with a list of webhooks");
        }
        if (!root.isObject()) throw new IllegalArgumentException(source + ": must be a mapping with the field 'webhooks'");
        for (Iterator<String> it = root.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!f.equals("webhooks")) throw new IllegalArgumentException(source + ": unknown field '" + f + "'; the one field is 'webhooks'");
        }
        JsonNode list = root.get("webhooks");
        if (list == null || list.isNull()) return NONE;
        if (!list.isArray()) throw new IllegalArgumentException(source + ": webhooks must be a list ('- name: ...' entries)");
        List<Webhook> out = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (int i = 0; i < list.size(); i++) {
            Webhook w = webhook(list.get(i), "webhooks[" + i + "]", baseDir, source);
            if (!names.add(w.name())) {
                throw new IllegalArgumentException(source + ": webhooks[" + i + "].name '" + w.name() + "' is used twice; give each webhook its own name");
            }
            out.add(w);
        }
        return new NotifyConfig(List.copyOf(out));
    }

    private static Webhook webhook(JsonNode node, String at, Path baseDir, String source) {
        String where = source + ": " + at;
        if (node == null || !node.isObject()) throw new IllegalArgumentException(where + " must be a mapping with name, url, events");
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!FIELDS.contains(f)) {
                throw new IllegalArgumentException(where + "." + f + ": unknown field; a webhook has " + String.join(", ", sorted(FIELDS)));
            }
        }
        String name = text(node, "name", where);
        if (name == null || !ModuleName.PATTERN.matcher(name).matches()) {
            throw new IllegalArgumentException(where + ".name: " + (name == null ? "missing" : "'" + name + "' is not a name")
                    + "; give one matching " + ModuleName.PATTERN.pattern() + ", such as ops");
        }
        String url = text(node, "url", where);
        if (url == null) throw new IllegalArgumentException(where + ".url: missing; give the receiver's http:// or https:// URL");
        URI uri;
        try {
            uri = new URI(url);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException(where + ".url: '" + url + "' is not a URL (" + e.getReason() + "); give one such as http://127.0.0.1:9000/mesh");
        }
        String scheme = uri.getScheme() == null ? null : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!"http".equals(scheme) && !"https".equals(scheme) || uri.getHost() == null) {
            throw new IllegalArgumentException(where + ".url: '" + url + "' is not an http:// or https:// URL with a host; give one such as http://127.0.0.1:9000/mesh");
        }
        if (uri.getRawUserInfo() != null) {
            throw new IllegalArgumentException(where + ".url: must not carry credentials (user:password@): mesh sends none (receivers check "
                    + "X-Mesh-Signature, from secret-file); give the receiver's URL alone");
        }
        WebhookSecret secret = null;
        String secretFile = text(node, "secret-file", where);
        if (secretFile != null) {
            Path p = baseDir.resolve(secretFile);
            try {
                secret = WebhookSecret.fromFile(p);
            } catch (IOException e) {
                throw new IllegalArgumentException(where + ".secret-file: " + p + " cannot be read (" + e + "); give a file this "
                        + "coordinator's user can read, holding the shared secret on its first line");
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(where + ".secret-file: " + p + " holds no secret; write the shared secret on its first line");
            }
        }
        JsonNode events = node.get("events");
        if (events == null || !events.isArray() || events.isEmpty()) {
            throw new IllegalArgumentException(where + ".events: " + (events == null ? "missing" : "must be a non-empty list")
                    + "; list the event types it wants, of " + known());
        }
        Set<EventType> wanted = EnumSet.noneOf(EventType.class);
        for (int j = 0; j < events.size(); j++) {
            JsonNode e = events.get(j);
            EventType t = e.isTextual() ? WireName.of(EventType.class, e.asText()) : null;
            if (t == null || t == EventType.UNKNOWN) {
                throw new IllegalArgumentException(where + ".events[" + j + "]: unknown event type '" + e.asText() + "'; use one of " + known());
            }
            wanted.add(t);
        }
        NotifyFormat format = NotifyFormat.JSON;
        String f = text(node, "format", where);
        if (f != null) {
            format = Arrays.stream(NotifyFormat.values()).filter(v -> v.wire().equals(f)).findFirst().orElseThrow(() ->
                    new IllegalArgumentException(where + ".format: unknown format '" + f + "'; use json or slack"));
        }
        return new Webhook(name, uri, secret, Set.copyOf(wanted), format);
    }

    /** @return the field's text; {@code null} when absent */
    private static String text(JsonNode node, String field, String where) {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) return null;
        if (!v.isValueNode() || v.isBinary()) throw new IllegalArgumentException(where + "." + field + ": must be a string");
        return v.asText();
    }

    private static String known() {
        return Arrays.stream(EventType.values()).filter(t -> t != EventType.UNKNOWN).map(EventType::wire).collect(Collectors.joining(", "));
    }

    private static List<String> sorted(Set<String> s) { return s.stream().sorted().toList(); }
}
