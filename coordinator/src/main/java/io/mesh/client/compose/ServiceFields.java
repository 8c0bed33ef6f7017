package io.mesh.client.compose;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One compose service as one mesh container: each service field compose and mesh share is rewritten under SPEC's name
 * ({@link #SUPPORTED}); each other field is refused with its path and the fix ({@link #REFUSED}, else "unknown"), never
 * dropped. Values are checked only as far as the rewrite needs: {@code ManifestParser} checks the result, and its errors
 * come back at these compose paths ({@link ImportContext#origin}). The rules are decision 21's.
 */
final class ServiceFields {
    /** The service fields mesh imports, by compose's names. */
    static final Set<String> SUPPORTED = Set.of("image", "command", "entrypoint", "environment", "network_mode", "networks", "ports",
            "volumes", "restart", "user", "working_dir", "hostname", "labels", "mem_limit", "cpus", "pids_limit", "ulimits", "tmpfs",
            "read_only", "extra_hosts", "stop_signal", "stop_grace_period", "init", "logging", "dns", "healthcheck", "depends_on",
            "privileged", "pid", "cap_add", "devices", "sysctls", "security_opt");

    /** Compose service fields mesh does not do, with why and the fix. */
    static final Map<String, String> REFUSED = Map.ofEntries(
            Map.entry("build", "mesh runs images and builds none: build it and push it to a registry the hosts pull from, then name it in image"),
            Map.entry("deploy", "deploy is Swarm's, refused whole: mesh runs one container per service on each host of hosts; for "
                    + "deploy.resources.limits write mem_limit, cpus and pids_limit on the service, for deploy.restart_policy write restart"),
            Map.entry("configs", "mesh mounts no compose configs: put the file on each host and mount it read-only with volumes (an absolute host path)"),
            Map.entry("secrets", "mesh reads no compose secrets: put each in a file under the agent's --secrets-dir on every host and name it in "
                    + "the container's secrets in the manifest (docs/reference/manifest.md, \"secrets\": secrets: {NAME: {file: PATH, target: /run/secrets/NAME}})"),
            Map.entry("profiles", "mesh has no profiles: every service of the file is imported; remove the services this module should not run"),
            Map.entry("extends", "mesh merges no services: write the fields out in this service (YAML anchors and merge keys, <<: *name, are read)"),
            Map.entry("links", "legacy links are refused: containers on one module network reach each other by their service names; "
                    + "for a link's other name, give the other service that alias in its networks"),
            Map.entry("external_links", "legacy links are refused: join the other container's network (declared external: true) and reach it by its name"),
            Map.entry("scale", "mesh runs one container per service on each host: remove scale, or write one service per copy"),
            Map.entry("env_file", "mesh reads no env files into the manifest (their values may be secrets, and the manifest is stored in "
                    + "ZooKeeper): copy the plain settings into environment, and give secret ones through mesh's secrets (docs/reference/manifest.md, \"secrets\")"),
            Map.entry("container_name", "mesh names the container <module>-<service> itself: remove container_name"),
            Map.entry("volumes_from", "mesh mounts another container's volumes only into a schedule's step (volumes-from): give the volumes themselves"),
            Map.entry("expose", "expose only documents ports for other containers, and mesh has no such field: remove it (ports publishes)"),
            Map.entry("cap_drop", "mesh adds capabilities (cap_add) but drops none: remove cap_drop"),
            Map.entry("pull_policy", "not imported: remove it; mesh's own pull policy is the container's pull (docs/reference/manifest.md, \"pull\"), default missing"),
            Map.entry("platform", "mesh runs the image built for the host's platform: remove platform"),
            Map.entry("tty", "mesh runs containers detached, with no terminal: remove tty"),
            Map.entry("stdin_open", "mesh runs containers detached, with no stdin: remove stdin_open"),
            Map.entry("develop", "compose's watch mode is a developer's tool: remove develop"));

    /** A service's network settings mesh does not have, with why and the fix. */
    private static final Map<String, String> ATTACHMENT_REFUSED = Map.of(
            "ipv4_address", "mesh lets Docker give each container its address: remove ipv4_address, and reach the container by its name (or an alias)",
            "ipv6_address", "mesh lets Docker give each container its address: remove ipv6_address, and reach the container by its name (or an alias)",
            "link_local_ips", "mesh sets no link-local addresses: remove link_local_ips",
            "priority", "mesh joins a container's networks in the order written, without priorities: remove priority, and list the networks in the order wanted",
            "gw_priority", "mesh lets Docker choose the default gateway's network: remove gw_priority",
            "mac_address", "mesh lets Docker give each container its MAC address: remove mac_address",
            "driver_opts", "mesh attaches containers with Docker's default options: remove driver_opts",
            "interface_name", "mesh lets Docker name the container's interfaces: remove interface_name");

    /** Compose service fields that exist but that mesh does not do, refused with one message. */
    private static final Set<String> OTHER_COMPOSE_FIELDS = Set.of("annotations", "attach", "blkio_config", "cgroup", "cgroup_parent",
            "cpu_count", "cpu_percent", "cpu_period", "cpu_quota", "cpu_rt_period", "cpu_rt_runtime", "cpu_shares", "cpuset", "credential_spec",
            "device_cgroup_rules", "dns_opt", "dns_search", "domainname", "driver_opts", "gpus", "group_add", "ipc", "isolation", "label_file",
            "mac_address", "mem_reservation", "mem_swappiness", "memswap_limit", "models", "oom_kill_disable", "oom_score_adj", "post_start",
            "pre_stop", "provider", "runtime", "shm_size", "storage_opt", "use_api_socket", "userns_mode", "uts");

    /** The manifest's container fields, in SPEC.md's order ("Manifest", then "Containers", then "Health and readiness"). */
    static final List<String> ORDER = List.of("image", "command", "env", "network", "networks", "ports", "volumes", "restart", "entrypoint", "user",
            "working-dir", "hostname", "labels", "memory", "cpus", "pids-limit", "ulimits", "tmpfs", "read-only", "extra-hosts",
            "stop-signal", "stop-timeout", "init", "logging", "dns", "create-host-path", "devices", "sysctls", "security-opt",
            "privileged", "pid", "cap-add", "healthcheck", "depends-on");

    /** Where an unaddressed published port binds: mesh publishes nothing beyond the host's loopback unless told (decision 21). */
    static final String LOOPBACK = "127.0.0.1";

    private static final Pattern PORT_RANGE = Pattern.compile("(\\d{1,5})(?:-(\\d{1,5}))?");
    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    private final ImportContext ctx;
    private final String at;
    private final String to;
    private final ObjectNode service;
    private final Map<String, JsonNode> out = new LinkedHashMap<>();
    private final ArrayNode tmpfs = F.arrayNode();
    private String network;
    /** A short-syntax bind mount was read: compose would create its missing source. */
    private boolean shortBind;
    /** Compose paths of long-syntax binds with {@code bind.create_host_path: true}, and of those without it. */
    private final List<String> bindsCreating = new ArrayList<>(), bindsNotCreating = new ArrayList<>();

    private ServiceFields(ImportContext ctx, String service, String container, ObjectNode node) {
        this.ctx = ctx;
        this.at = "services." + service;
        this.to = "containers." + container;
        this.service = node;
    }

    /**
     * @param ctx       the import (refusals, notes, declared volumes and networks)
     * @param service   the compose service's name
     * @param container its container name in the manifest
     * @param node      the service's mapping
     * @return the container's mapping, fields in SPEC's order
     */
    static ObjectNode convert(ImportContext ctx, String service, String container, ObjectNode node) {
        return new ServiceFields(ctx, service, container, node).convert();
    }

    /**
     * @param service a compose service's name
     * @return its container's name: compose allows {@code _} in names and mesh does not, so it becomes {@code -}. Here,
     *         with the rest of what a service becomes: {@link ComposeImport} names the containers with it and
     *         {@code depends_on} names the ones it waits for.
     */
    static String containerName(String service) { return service.replace('_', '-'); }

    private ObjectNode convert() {
        ctx.origin(to, at);
        network();
        if (service.get("image") == null && service.get("build") == null) ctx.refuse(at, "has no image: name the image to run, such as postgres:16");
        for (Map.Entry<String, JsonNode> e : service.properties()) {
            String key = e.getKey();
            JsonNode v = e.getValue();
            String p = at + "." + key;
            if (key.startsWith("x-") || key.equals("network_mode") || key.equals("networks")) continue;
            switch (key) {
                case "image" -> text(v, p, s -> put("image", F.textNode(s), p));
                case "command" -> words(v, p, "command");
                case "entrypoint" -> words(v, p, "entrypoint");
                case "environment" -> keyValues(v, p, "env", m -> put("env", m, p));
                case "ports" -> ports(v, p);
                case "volumes" -> volumes(v, p);
                case "restart" -> text(v, p, s -> {
                    if (s.startsWith("on-failure:")) ctx.refuse(p, "mesh's on-failure has no retry count: write on-failure");
                    else put("restart", F.textNode(s), p);
                });
                case "user" -> text(v, p, s -> put("user", F.textNode(s), p));
                case "working_dir" -> text(v, p, s -> put("working-dir", F.textNode(s), p));
                case "hostname" -> text(v, p, s -> put("hostname", F.textNode(s), p));
                case "labels" -> keyValues(v, p, "labels", m -> put("labels", m, p));
                case "mem_limit" -> text(v, p, s -> put("memory", F.textNode(s), p));
                case "cpus" -> text(v, p, s -> put("cpus", F.textNode(s), p));
                case "pids_limit" -> number(v, p, n -> put("pids-limit", F.numberNode(n), p));
                case "ulimits" -> ulimits(v, p);
                case "tmpfs" -> strings(v, p, true, l -> {
                    for (int k = 0; k < l.size(); k++) addTmpfs(l.get(k), p + (v.isArray() ? "[" + k + "]" : ""));
                });
                case "read_only" -> flag(v, p, "read-only");
                case "extra_hosts" -> extraHosts(v, p);
                case "stop_signal" -> text(v, p, s -> put("stop-signal", F.textNode(s), p));
                case "stop_grace_period" -> duration(v, p, false, s -> put("stop-timeout", F.textNode(s), p));
                case "init" -> flag(v, p, "init");
                case "logging" -> logging(v, p);
                case "dns" -> strings(v, p, true, l -> put("dns", array(l), p));
                case "healthcheck" -> healthcheck(v, p);
                case "depends_on" -> dependsOn(v, p);
                case "privileged" -> flag(v, p, "privileged");
                case "pid" -> text(v, p, s -> {
                    if (s.equals("host")) put("pid", F.textNode(s), p);
                    else ctx.refuse(p, "mesh shares only the host's PID namespace (pid: host): remove it, or write host");
                });
                case "cap_add" -> strings(v, p, false, l -> put("cap-add", array(l.stream().map(c -> c.startsWith("CAP_") ? c.substring(4) : c).toList()), p));
                case "devices" -> devices(v, p);
                case "sysctls" -> keyValues(v, p, "sysctls", m -> put("sysctls", m, p));
                case "security_opt" -> strings(v, p, false, l -> put("security-opt", array(l), p));
                default -> {
                    String why = REFUSED.get(key);
                    if (why != null) ctx.refuse(p, why);
                    else if (OTHER_COMPOSE_FIELDS.contains(key)) ctx.refuse(p, "mesh does not do " + key + ": remove it");
                    else ctx.refuse(p, "unknown service field '" + key + "': check its spelling against the Compose Specification, or remove it");
                }
            }
        }
        if (!tmpfs.isEmpty()) out.put("tmpfs", tmpfs);
        createHostPath();
        if (shortBind && bindsCreating.isEmpty()) {
            ctx.note(at, "a missing host path fails the container in mesh, where compose creates an empty directory: create it on every "
                    + "host, or add create-host-path: true to the container");
        }
        ObjectNode container = F.objectNode();
        for (String f : ORDER) if (out.containsKey(f)) container.set(f, out.get(f));
        return container;
    }

    /**
     * mesh's {@code create-host-path} is per container, compose's {@code create_host_path} per bind: set it only when
     * every long-syntax bind asks for it (a short one's source compose creates anyway), else one bind's would create
     * the others' missing sources, which compose refuses.
     */
    private void createHostPath() {
        if (bindsCreating.isEmpty()) return;
        String first = bindsCreating.get(0) + ".bind.create_host_path";
        if (bindsNotCreating.isEmpty()) {
            out.put("create-host-path", F.booleanNode(true));
            ctx.origin(to + ".create-host-path", first);
        } else {
            ctx.note(first, "not imported: " + bindsNotCreating.get(0) + " does not ask for it, and mesh's create-host-path is per container, "
                    + "so a missing source fails the container; create the sources on every host, or ask create_host_path on every bind");
        }
    }

    private void put(String field, JsonNode value, String composePath) {
        out.put(field, value);
        ctx.origin(to + "." + field, composePath);
    }

    /**
     * {@code network_mode} ({@code host}, {@code none} or {@code bridge}: the container's {@code network}) or
     * {@code networks} (module networks, with their aliases); neither: compose's {@code default} network, as compose
     * does. Compose's service name is an alias on each network; mesh's container name is one by itself (SPEC.md,
     * "Containers"), so only a service name mesh renamed ({@code _}) is added as an alias, with a note.
     */
    private void network() {
        JsonNode mode = service.get("network_mode");
        JsonNode nets = service.get("networks");
        if (mode != null && nets != null) {
            ctx.refuse(at + ".network_mode", "network_mode and networks exclude each other (compose refuses both): keep one");
            return;
        }
        if (mode != null) {
            String p = at + ".network_mode";
            text(mode, p, s -> {
                if (Set.of("host", "none", "bridge").contains(s)) {
                    network = s;
                    put("network", F.textNode(s), p);
                } else if (s.startsWith("service:") || s.startsWith("container:")) {
                    ctx.refuse(p, "mesh joins no other container's network namespace: give host, none, bridge, or networks");
                } else {
                    ctx.refuse(p, "'" + s + "' is not a network mode: give host, none or bridge, or name the network in networks");
                }
            });
            return;
        }
        if (nets == null) {
            join(List.of("default"), Map.of(), at);
            return;
        }
        String p = at + ".networks";
        List<String> keys = new ArrayList<>();
        Map<String, List<String>> aliases = new LinkedHashMap<>();
        if (nets.isArray()) {
            for (int i = 0; i < nets.size(); i++) {
                String ip = p + "[" + i + "]";
                text(nets.get(i), ip, s -> {
                    if (joinable(s, ip, keys)) {
                        ctx.origin(to + ".networks[" + keys.size() + "]", ip);
                        keys.add(s);
                    }
                });
            }
        } else if (nets instanceof ObjectNode o) {
            for (Map.Entry<String, JsonNode> e : o.properties()) {
                String key = e.getKey();
                String kp = p + "." + key;
                if (!joinable(key, kp, keys)) continue;
                keys.add(key);
                ctx.origin(to + ".networks." + key, kp);
                if (e.getValue() instanceof ObjectNode settings) {
                    for (Map.Entry<String, JsonNode> s : settings.properties()) {
                        String sp = kp + "." + s.getKey();
                        if (s.getKey().startsWith("x-")) continue;
                        if (s.getKey().equals("aliases")) {
                            strings(s.getValue(), sp, false, l -> aliases.put(key, l));
                        } else {
                            String why = ATTACHMENT_REFUSED.get(s.getKey());
                            ctx.refuse(sp, why != null ? why : "unknown field '" + s.getKey() + "' of a service's network: mesh's have aliases; remove it");
                        }
                    }
                } else if (!e.getValue().isNull()) {
                    ctx.refuse(kp, "must be empty or a mapping with aliases");
                }
            }
        } else {
            ctx.refuse(p, "must be a list of network names or a mapping of them");
            return;
        }
        if (keys.isEmpty() && nets.isEmpty()) {
            ctx.refuse(p, "names no network: name one, or remove networks for compose's default network");
            return;
        }
        join(keys, aliases, p);
    }

    /** A network key a service may join: declared at the top level, or {@code default}, and not named twice. */
    private boolean joinable(String key, String p, List<String> joined) {
        if (!ctx.networks.containsKey(key)) {
            ctx.refuse(p, "network '" + key + "' is not declared under the top-level networks: declare it (compose refuses it too)");
            return false;
        }
        if (joined.contains(key)) {
            ctx.refuse(p, "network '" + key + "' is named twice: keep one");
            return false;
        }
        return true;
    }

    /**
     * Writes the container's {@code networks}: a list of keys, or, when any network has aliases, a mapping of keys to
     * {@code {aliases: [...]}}; a service name that is not its container name is added as an alias on every network.
     */
    private void join(List<String> keys, Map<String, List<String>> aliases, String composePath) {
        if (keys.isEmpty()) return;
        ctx.networksJoined.addAll(keys);
        String service = at.substring("services.".length());
        String container = to.substring("containers.".length());
        boolean renamed = !service.equals(container);
        if (aliases.isEmpty() && !renamed) {
            put("networks", array(keys), composePath);
            return;
        }
        ObjectNode m = F.objectNode();
        for (String k : keys) {
            List<String> a = new ArrayList<>(aliases.getOrDefault(k, List.of()));
            if (renamed && !a.contains(service)) a.add(service);
            a.remove(container); // mesh's container name is an alias by itself
            ObjectNode settings = m.putObject(k);
            if (!a.isEmpty()) settings.set("aliases", array(a));
        }
        if (renamed) {
            ctx.note(at, "answers to '" + service + "' as compose's service name does: it is an alias on " + (keys.size() == 1 ? "its network" : "each of its networks")
                    + ", beside the container's name '" + container + "'");
        }
        put("networks", m, composePath);
    }

    private void words(JsonNode v, String p, String field) {
        if (v.isNull()) return;
        if (v.isTextual()) {
            try {
                List<String> w = ShellWords.split(v.asText());
                if (w.isEmpty()) emptyWords(p, field); else put(field, array(w), p);
            } catch (IllegalArgumentException e) {
                ctx.refuse(p, e.getMessage());
            }
            return;
        }
        strings(v, p, false, l -> {
            if (l.isEmpty()) emptyWords(p, field); else put(field, array(l), p);
        });
    }

    private void emptyWords(String p, String field) {
        if (field.equals("entrypoint")) {
            ctx.refuse(p, "an empty entrypoint clears the image's in compose, which mesh cannot: give the program to run, such as [/bin/sh, -c], or remove it");
        } else {
            ctx.refuse(p, "is empty: remove it for the image's own command");
        }
    }

    private void ports(JsonNode v, String p) {
        if (v.isNull()) return;
        if ("host".equals(network) || "none".equals(network)) {
            ctx.refuse(p, "ports publish nothing with network_mode " + network + (network.equals("host") ? " (the container binds the host's ports itself)" : "") + ": remove them");
            return;
        }
        if (!v.isArray()) {
            ctx.refuse(p, "must be a list, such as [\"8080:80\"]");
            return;
        }
        ArrayNode list = F.arrayNode();
        for (int i = 0; i < v.size(); i++) {
            String ip = p + "[" + i + "]";
            JsonNode e = v.get(i);
            List<String> bindings = e.isObject() ? longPort((ObjectNode) e, ip) : e.isTextual() ? shortPort(e.asText(), ip) : null;
            if (bindings == null) {
                if (!e.isObject() && !e.isTextual()) ctx.refuse(ip, "must be \"HOST:CONTAINER\" or a mapping with target and published");
                continue;
            }
            for (String b : bindings) {
                ctx.origin(to + ".ports[" + list.size() + "]", ip);
                list.add(b);
            }
        }
        if (!list.isEmpty()) out.put("ports", list);
    }

    private List<String> shortPort(String text, String p) {
        String s = text;
        String proto = "";
        int slash = s.lastIndexOf('/');
        if (slash >= 0) {
            proto = s.substring(slash);
            s = s.substring(0, slash);
        }
        if (s.startsWith("[")) {
            ctx.refuse(p, "mesh publishes on IPv4 addresses only: give one, such as 127.0.0.1:8080:80");
            return null;
        }
        String[] parts = s.split(":", -1);
        if (parts.length == 1) {
            ctx.refuse(p, "'" + text + "' publishes on a port Docker picks: mesh publishes HOST:CONTAINER, such as \"" + s + ":" + s + "\"");
            return null;
        }
        if (parts.length > 3 || parts[parts.length - 2].isEmpty()) {
            ctx.refuse(p, "'" + text + "' is not IP:HOST:CONTAINER with a host port: write such as \"127.0.0.1:8080:80\"");
            return null;
        }
        String addr = parts.length == 3 ? parts[0] : loopback(p);
        return range(parts[parts.length - 2], parts[parts.length - 1], addr, proto, text, p);
    }

    private List<String> longPort(ObjectNode o, String p) {
        for (Iterator<String> i = o.fieldNames(); i.hasNext(); ) {
            String k = i.next();
            if (!Set.of("target", "published", "host_ip", "protocol", "mode").contains(k) && !k.startsWith("x-")) {
                ctx.refuse(p + "." + k, "mesh does not do a port's " + k + ": remove it");
                return null;
            }
        }
        JsonNode mode = o.get("mode");
        if (mode != null && !mode.asText().equals("host")) {
            ctx.refuse(p + ".mode", "'" + mode.asText() + "' is Swarm's routing mesh: remove mode, or write host");
            return null;
        }
        if (o.get("target") == null || o.get("published") == null || o.get("published").isNull()) {
            ctx.refuse(p, "give target and published (mesh publishes on a port you name, such as {target: 80, published: 8080})");
            return null;
        }
        String addr = o.hasNonNull("host_ip") ? o.get("host_ip").asText() : loopback(p);
        String proto = o.hasNonNull("protocol") ? "/" + o.get("protocol").asText() : "";
        return range(o.get("published").asText(), o.get("target").asText(), addr, proto, o.toString(), p);
    }

    private String loopback(String p) {
        ctx.note(p, "published without an address, which compose binds on every interface; mesh binds it to " + LOOPBACK
                + ": write the address (such as 0.0.0.0:8080:80) to publish beyond this host");
        return LOOPBACK;
    }

    /** {@code 8000-8002:9000-9002} is three bindings; a host range onto one container port (any free one) is refused. */
    private List<String> range(String host, String container, String addr, String proto, String text, String p) {
        Matcher h = PORT_RANGE.matcher(host);
        Matcher c = PORT_RANGE.matcher(container);
        if (!h.matches() || !c.matches()) {
            ctx.refuse(p, "'" + text + "' is not a port binding: write such as \"127.0.0.1:8080:80\"");
            return null;
        }
        int h0 = Integer.parseInt(h.group(1)), h1 = h.group(2) == null ? h0 : Integer.parseInt(h.group(2));
        int c0 = Integer.parseInt(c.group(1)), c1 = c.group(2) == null ? c0 : Integer.parseInt(c.group(2));
        if (h1 - h0 != c1 - c0 || h1 < h0) {
            ctx.refuse(p, "'" + text + "': mesh maps each host port to one container port; give ranges of one length, such as 8000-8002:8000-8002");
            return null;
        }
        List<String> b = new ArrayList<>();
        for (int k = 0; k <= h1 - h0; k++) b.add(addr + ":" + (h0 + k) + ":" + (c0 + k) + (proto.equals("/tcp") ? "" : proto));
        return b;
    }

    private void volumes(JsonNode v, String p) {
        if (v.isNull()) return;
        if (!v.isArray()) {
            ctx.refuse(p, "must be a list, such as [\"data:/var/lib/data\"]");
            return;
        }
        ArrayNode list = F.arrayNode();
        for (int i = 0; i < v.size(); i++) {
            String ip = p + "[" + i + "]";
            JsonNode e = v.get(i);
            String mount = e.isTextual() ? shortVolume(e.asText(), ip) : e.isObject() ? longVolume((ObjectNode) e, ip) : null;
            if (!e.isTextual() && !e.isObject()) ctx.refuse(ip, "must be \"SOURCE:TARGET[:ro]\" or a mapping with type, source and target");
            if (mount == null) continue;
            ctx.origin(to + ".volumes[" + list.size() + "]", ip);
            list.add(mount);
        }
        if (!list.isEmpty()) out.put("volumes", list);
    }

    private String shortVolume(String text, String p) {
        String[] parts = text.split(":", -1);
        if (parts.length == 1) {
            ctx.refuse(p, "'" + text + "' is an anonymous volume: mesh keeps data in named volumes or host paths; write NAME:" + text
                    + " with NAME declared under the top-level volumes");
            return null;
        }
        if (parts.length > 3) {
            ctx.refuse(p, "'" + text + "' is not SOURCE:TARGET[:ro]");
            return null;
        }
        boolean ro = false;
        if (parts.length == 3) {
            for (String opt : parts[2].split(",")) {
                if (opt.equals("ro")) ro = true;
                else if (!opt.equals("rw")) {
                    ctx.refuse(p, "mount option '" + opt + "': mesh mounts read-write, or read-only with ro; remove it");
                    return null;
                }
            }
        }
        String source = source(parts[0], p, null);
        return source == null ? null : source + ":" + parts[1] + (ro ? ":ro" : "");
    }

    private String longVolume(ObjectNode o, String p) {
        String type = o.path("type").asText("");
        for (Map.Entry<String, JsonNode> e : o.properties()) {
            String k = e.getKey();
            if (k.startsWith("x-") || Set.of("type", "source", "target", "read_only").contains(k)) continue;
            if (k.equals("bind") && type.equals("bind") && e.getValue().isObject()) {
                e.getValue().fields().forEachRemaining(b -> {
                    if (!b.getKey().equals("create_host_path")) {
                        ctx.refuse(p + ".bind." + b.getKey(), "mesh does not do a bind mount's " + b.getKey() + ": remove it");
                    }
                });
            } else if (k.equals("volume") && type.equals("volume") && e.getValue().isObject()) {
                e.getValue().fields().forEachRemaining(b -> {
                    if (!(b.getKey().equals("nocopy") && b.getValue().asText().equalsIgnoreCase("false"))) {
                        ctx.refuse(p + ".volume." + b.getKey(), "mesh does not do a volume's " + b.getKey() + ": remove it");
                    }
                });
            } else if (k.equals("tmpfs") && type.equals("tmpfs")) {
                continue; // read below
            } else {
                ctx.refuse(p + "." + k, "mesh does not do a mount's " + k + (type.isEmpty() ? "" : " with type " + type) + ": remove it");
            }
        }
        String target = o.path("target").asText("");
        if (target.isEmpty()) {
            ctx.refuse(p, "has no target: give the path in the container");
            return null;
        }
        boolean ro = o.path("read_only").asText("false").equalsIgnoreCase("true");
        switch (type) {
            case "tmpfs" -> {
                List<String> opts = new ArrayList<>();
                JsonNode t = o.get("tmpfs");
                if (t != null && t.isObject()) {
                    t.fields().forEachRemaining(e -> {
                        if (Set.of("size", "mode").contains(e.getKey())) opts.add(e.getKey() + "=" + e.getValue().asText());
                        else ctx.refuse(p + ".tmpfs." + e.getKey(), "mesh's tmpfs takes size and mode: remove " + e.getKey());
                    });
                }
                if (ro) opts.add("ro");
                addTmpfs(target + (opts.isEmpty() ? "" : ":" + String.join(",", opts)), p);
                return null;
            }
            case "bind", "volume" -> {
                JsonNode src = o.get("source");
                if (src == null || src.asText().isEmpty()) {
                    ctx.refuse(p, "has no source: " + (type.equals("volume") ? "an anonymous volume keeps no data mesh can find; name a volume declared under the top-level volumes" : "give the host path"));
                    return null;
                }
                String source = source(src.asText(), p + ".source", type);
                if (source != null && type.equals("bind")) {
                    boolean create = o.path("bind").path("create_host_path").asText("false").equalsIgnoreCase("true");
                    (create ? bindsCreating : bindsNotCreating).add(p);
                }
                return source == null ? null : source + ":" + target + (ro ? ":ro" : "");
            }
            default -> {
                ctx.refuse(p + ".type", type.isEmpty() ? "missing: give volume, bind or tmpfs" : "mesh mounts volume, bind and tmpfs, not " + type);
                return null;
            }
        }
    }

    /**
     * @param type {@code bind} or {@code volume} for the long syntax, {@code null} for the short one (a path is a bind,
     *             a name a volume)
     * @return the source as the manifest names it: an absolute host path or the volume's Docker name
     */
    private String source(String src, String p, String type) {
        if (src.startsWith("~")) {
            ctx.refuse(p, "'" + src + "' is under a user's home: give an absolute host path (it must exist on every host)");
            return null;
        }
        boolean path = src.startsWith("/") || src.startsWith(".") || "bind".equals(type);
        if (path && "volume".equals(type)) {
            ctx.refuse(p, "a volume's source is a volume name, not a path: write type: bind for a host path");
            return null;
        }
        if (!path) {
            String docker = ctx.volumes.get(src);
            if (docker == null) ctx.refuse(p, "volume '" + src + "' is not declared under the top-level volumes: declare it (compose refuses it too), or give a host path starting with / or ./");
            return docker;
        }
        String absolute = src;
        if (!src.startsWith("/")) {
            absolute = ctx.directory.resolve(src).normalize().toString();
            ctx.note(p, "'" + src + "' is relative to the compose file's directory: " + absolute + ", which must exist on every host"
                    + HOST_PATH_POLICY);
        } else {
            absolute = Path.of(src).normalize().toString();
            ctx.note(p, "'" + absolute + "' is a host path, which must exist on every host" + HOST_PATH_POLICY);
        }
        if (type == null) shortBind = true;
        return absolute;
    }

    /** Why a bind mount may still be refused where it lands: an agent's default policy binds no host path (SPEC.md, "Containers"). */
    private static final String HOST_PATH_POLICY = "; an agent binds it only when started with --allow-host-path covering it";

    private void addTmpfs(String entry, String composePath) {
        ctx.origin(to + ".tmpfs[" + tmpfs.size() + "]", composePath);
        tmpfs.add(entry);
    }

    private void ulimits(JsonNode v, String p) {
        if (!(v instanceof ObjectNode o)) {
            ctx.refuse(p, "must be a mapping, such as {nofile: {soft: 20000, hard: 40000}, nproc: 65535}");
            return;
        }
        ObjectNode u = F.objectNode();
        o.fields().forEachRemaining(e -> {
            String ep = p + "." + e.getKey();
            if (e.getValue() instanceof ObjectNode limits) {
                ObjectNode l = u.putObject(e.getKey());
                limits.fields().forEachRemaining(x -> {
                    if (Set.of("soft", "hard").contains(x.getKey())) number(x.getValue(), ep + "." + x.getKey(), n -> l.put(x.getKey(), n));
                    else ctx.refuse(ep + "." + x.getKey(), "a ulimit has soft and hard: remove " + x.getKey());
                });
            } else {
                number(e.getValue(), ep, n -> u.put(e.getKey(), n));
            }
        });
        put("ulimits", u, p);
    }

    private void extraHosts(JsonNode v, String p) {
        ArrayNode lines = F.arrayNode();
        if (v instanceof ObjectNode o) {
            o.fields().forEachRemaining(e -> text(e.getValue(), p + "." + e.getKey(), ip -> lines.add(e.getKey() + ":" + ip)));
        } else {
            strings(v, p, false, l -> l.forEach(h -> {
                int eq = h.indexOf('='); // compose's newer form, name=ip, for IPv6 addresses
                lines.add(eq > 0 ? h.substring(0, eq) + ":" + h.substring(eq + 1) : h);
            }));
        }
        if (!lines.isEmpty()) put("extra-hosts", lines, p);
    }

    private void logging(JsonNode v, String p) {
        if (!(v instanceof ObjectNode o)) {
            ctx.refuse(p, "must be a mapping with driver and options");
            return;
        }
        ObjectNode l = F.objectNode();
        o.fields().forEachRemaining(e -> {
            switch (e.getKey()) {
                case "driver" -> text(e.getValue(), p + ".driver", d -> l.put("driver", d));
                case "options" -> keyValues(e.getValue(), p + ".options", "logging.options", m -> l.set("options", m));
                default -> { if (!e.getKey().startsWith("x-")) ctx.refuse(p + "." + e.getKey(), "logging has driver and options: remove " + e.getKey()); }
            }
        });
        put("logging", l, p);
    }

    private void healthcheck(JsonNode v, String p) {
        if (!(v instanceof ObjectNode o)) {
            ctx.refuse(p, "must be a mapping with test, interval, timeout, retries and start_period");
            return;
        }
        ObjectNode h = F.objectNode();
        boolean disabled = o.path("disable").asText("false").equalsIgnoreCase("true");
        if (disabled) {
            h.set("test", F.arrayNode().add("NONE"));
            o.fieldNames().forEachRemaining(k -> {
                if (!k.equals("disable") && !k.startsWith("x-")) ctx.refuse(p + "." + k, "disable: true turns the healthcheck off: remove " + k);
            });
            put("healthcheck", h, p);
            return;
        }
        o.fields().forEachRemaining(e -> {
            String k = e.getKey();
            String ep = p + "." + k;
            switch (k) {
                case "test" -> {
                    if (e.getValue().isTextual()) h.set("test", F.arrayNode().add("CMD-SHELL").add(e.getValue().asText()));
                    else strings(e.getValue(), ep, false, l -> h.set("test", array(l)));
                    ctx.origin(to + ".healthcheck.test", ep);
                }
                case "interval", "timeout" -> duration(e.getValue(), ep, true, d -> { h.put(k, d); ctx.origin(to + ".healthcheck." + k, ep); });
                case "start_period" -> duration(e.getValue(), ep, true, d -> { h.put("start-period", d); ctx.origin(to + ".healthcheck.start-period", ep); });
                case "retries" -> number(e.getValue(), ep, n -> { h.put("retries", n); ctx.origin(to + ".healthcheck.retries", ep); });
                case "disable" -> { }
                case "start_interval" -> ctx.refuse(ep, "mesh checks at one interval: remove start_interval");
                default -> { if (!k.startsWith("x-")) ctx.refuse(ep, "unknown healthcheck field '" + k + "': remove it"); }
            }
        });
        out.put("healthcheck", h);
        ctx.origin(to + ".healthcheck", p);
    }

    private void dependsOn(JsonNode v, String p) {
        ObjectNode d = F.objectNode();
        if (v.isArray()) {
            strings(v, p, false, l -> l.forEach(s -> d.putObject(containerName(s)).put("condition", "started")));
        } else if (v instanceof ObjectNode o) {
            o.fields().forEachRemaining(e -> {
                String ep = p + "." + e.getKey();
                String condition = "started";
                if (e.getValue() instanceof ObjectNode dep) {
                    for (Map.Entry<String, JsonNode> f : dep.properties()) {
                        String fv = f.getValue().asText();
                        switch (f.getKey()) {
                            case "condition" -> {
                                switch (fv) {
                                    case "service_started" -> condition = "started";
                                    case "service_healthy" -> condition = "healthy";
                                    case "service_completed_successfully" -> {
                                        ctx.refuse(ep + ".condition", "mesh runs long-lived containers, none to completion: run the one-shot "
                                                + "job another way (a schedule's step), and depend on a running service");
                                        condition = null;
                                    }
                                    default -> {
                                        ctx.refuse(ep + ".condition", "'" + fv + "' is not service_started or service_healthy");
                                        condition = null;
                                    }
                                }
                            }
                            case "required" -> {
                                if (!fv.equalsIgnoreCase("true")) ctx.refuse(ep + ".required", "mesh runs every container of the module: remove required: false, or the dependency");
                            }
                            case "restart" -> {
                                if (!fv.equalsIgnoreCase("false")) ctx.refuse(ep + ".restart", "mesh does not restart a container when its dependency is recreated: remove restart");
                            }
                            default -> { if (!f.getKey().startsWith("x-")) ctx.refuse(ep + "." + f.getKey(), "unknown depends_on field: remove it"); }
                        }
                    }
                } else if (!e.getValue().isNull()) {
                    ctx.refuse(ep, "must be a mapping such as {condition: service_healthy}");
                    condition = null;
                }
                if (condition != null) {
                    d.putObject(containerName(e.getKey())).put("condition", condition);
                    ctx.origin(to + ".depends-on." + containerName(e.getKey()), ep);
                }
            });
        } else {
            ctx.refuse(p, "must be a list of services or a mapping of them");
            return;
        }
        if (!d.isEmpty()) {
            out.put("depends-on", d);
            ctx.origin(to + ".depends-on", p);
        }
    }

    private void devices(JsonNode v, String p) {
        if (!v.isArray()) {
            ctx.refuse(p, "must be a list, such as [\"/dev/ttyUSB0:/dev/ttyUSB0\"]");
            return;
        }
        ArrayNode list = F.arrayNode();
        for (int i = 0; i < v.size(); i++) {
            JsonNode e = v.get(i);
            String ip = p + "[" + i + "]";
            if (e instanceof ObjectNode o) {
                String src = o.path("source").asText("");
                String dst = o.path("target").asText(src);
                String perms = o.path("permissions").asText("");
                o.fieldNames().forEachRemaining(k -> {
                    if (!Set.of("source", "target", "permissions").contains(k)) ctx.refuse(ip + "." + k, "a device has source, target and permissions: remove " + k);
                });
                list.add(src + ":" + dst + (perms.isEmpty() ? "" : ":" + perms));
            } else {
                text(e, ip, list::add);
            }
            ctx.origin(to + ".devices[" + (list.size() - 1) + "]", ip);
        }
        put("devices", list, p);
    }

    private void flag(JsonNode v, String p, String field) {
        text(v, p, s -> {
            String b = s.toLowerCase(Locale.ROOT);
            if (b.equals("true")) put(field, F.booleanNode(true), p);
            else if (!b.equals("false")) ctx.refuse(p, "must be true or false; got '" + s + "'");
        });
    }

    /** A duration; with {@code zeroIsUnset}, 0 means "the default" (compose's healthcheck), else it is refused. */
    private void duration(JsonNode v, String p, boolean zeroIsUnset, Consumer<String> use) {
        text(v, p, s -> {
            try {
                Duration d = GoDuration.parse(s);
                if (d.isZero()) {
                    if (!zeroIsUnset) ctx.refuse(p, "mesh waits at least 1s before it kills: give 1s or more");
                    return;
                }
                use.accept(GoDuration.mesh(d));
            } catch (IllegalArgumentException e) {
                ctx.refuse(p, e.getMessage());
            }
        });
    }

    private void number(JsonNode v, String p, Consumer<Long> use) {
        text(v, p, s -> {
            try {
                use.accept(Long.parseLong(s));
            } catch (NumberFormatException e) {
                ctx.refuse(p, "must be a whole number; got '" + s + "'");
            }
        });
    }

    /** A scalar as text; a missing value or a list or mapping is refused. */
    private void text(JsonNode v, String p, Consumer<String> use) {
        if (v == null || v.isNull()) ctx.refuse(p, "has no value: give one, or remove the field");
        else if (!v.isValueNode()) ctx.refuse(p, "must be a single value, not a " + (v.isArray() ? "list" : "mapping"));
        else use.accept(v.asText());
    }

    /** A list of scalars; with {@code single}, one scalar stands for a list of it. */
    private void strings(JsonNode v, String p, boolean single, Consumer<List<String>> use) {
        if (v.isNull()) return;
        if (single && v.isValueNode()) {
            use.accept(List.of(v.asText()));
            return;
        }
        if (!v.isArray()) {
            ctx.refuse(p, "must be a list" + (single ? " or one value" : ""));
            return;
        }
        List<String> l = new ArrayList<>();
        boolean ok = true;
        for (int i = 0; i < v.size(); i++) {
            JsonNode e = v.get(i);
            if (e.isValueNode() && !e.isNull()) {
                l.add(e.asText());
            } else {
                ctx.refuse(p + "[" + i + "]", "must be a single value");
                ok = false;
            }
        }
        if (ok) use.accept(l);
    }

    /**
     * Compose's two forms of a mapping, {@code {K: V}} or {@code ["K=V"]}; values as written. In {@code labels} a key
     * without a value is the empty string, as in compose; elsewhere it is refused (in environment compose takes it from
     * the shell that runs compose, and mesh has none).
     *
     * @param field the manifest's field, for the origin of each entry of the list form
     */
    private void keyValues(JsonNode v, String p, String field, Consumer<ObjectNode> use) {
        boolean nullIsEmpty = field.equals("labels");
        ObjectNode m = F.objectNode();
        if (v.isNull()) return;
        if (v instanceof ObjectNode o) {
            o.fields().forEachRemaining(e -> {
                String ep = p + "." + e.getKey();
                if (e.getValue().isNull()) {
                    if (nullIsEmpty) m.put(e.getKey(), "");
                    else ctx.refuse(ep, noValue(e.getKey()));
                } else {
                    text(e.getValue(), ep, s -> {
                        m.put(e.getKey(), s);
                        if (field.equals("env")) secretLooking(e.getKey(), s, ep);
                    });
                }
            });
        } else if (v.isArray()) {
            for (int i = 0; i < v.size(); i++) {
                String ip = p + "[" + i + "]";
                int index = i;
                text(v.get(i), ip, s -> {
                    int eq = s.indexOf('=');
                    String k = eq < 0 ? s : s.substring(0, eq);
                    if (eq < 0 && !nullIsEmpty) ctx.refuse(ip, noValue(k));
                    else if (m.has(k)) ctx.refuse(ip, "'" + k + "' is given twice: keep one");
                    else {
                        m.put(k, eq < 0 ? "" : s.substring(eq + 1));
                        ctx.origin(to + "." + field + "." + k, p + "[" + index + "]");
                        if (field.equals("env")) secretLooking(k, eq < 0 ? "" : s.substring(eq + 1), ip);
                    }
                });
            }
        } else {
            ctx.refuse(p, "must be a mapping {KEY: value} or a list [\"KEY=value\"]");
            return;
        }
        use.accept(m);
    }

    /**
     * Notes an environment variable named like a secret ({@code *PASSWORD*}, {@code *SECRET*}, {@code *TOKEN*}): it is
     * imported as written, so its value goes into ZooKeeper and its history (decision 21); mesh's secrets keep it out.
     */
    private void secretLooking(String key, String value, String p) {
        String k = key.toUpperCase(Locale.ROOT);
        if (value.isEmpty() || !(k.contains("PASSWORD") || k.contains("SECRET") || k.contains("TOKEN"))) return;
        ctx.note(p, "'" + key + "' looks like a secret and is imported as a plain env value, stored in ZooKeeper and the push history: "
                + "give it through mesh's secrets instead (secrets: {" + key + ": {file: PATH}} in the manifest, docs/reference/manifest.md, \"secrets\")");
    }

    private static String noValue(String key) {
        return "'" + key + "' has no value, which compose takes from the shell that runs it; mesh has none: give the value "
                + "(a secret: give it through mesh's secrets, docs/reference/manifest.md, \"secrets\")";
    }

    private static ArrayNode array(List<String> l) {
        ArrayNode a = F.arrayNode();
        l.forEach(a::add);
        return a;
    }
}
