package io.mesh.client.compose;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.Locale;
import java.util.Map;

/**
 * Compose's top-level {@code networks} as the module's {@code networks} (SPEC.md, "Containers"; decision 21): compose's
 * implicit {@code default} network and each declared one become a module network of the same key, which the agent
 * creates as {@code <module>_<key>} (a bridge, {@code internal} and {@code labels} kept), or, when {@code external}, the
 * Docker network {@code name} (else the key) that mesh neither creates nor removes. Settings mesh's networks do not have
 * are refused with their path. Only networks some service joins are written ({@link #moduleNetworks}).
 */
final class ComposeNetworks {
    /** Compose's top-level network settings that mesh's networks do not have, with why and the fix. */
    static final Map<String, String> REFUSED = Map.of(
            "ipam", "mesh lets Docker choose a network's subnet and gateway: remove ipam (containers find each other by name, not address), "
                    + "or create the network yourself on every host (docker network create --subnet ...) and declare it external: true",
            "driver_opts", "mesh creates bridge networks with Docker's default options: remove driver_opts, or create the network yourself "
                    + "on every host (docker network create -o ...) and declare it external: true",
            "attachable", "attachable is for Swarm's overlay networks, and any container may join a bridge network mesh creates: remove attachable",
            "enable_ipv6", "mesh creates IPv4 bridge networks: remove enable_ipv6, or create the network yourself on every host "
                    + "(docker network create --ipv6 ...) and declare it external: true",
            "enable_ipv4", "mesh creates IPv4 bridge networks: remove enable_ipv4, or create the network yourself on every host and declare it external: true");

    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    private ComposeNetworks() {}

    /**
     * Reads the top-level {@code networks} into {@link ImportContext#networks}, with compose's implicit {@code default}
     * first unless the file declares it. A network with refused settings is declared all the same, so that services
     * naming it are not refused a second time.
     *
     * @param node    the top-level {@code networks}, or {@code null}
     * @param project compose's project name, which compose's Docker names begin with
     */
    static void declare(JsonNode node, String project, ImportContext ctx) {
        ctx.networks.put("default", new ProjectNetwork(F.objectNode(), false, project + "_default", false));
        if (node == null || node.isNull()) return;
        if (!(node instanceof ObjectNode o)) {
            ctx.refuse("networks", "must be a mapping of network names to their settings");
            return;
        }
        for (Map.Entry<String, JsonNode> e : o.properties()) {
            String key = e.getKey();
            if (key.startsWith("x-")) continue;
            String p = "networks." + key;
            if (e.getValue() instanceof ObjectNode settings) {
                ctx.networks.put(key, settings(key, p, settings, project, ctx));
            } else {
                if (!e.getValue().isNull()) ctx.refuse(p, "must be empty or a mapping of settings");
                ctx.networks.put(key, new ProjectNetwork(F.objectNode(), false, project + "_" + key, true));
            }
        }
    }

    private static ProjectNetwork settings(String key, String p, ObjectNode settings, String project, ImportContext ctx) {
        ObjectNode out = F.objectNode();
        boolean external = false;
        String name = null;
        for (Map.Entry<String, JsonNode> s : settings.properties()) {
            String k = s.getKey();
            JsonNode v = s.getValue();
            String sp = p + "." + k;
            if (k.startsWith("x-")) continue;
            switch (k) {
                case "driver" -> {
                    if ("bridge".equals(v.asText(null))) out.put("driver", "bridge");
                    else ctx.refuse(sp, "mesh creates bridge networks only: remove driver, or give bridge; for another driver ("
                            + (v.isValueNode() ? v.asText() : "this one") + "), create the network yourself on every host and declare it external: true");
                }
                case "internal" -> {
                    Boolean b = bool(v);
                    if (b == null) ctx.refuse(sp, "must be true or false");
                    else if (b) out.put("internal", true);
                }
                case "labels" -> labels(v, sp, out, ctx);
                case "external" -> {
                    if (v instanceof ObjectNode legacy) { // compose's old form, external: {name: x}
                        external = true;
                        if (legacy.hasNonNull("name")) name = legacy.get("name").asText();
                        legacy.fieldNames().forEachRemaining(f -> {
                            if (!f.equals("name")) ctx.refuse(sp + "." + f, "external has only name: remove " + f);
                        });
                    } else {
                        Boolean b = bool(v);
                        if (b == null) ctx.refuse(sp, "must be true or false");
                        else external = b;
                    }
                }
                case "name" -> {
                    if (v.isValueNode() && !v.isNull() && !v.asText().isEmpty()) name = v.asText();
                    else ctx.refuse(sp, "must be the Docker network's name");
                }
                default -> {
                    String why = REFUSED.get(k);
                    ctx.refuse(sp, why != null ? why : "unknown network field '" + k + "': mesh's networks have driver (bridge), internal, "
                            + "labels, external and name; remove it");
                }
            }
        }
        if (external) {
            for (String f : new String[] {"driver", "internal", "labels"}) {
                if (out.has(f)) ctx.refuse(p + "." + f, "an external network is created by whoever creates it, not by mesh: remove " + f);
            }
            ObjectNode ext = F.objectNode().put("external", true);
            if (name != null) ext.put("name", name);
            return new ProjectNetwork(ext, true, name != null ? name : key, true);
        }
        if (name != null) {
            ctx.refuse(p + ".name", "mesh names the networks it creates <module>_" + key + ": remove name, or create the network '" + name
                    + "' yourself on every host (docker network create " + name + ") and declare it external: true");
        }
        return new ProjectNetwork(out, false, project + "_" + key, true);
    }

    /** Compose's two forms of labels, {@code {K: V}} or {@code ["K=V"]}; a key without a value is the empty string, as in compose. */
    private static void labels(JsonNode v, String p, ObjectNode out, ImportContext ctx) {
        ObjectNode m = F.objectNode();
        if (v instanceof ObjectNode o) {
            o.fields().forEachRemaining(e -> {
                if (e.getValue().isNull()) m.put(e.getKey(), "");
                else if (e.getValue().isValueNode()) m.put(e.getKey(), e.getValue().asText());
                else ctx.refuse(p + "." + e.getKey(), "must be a single value");
            });
        } else if (v.isArray()) {
            for (int i = 0; i < v.size(); i++) {
                String s = v.get(i).asText("");
                int eq = s.indexOf('=');
                m.put(eq < 0 ? s : s.substring(0, eq), eq < 0 ? "" : s.substring(eq + 1));
            }
        } else if (!v.isNull()) {
            ctx.refuse(p, "must be a mapping {KEY: value} or a list [\"KEY=value\"]");
            return;
        }
        if (!m.isEmpty()) out.set("labels", m);
    }

    private static Boolean bool(JsonNode v) {
        if (!v.isValueNode() || v.isNull()) return null;
        String s = v.asText().toLowerCase(Locale.ROOT);
        return s.equals("true") ? Boolean.TRUE : s.equals("false") ? Boolean.FALSE : null;
    }

    /**
     * The module's {@code networks}: each network a service joins ({@link ImportContext#networksJoined}), in the order
     * compose declares them ({@code default} first), with a note where the Docker name is not compose's and for each
     * external one; a declared network no service joins is left out, with a note.
     *
     * @param module the module's name, which the Docker names of the networks mesh creates begin with
     * @return the mapping, empty when every service has {@code network_mode}
     */
    static ObjectNode moduleNetworks(String module, ImportContext ctx) {
        ObjectNode out = F.objectNode();
        ctx.origin("networks", "networks");
        for (Map.Entry<String, ProjectNetwork> e : ctx.networks.entrySet()) {
            String key = e.getKey();
            ProjectNetwork d = e.getValue();
            String p = "networks." + key;
            if (!ctx.networksJoined.contains(key)) {
                if (d.declared()) ctx.note(p, "no service joins it: left out of the module");
                continue;
            }
            out.set(key, d.settings());
            ctx.origin(p, d.declared() ? p : "services");
            if (d.external()) {
                ctx.note(p, "is external: mesh neither creates nor removes the Docker network '" + d.docker() + "', which must exist on every host of hosts");
            } else {
                String docker = module + "_" + key;
                String what = d.declared() ? "" : " (compose's default network, which services without networks or network_mode join)";
                if (!docker.equals(d.docker())) {
                    ctx.note(p, "is the Docker network '" + docker + "'" + what + ", which mesh creates; compose's was '" + d.docker()
                            + "', and containers compose left on it are not on this one");
                }
            }
        }
        return out;
    }
}
