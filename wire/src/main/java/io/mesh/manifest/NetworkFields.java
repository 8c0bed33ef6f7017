package io.mesh.manifest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Checks a module's {@code networks} and each container's (SPEC.md, "Containers": networks; decision 31), and rewrites
 * a container's list form {@code networks: [a, b]} into the one form the desired node keeps,
 * {@code {a: {}, b: {}}}. Every error names the field path and the fix. Used by {@link ManifestParser}.
 */
final class NetworkFields {
    /** A network's key: its Docker name {@code <module>_<key>} must stay a Docker network name. */
    static final Pattern KEY = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,39}");
    /** An external network's Docker name. */
    private static final Pattern DOCKER_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}");
    /** An alias: a DNS name on the network. */
    private static final Pattern ALIAS = Pattern.compile("(?=.{1,63}$)[A-Za-z0-9](?:[A-Za-z0-9_-]*[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9_-]*[A-Za-z0-9])?)*");
    private static final Set<String> FIELDS = Set.of("driver", "internal", "labels", "external", "name");
    private static final Set<String> ATTACHMENT_FIELDS = Set.of("aliases");
    /** Docker's own network modes: a container joins them with {@code network}, never as a module network. */
    private static final Set<String> MODES = Set.of("host", "none", "bridge", "default");

    private NetworkFields() {}

    /**
     * Checks the module's {@code networks}.
     *
     * @param c    the document's errors
     * @param node the module's mapping
     * @return the keys of the networks declared well enough to be joined (empty when there are none)
     */
    static Set<String> module(ContainerFields.Sink c, ObjectNode node) {
        Set<String> keys = new HashSet<>();
        JsonNode networks = node.get("networks");
        if (networks == null || networks.isNull()) return keys;
        if (!networks.isObject()) {
            c.error("networks", "must be a mapping of network name to its settings, such as {default: {}, back: {internal: true}}; got " + describe(networks));
            return keys;
        }
        for (Map.Entry<String, JsonNode> e : networks.properties()) {
            String key = e.getKey();
            String p = "networks." + show(key);
            if (!KEY.matcher(key).matches()) {
                c.error(p, "'" + show(key) + "' is not a network name: use letters, digits, '_', '.' and '-', starting with a letter or digit, at most 40 characters");
                continue;
            }
            JsonNode v = e.getValue();
            if (v == null || v.isNull()) {
                if (networks instanceof ObjectNode o) o.set(key, JsonNodeFactory.instance.objectNode()); // "back:" alone is {}
                keys.add(key);
                continue;
            }
            if (!v.isObject()) {
                c.error(p, "must be a mapping of the network's settings (driver, internal, labels, external, name), or {} for a bridge network; got " + describe(v));
                continue;
            }
            for (String f : (Iterable<String>) v::fieldNames) {
                if (!FIELDS.contains(f)) {
                    c.error(p + "." + show(f), "unknown field '" + show(f) + "': a network has driver, internal, labels, external and name");
                }
            }
            boolean external = flag(c, v, "external", p);
            JsonNode driver = v.get("driver");
            if (driver != null && !(driver.isTextual() && driver.asText().equals(NetworkSpec.BRIDGE))) {
                c.error(p + ".driver", "must be bridge, the one driver a module's network has (an overlay or macvlan network: create it"
                        + " yourself and declare it external: true); got " + describe(driver));
            }
            flag(c, v, "internal", p);
            if (v.has("labels")) ContainerFields.labels(c, p, (ObjectNode) v);
            JsonNode name = v.get("name");
            if (name != null && !external) {
                c.error(p + ".name", "is only for an external network: a module's own network is named <module>_" + show(key)
                        + " on Docker; leave name out, or add external: true if the network exists already");
            } else if (name != null && !(name.isTextual() && DOCKER_NAME.matcher(name.asText()).matches())) {
                c.error(p + ".name", "must be a Docker network name (letters, digits, '_', '.', '-'); got " + describe(name));
            }
            String docker = name != null && name.isTextual() ? name.asText() : key;
            if (external && MODES.contains(docker)) {
                c.error(p, "'" + show(docker) + "' is Docker's own network mode, not a network to join: give the container network: " + show(docker) + " instead");
            }
            if (external) {
                for (String f : new String[] {"driver", "internal", "labels"}) {
                    if (v.has(f)) c.error(p + "." + f, "is not for an external network: mesh joins it as it is and never changes it; leave " + f + " out");
                }
            }
            keys.add(key);
        }
        return keys;
    }

    /**
     * Checks one container's {@code networks} (and that it does not also give {@code network}), and rewrites its
     * list form into a mapping.
     *
     * @param c        the document's errors
     * @param path     the container's path, {@code containers.<name>}
     * @param node     the container's mapping
     * @param declared the module networks' keys ({@link #module})
     * @param all      every key under the module's {@code networks}, well declared or not (an unknown key is named
     *                 once, where it is declared)
     */
    static void container(ContainerFields.Sink c, String path, ObjectNode node, Set<String> declared, Set<String> all) {
        JsonNode networks = node.get("networks");
        if (networks == null || networks.isNull()) return;
        String p = path + ".networks";
        if (node.has("network")) {
            c.error(p, "a container gives network (one network: host, none, bridge or a Docker network) or networks (the module's"
                    + " networks it joins), not both: keep one");
            return;
        }
        ObjectNode joined = JsonNodeFactory.instance.objectNode();
        if (networks.isArray()) {
            Set<String> seen = new LinkedHashSet<>();
            for (int i = 0; i < networks.size(); i++) {
                JsonNode n = networks.get(i);
                if (!n.isTextual()) {
                    c.error(p + "[" + i + "]", "must be the name of a network under the module's networks; got " + describe(n));
                } else if (!seen.add(n.asText())) {
                    c.error(p + "[" + i + "]", "'" + show(n.asText()) + "' is listed twice: name each network once");
                } else {
                    joined.set(n.asText(), JsonNodeFactory.instance.objectNode());
                }
            }
        } else if (networks.isObject()) {
            for (Map.Entry<String, JsonNode> e : networks.properties()) {
                JsonNode a = e.getValue();
                String ap = p + "." + show(e.getKey());
                if (a == null || a.isNull()) {
                    joined.set(e.getKey(), JsonNodeFactory.instance.objectNode());
                    continue;
                }
                if (!a.isObject()) {
                    c.error(ap, "must be a mapping such as {aliases: [postgres]}, or {} ; got " + describe(a));
                    continue;
                }
                for (String f : (Iterable<String>) a::fieldNames) {
                    if (!ATTACHMENT_FIELDS.contains(f)) {
                        c.error(ap + "." + show(f), "unknown field '" + show(f) + "': a container's network has aliases (mesh gives no fixed"
                                + " addresses: containers find each other by name)");
                    }
                }
                aliases(c, ap, a.get("aliases"));
                joined.set(e.getKey(), a);
            }
        } else {
            c.error(p, "must be a list of the module's networks, such as [default, back], or a mapping such as"
                    + " {back: {aliases: [postgres]}}; got " + describe(networks));
            return;
        }
        if (joined.isEmpty()) {
            c.error(p, "is empty: name at least one of the module's networks, or leave networks out for network (default host)");
            return;
        }
        for (String key : (Iterable<String>) joined::fieldNames) {
            if (!all.contains(key)) {
                c.error(p + "." + show(key), "'" + show(key) + "' is not one of the module's networks"
                        + (all.isEmpty() ? " (it has none)" : " (" + String.join(", ", new java.util.TreeSet<>(all)) + ")")
                        + ": declare it under networks at the module's top level, such as networks: {" + show(key) + ": {}}");
            }
        }
        node.set("networks", joined);
    }

    /**
     * Within one module, a name on a network answers for one container: an alias given twice, or an alias that is
     * another container's name on the same network, would make Docker's DNS answer with both (compose allows it; a
     * module that means one service by a name must not get two).
     *
     * @param c          the document's errors
     * @param containers the module's containers, each {@code networks} already in its mapping form
     */
    static void uniqueNames(ContainerFields.Sink c, JsonNode containers) {
        if (containers == null || !containers.isObject()) return;
        Map<String, String> owner = new java.util.HashMap<>(); // network + "/" + name -> container
        for (Map.Entry<String, JsonNode> e : containers.properties()) {
            JsonNode nets = e.getValue().get("networks");
            if (nets == null || !nets.isObject()) continue;
            for (Map.Entry<String, JsonNode> n : nets.properties()) owner.putIfAbsent(n.getKey() + "/" + e.getKey(), e.getKey());
        }
        for (Map.Entry<String, JsonNode> e : containers.properties()) {
            JsonNode nets = e.getValue().get("networks");
            if (nets == null || !nets.isObject()) continue;
            for (Map.Entry<String, JsonNode> n : nets.properties()) {
                JsonNode aliases = n.getValue().get("aliases");
                if (aliases == null || !aliases.isArray()) continue;
                for (int i = 0; i < aliases.size(); i++) {
                    String a = aliases.get(i).asText();
                    String other = owner.putIfAbsent(n.getKey() + "/" + a, e.getKey());
                    if (other != null && !other.equals(e.getKey())) {
                        c.error("containers." + show(e.getKey()) + ".networks." + show(n.getKey()) + ".aliases[" + i + "]", "'" + show(a)
                                + "' already names container '" + show(other) + "' on network " + show(n.getKey())
                                + ": one name answers for one container there; choose another alias");
                    }
                }
            }
        }
    }

    private static void aliases(ContainerFields.Sink c, String path, JsonNode aliases) {
        if (aliases == null || aliases.isNull()) return;
        String p = path + ".aliases";
        if (!aliases.isArray()) {
            c.error(p, "must be a list of names, such as [postgres]; got " + describe(aliases));
            return;
        }
        for (int i = 0; i < aliases.size(); i++) {
            JsonNode a = aliases.get(i);
            if (!a.isTextual() || !ALIAS.matcher(a.asText()).matches()) {
                c.error(p + "[" + i + "]", "must be a DNS name (letters, digits, '-', '_', dots between labels), such as postgres; got " + describe(a));
            }
        }
    }

    /** @return the flag's value, checked as every manifest flag is ({@link ContainerFields#flag}); false when absent or refused */
    private static boolean flag(ContainerFields.Sink c, JsonNode v, String field, String path) {
        JsonNode f = v.get(field);
        if (f == null || f.isNull()) return false; // "internal:" alone is left out, as before
        ContainerFields.flag(c, v, field, path);
        return f.isBoolean() && f.asBoolean();
    }

    private static String describe(JsonNode n) { return ContainerFields.describe(n); }

    private static String show(String s) { return Printable.of(s, 60); }
}
