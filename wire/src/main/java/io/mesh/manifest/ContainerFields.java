package io.mesh.manifest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Checks a container's compose-grade fields (SPEC.md, "Containers"; decision 17) and rewrites the forms compose also
 * accepts into the one form the desired node keeps: a YAML number or boolean becomes the text the operator wrote,
 * {@code labels} and {@code sysctls} given as {@code ["k=v"]} become mappings, {@code extra-hosts} given as a
 * mapping becomes {@code ["name:ip"]}, a single {@code tmpfs} or {@code dns} string becomes a list, a {@code ulimits}
 * number becomes {@code {soft, hard}}, and {@code memory} is lower-cased. Every error names the field path and the
 * fix. Used by {@link ManifestParser} on each container, before the tree becomes a {@link ContainerSpec}.
 */
final class ContainerFields {
    /** The fields this class checks, as the manifest names them. */
    static final Set<String> NAMES = Set.of("entrypoint", "user", "working-dir", "hostname", "labels", "memory", "cpus",
            "pids-limit", "ulimits", "tmpfs", "read-only", "extra-hosts", "stop-signal", "init", "logging", "dns", "devices",
            "sysctls", "security-opt", "create-host-path");

    /** Where errors go and how a scalar's text as written is found: {@link ManifestParser}'s per-document check. */
    interface Sink {
        void error(String path, String message);

        /** @return the scalar as the operator wrote it (for numbers and booleans) */
        String text(JsonNode n, String path);
    }

    private static final Pattern USER = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9_.-]{0,31}(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,31})?");
    private static final Pattern HOSTNAME = Pattern.compile("(?=.{1,63}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*");
    private static final Pattern HOST_ENTRY = Pattern.compile("[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,252})");
    private static final Pattern IPV4 = Pattern.compile("(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)");
    private static final Pattern CPUS = Pattern.compile("\\d{1,4}(?:\\.\\d{1,9})?");
    private static final Pattern TMPFS_OPTIONS = Pattern.compile("[A-Za-z0-9_.=+-]+(?:,[A-Za-z0-9_.=+-]+)*");
    private static final Pattern SYSCTL = Pattern.compile("[a-z0-9_]+(?:[./][A-Za-z0-9_-]+)+");
    private static final Pattern LOG_OPTION = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,127}");
    private static final Pattern SIGNAL = Pattern.compile("(?:SIG)?(?:[A-Z][A-Z0-9]{1,7}|RTMIN\\+\\d{1,2}|RTMAX-\\d{1,2})");
    private static final Pattern DEVICE_PERMISSIONS = Pattern.compile("(?!.*(.).*\\1)[rwm]{1,3}");
    /** Linux signal names, as Docker's {@code signal.SignalMap} knows them (without {@code SIG}). */
    private static final Set<String> SIGNALS = Set.of("ABRT", "ALRM", "BUS", "CHLD", "CLD", "CONT", "FPE", "HUP", "ILL", "INT",
            "IO", "IOT", "KILL", "PIPE", "POLL", "PROF", "PWR", "QUIT", "SEGV", "STKFLT", "STOP", "SYS", "TERM", "TRAP",
            "TSTP", "TTIN", "TTOU", "URG", "USR1", "USR2", "VTALRM", "WINCH", "XCPU", "XFSZ", "RTMIN", "RTMAX");
    /** Resource names Docker's {@code --ulimit} takes ({@code docker/go-units}). */
    static final Set<String> ULIMITS = Set.of("as", "core", "cpu", "data", "fsize", "locks", "memlock", "msgqueue", "nice",
            "nofile", "nproc", "rss", "rtprio", "rttime", "sigpending", "stack");
    /** Options of {@code security-opt} that Docker's API takes. */
    private static final Set<String> SECURITY_OPTS = Set.of("no-new-privileges", "seccomp", "apparmor", "label", "systempaths");
    /** Docker's minimum memory limit (dockerd refuses less). */
    static final long MIN_MEMORY = 6L * 1024 * 1024;

    private ContainerFields() {}

    /**
     * Checks (and rewrites, see above) the compose-grade fields of one container.
     *
     * @param c    the document's errors
     * @param path the container's path, {@code containers.<name>}
     * @param node the container's mapping
     */
    static void check(Sink c, String path, ObjectNode node) {
        JsonNode net = node.get("network");
        String network = net == null ? null : net.asText();
        boolean hostNetwork = (network == null && !node.has("networks")) || "host".equals(network);
        list(c, node, "entrypoint", path, false).ifPresent(l -> {
            if (l.isEmpty()) c.error(path + ".entrypoint", "is empty: leave entrypoint out for the image's own, or give the program to run, such as [/bin/sh, -c]");
        });
        JsonNode user = scalar(c, node, "user", path);
        if (user != null && !USER.matcher(user.asText()).matches()) {
            c.error(path + ".user", "'" + show(user.asText()) + "' is not a user: write user or user:group, by name or number, such as app or \"1000:1000\"");
        }
        JsonNode dir = node.get("working-dir");
        if (dir != null && !(dir.isTextual() && cleanAbsolute(dir.asText()))) {
            c.error(path + ".working-dir", "must be an absolute, clean path such as /srv/app; got " + describe(dir));
        }
        hostname(c, path, node);
        labels(c, path, node);
        memory(c, path, node);
        cpus(c, path, node);
        JsonNode pids = node.get("pids-limit");
        if (pids != null && !(pids.isIntegralNumber() && pids.canConvertToLong() && (pids.asLong() == -1 || (pids.asLong() >= 1 && pids.asLong() <= 4_194_304)))) {
            c.error(path + ".pids-limit", "must be a whole number of processes from 1, such as 200, or -1 for no limit; got " + describe(pids));
        }
        ulimits(c, path, node);
        tmpfs(c, path, node);
        flag(c, node, "read-only", path);
        extraHosts(c, path, node);
        stopSignal(c, path, node);
        flag(c, node, "init", path);
        logging(c, path, node);
        list(c, node, "dns", path, true).ifPresent(l -> {
            for (int i = 0; i < l.size(); i++) {
                if (!ip(l.get(i))) c.error(path + ".dns[" + i + "]", "'" + show(l.get(i)) + "' is not an IP address: Docker takes DNS servers by address, such as 192.0.2.53");
            }
        });
        devices(c, path, node);
        sysctls(c, path, node, network, hostNetwork);
        securityOpt(c, path, node);
        flag(c, node, "create-host-path", path);
    }

    /**
     * {@code hostname}: an RFC 1123 name of at most 63 characters (Linux's limit). Allowed with network host too: the
     * container keeps its own UTS namespace, so the name is its own (dockerd 20.10 accepts it; decision 17).
     */
    private static void hostname(Sink c, String path, ObjectNode node) {
        JsonNode h = scalar(c, node, "hostname", path);
        if (h != null && !HOSTNAME.matcher(h.asText()).matches()) {
            c.error(path + ".hostname", "'" + show(h.asText()) + "' is not a host name: letters, digits and '-' in dot-separated parts, at most 63 characters, such as web-1");
        }
    }

    static void labels(Sink c, String path, ObjectNode node) {
        String p = path + ".labels";
        ObjectNode labels = mapping(c, node, "labels", p, "a mapping of label to value, such as {com.example.team: store}");
        if (labels == null) return;
        for (Map.Entry<String, JsonNode> e : labels.properties()) {
            String k = e.getKey();
            if (k.isEmpty() || k.length() > 255 || hasControl(k)) {
                c.error(p + "." + show(k), "'" + show(k) + "' is not a label key: give 1 to 255 printable characters, such as com.example.team");
            } else if (k.startsWith(ContainerSpec.MESH_LABEL_PREFIX)) {
                c.error(p + "." + show(k), "label keys starting with " + ContainerSpec.MESH_LABEL_PREFIX
                        + " are mesh's own (mesh.module, mesh.spec-hash ...): rename it, such as com.example." + show(k.substring(ContainerSpec.MESH_LABEL_PREFIX.length())));
            }
        }
    }

    private static void memory(Sink c, String path, ObjectNode node) {
        JsonNode m = scalar(c, node, "memory", path);
        if (m == null) return;
        String text = m.asText().strip().toLowerCase(Locale.ROOT);
        try {
            long bytes = ByteSize.parse(text);
            if (bytes < MIN_MEMORY) {
                c.error(path + ".memory", "'" + show(m.asText()) + "' is below Docker's smallest memory limit, 6m: give more, such as 64m");
                return;
            }
            node.put("memory", text);
        } catch (IllegalArgumentException e) {
            c.error(path + ".memory", e.getMessage());
        }
    }

    private static void cpus(Sink c, String path, ObjectNode node) {
        JsonNode n = node.get("cpus");
        if (n == null) return;
        String text = n.isNumber() || n.isTextual() ? c.text(n, path + ".cpus").strip() : "";
        if (!CPUS.matcher(text).matches() || new BigDecimal(text).compareTo(new BigDecimal("0.01")) < 0) {
            c.error(path + ".cpus", "must be a number of CPUs from 0.01, such as 1.5 or 0.5; got " + describe(n));
            return;
        }
        node.put("cpus", new BigDecimal(text).stripTrailingZeros().toPlainString()); // 2.0 and 2 are one spec
    }

    private static void ulimits(Sink c, String path, ObjectNode node) {
        String p = path + ".ulimits";
        ObjectNode u = mapping(c, node, "ulimits", p, "a mapping of resource to limits, such as {nofile: {soft: 20000, hard: 40000}, nproc: 65535}");
        if (u == null) return;
        for (Map.Entry<String, JsonNode> e : u.properties()) {
            String at = p + "." + show(e.getKey());
            if (!ULIMITS.contains(e.getKey())) {
                c.error(at, "'" + show(e.getKey()) + "' is not a resource Docker limits: use one of " + new TreeSet<>(ULIMITS));
                continue;
            }
            JsonNode v = e.getValue();
            if (v.isIntegralNumber()) { // compose's short form: soft and hard alike
                if (!limitOk(v)) c.error(at, "must be a whole number from 0 (or -1, unlimited), such as 65535; got " + describe(v));
                else e.setValue(u.objectNode().put("soft", v.asLong()).put("hard", v.asLong()));
                continue;
            }
            if (!(v instanceof ObjectNode o) || !o.has("soft") || !o.has("hard") || o.size() != 2) {
                c.error(at, "must be {soft: N, hard: N}, or one number for both, such as 65535; got " + describe(v));
            } else if (!limitOk(o.get("soft")) || !limitOk(o.get("hard"))) {
                c.error(at, "soft and hard must be whole numbers from 0 (or -1, unlimited), such as {soft: 20000, hard: 40000}");
            } else if (unlimitedAsMax(o.get("soft").asLong()) > unlimitedAsMax(o.get("hard").asLong())) {
                c.error(at + ".soft", o.get("soft").asLong() + " is above the hard limit " + o.get("hard").asLong() + ": the soft limit must not exceed the hard one");
            }
        }
    }

    /** A limit: a whole number from 0, or Docker's -1 for unlimited (as {@code memlock: -1} for OpenSearch). */
    private static boolean limitOk(JsonNode n) {
        return n != null && n.isIntegralNumber() && n.canConvertToLong() && n.asLong() >= -1;
    }

    private static long unlimitedAsMax(long limit) { return limit == -1 ? Long.MAX_VALUE : limit; }

    private static void tmpfs(Sink c, String path, ObjectNode node) {
        list(c, node, "tmpfs", path, true).ifPresent(l -> {
            Set<String> seen = new HashSet<>();
            for (int i = 0; i < l.size(); i++) {
                String t = l.get(i);
                int colon = t.indexOf(':');
                String dir = colon < 0 ? t : t.substring(0, colon);
                String at = path + ".tmpfs[" + i + "]";
                if (!cleanAbsolute(dir) || dir.equals("/")) {
                    c.error(at, "'" + show(t) + "' is not a tmpfs mount: write an absolute container path, optionally with mount options, such as /run or \"/tmp:size=64m,mode=1777\"");
                } else if (colon >= 0 && !TMPFS_OPTIONS.matcher(t.substring(colon + 1)).matches()) {
                    c.error(at, "'" + show(t.substring(colon + 1)) + "' are not mount options: write comma-separated options such as size=64m,mode=1777");
                } else if (!seen.add(dir)) {
                    c.error(at, "'" + dir + "' is mounted twice: give each path once");
                }
            }
        });
    }

    private static void extraHosts(Sink c, String path, ObjectNode node) {
        String p = path + ".extra-hosts";
        JsonNode n = node.get("extra-hosts");
        if (n instanceof ObjectNode o) { // compose's mapping form: name: ip
            ArrayNode lines = node.arrayNode();
            for (Map.Entry<String, JsonNode> e : o.properties()) {
                lines.add(e.getKey() + ":" + (e.getValue().isValueNode() ? c.text(e.getValue(), p + "." + e.getKey()) : ""));
            }
            node.set("extra-hosts", lines);
        }
        list(c, node, "extra-hosts", path, false).ifPresent(l -> {
            for (int i = 0; i < l.size(); i++) {
                String h = l.get(i);
                int colon = h.indexOf(':');
                String name = colon < 0 ? h : h.substring(0, colon);
                String addr = colon < 0 ? "" : h.substring(colon + 1);
                if (!HOST_ENTRY.matcher(name).matches() || !(ip(addr) || addr.equals("host-gateway"))) {
                    c.error(p + "[" + i + "]", "'" + show(h) + "' is not a host entry: write \"name:ip\", such as \"db.internal:192.0.2.10\" (or \"name:host-gateway\")");
                }
            }
        });
    }

    private static void stopSignal(Sink c, String path, ObjectNode node) {
        JsonNode n = scalar(c, node, "stop-signal", path);
        if (n == null) return;
        String s = n.asText();
        boolean ok;
        if (s.matches("\\d{1,2}")) {
            ok = Integer.parseInt(s) >= 1 && Integer.parseInt(s) <= 64;
        } else {
            String name = s.startsWith("SIG") ? s.substring(3) : s;
            ok = SIGNAL.matcher(s).matches() && (SIGNALS.contains(name) || name.startsWith("RTMIN+") || name.startsWith("RTMAX-"));
        }
        if (!ok) c.error(path + ".stop-signal", "'" + show(s) + "' is not a signal: write its name such as SIGINT or SIGQUIT, or its number from 1 to 64");
    }

    private static void logging(Sink c, String path, ObjectNode node) {
        String p = path + ".logging";
        JsonNode n = node.get("logging");
        if (n == null) return;
        if (!(n instanceof ObjectNode o) || o.isEmpty()) {
            c.error(p, "must be a mapping with driver and options, such as {driver: json-file, options: {max-size: 10m}}; got " + describe(n));
            return;
        }
        for (Iterator<String> i = o.fieldNames(); i.hasNext(); ) {
            String f = i.next();
            if (!f.equals("driver") && !f.equals("options")) c.error(p + "." + show(f), "unknown field '" + show(f) + "': allowed here are [driver, options]");
        }
        JsonNode driver = o.get("driver");
        if (driver != null && !(driver.isTextual() && ContainerSpec.Logging.DRIVERS.contains(driver.asText()))) {
            c.error(p + ".driver", "must be a log driver Docker ships, one of " + new TreeSet<>(ContainerSpec.Logging.DRIVERS) + "; got " + describe(driver));
        }
        ObjectNode options = mapping(c, o, "options", p + ".options", "a mapping of option to value, such as {max-size: 10m, max-file: 3}");
        if (options != null) {
            for (Iterator<String> i = options.fieldNames(); i.hasNext(); ) {
                String k = i.next();
                if (!LOG_OPTION.matcher(k).matches()) c.error(p + ".options." + show(k), "'" + show(k) + "' is not a log option name, such as max-size");
            }
        }
    }

    private static void devices(Sink c, String path, ObjectNode node) {
        list(c, node, "devices", path, false).ifPresent(l -> {
            for (int i = 0; i < l.size(); i++) {
                String[] parts = l.get(i).split(":", -1);
                boolean ok = parts.length <= 3 && cleanAbsolute(parts[0])
                        && (parts.length < 2 || cleanAbsolute(parts[1]))
                        && (parts.length < 3 || DEVICE_PERMISSIONS.matcher(parts[2]).matches());
                if (!ok) {
                    c.error(path + ".devices[" + i + "]", "'" + show(l.get(i)) + "' is not a device: write \"<host device>[:<container path>[:rwm]]\", such as \"/dev/fuse\" or \"/dev/ttyUSB0:/dev/ttyUSB0:rw\"");
                }
            }
        });
    }

    private static void sysctls(Sink c, String path, ObjectNode node, String network, boolean hostNetwork) {
        String p = path + ".sysctls";
        ObjectNode s = mapping(c, node, "sysctls", p, "a mapping of kernel parameter to value, such as {net.core.somaxconn: 1024}");
        if (s == null) return;
        for (Iterator<String> i = s.fieldNames(); i.hasNext(); ) {
            String k = i.next();
            if (!SYSCTL.matcher(k).matches()) {
                c.error(p + "." + show(k), "'" + show(k) + "' is not a kernel parameter name: write it dotted, such as net.core.somaxconn");
            } else if (hostNetwork && k.startsWith("net.")) {
                c.error(p + "." + k, "net.* parameters cannot be set with network " + (network == null ? "host (the default)" : "host")
                        + ": they would change the host's own network stack and Docker refuses them; give network: none, bridge or a network name");
            }
        }
    }

    private static void securityOpt(Sink c, String path, ObjectNode node) {
        list(c, node, "security-opt", path, false).ifPresent(l -> {
            for (int i = 0; i < l.size(); i++) {
                String o = l.get(i);
                String key = o.split("[=:]", 2)[0];
                String at = path + ".security-opt[" + i + "]";
                if (!SECURITY_OPTS.contains(key)) {
                    c.error(at, "'" + show(o) + "' is not a security option: Docker takes " + new TreeSet<>(SECURITY_OPTS) + ", such as no-new-privileges:true");
                } else if (key.equals("seccomp") && !(o.equals("seccomp=unconfined") || o.equals("seccomp=builtin"))) {
                    c.error(at, "'" + show(o) + "': Docker's API takes a seccomp profile's JSON, not a file, and mesh sends none: use seccomp=unconfined or seccomp=builtin, or leave it out for Docker's default profile");
                }
            }
        });
    }

    /** A {@code true}/{@code false} field. */
    static void flag(Sink c, JsonNode node, String field, String path) {
        JsonNode n = node.get(field);
        if (n != null && !n.isBoolean()) c.error(path + "." + field, "must be true or false; got " + describe(n));
    }

    /**
     * A string field; a number is taken as the text written ({@code user: 1000}).
     *
     * @return the field as a text node, or {@code null} when absent or refused (the refusal recorded)
     */
    private static JsonNode scalar(Sink c, ObjectNode node, String field, String path) {
        JsonNode n = node.get(field);
        if (n == null) return null;
        String at = path + "." + field;
        if (!(n.isTextual() || n.isNumber()) || n.asText().isEmpty() || hasControl(n.asText())) {
            c.error(at, "must be a non-empty string; got " + describe(n));
            return null;
        }
        if (!n.isTextual()) node.put(field, c.text(n, at));
        return node.get(field);
    }

    /**
     * A list of strings (numbers taken as written); with {@code single}, one string stands for a list of it, as
     * compose allows for {@code tmpfs} and {@code dns}.
     *
     * @return the strings, or empty when absent or refused (the refusal recorded)
     */
    private static Optional<List<String>> list(Sink c, ObjectNode node, String field, String path, boolean single) {
        JsonNode n = node.get(field);
        String at = path + "." + field;
        if (n == null) return Optional.empty();
        if (single && n.isTextual()) {
            n = node.arrayNode().add(n.asText());
            node.set(field, n);
        }
        if (!(n instanceof ArrayNode a)) {
            c.error(at, "must be a list of strings, such as [\"a\", \"b\"]" + (single ? " (or one string)" : "") + "; got " + describe(n));
            return Optional.empty();
        }
        List<String> out = new ArrayList<>();
        boolean ok = true;
        for (int i = 0; i < a.size(); i++) {
            JsonNode e = a.get(i);
            if (!(e.isTextual() || e.isNumber()) || hasControl(e.asText())) {
                c.error(at + "[" + i + "]", "must be a string without control characters; got " + describe(e));
                ok = false;
                continue;
            }
            String t = c.text(e, at + "[" + i + "]");
            if (!e.isTextual()) a.set(i, a.textNode(t));
            out.add(t);
        }
        return ok ? Optional.of(out) : Optional.empty();
    }

    /**
     * A mapping of name to a scalar value kept as written; compose's list form {@code ["k=v"]} is rewritten to it.
     *
     * @return the mapping, or {@code null} when absent or refused (the refusal recorded)
     */
    private static ObjectNode mapping(Sink c, ObjectNode node, String field, String path, String form) {
        JsonNode n = node.get(field);
        if (n == null) return null;
        if (n instanceof ArrayNode a && (field.equals("labels") || field.equals("sysctls"))) {
            Map<String, String> kv = new LinkedHashMap<>();
            boolean ok = true;
            for (int i = 0; i < a.size(); i++) {
                JsonNode e = a.get(i);
                int eq = e.isTextual() ? e.asText().indexOf('=') : -1;
                if (eq <= 0) {
                    c.error(path + "[" + i + "]", "must be \"key=value\"; got " + describe(e));
                    ok = false;
                } else if (kv.put(e.asText().substring(0, eq), e.asText().substring(eq + 1)) != null) {
                    c.error(path + "[" + i + "]", "'" + show(e.asText().substring(0, eq)) + "' is given twice: give each key once");
                    ok = false;
                }
            }
            if (!ok) return null;
            ObjectNode o = node.objectNode();
            kv.forEach(o::put);
            node.set(field, o);
            return o;
        }
        if (!(n instanceof ObjectNode o)) {
            c.error(path, "must be " + form + "; got " + describe(n));
            return null;
        }
        if (field.equals("ulimits")) return o; // values are checked by the caller
        for (Map.Entry<String, JsonNode> e : o.properties()) {
            JsonNode v = e.getValue();
            String at = path + "." + show(e.getKey());
            if (!v.isValueNode() || v.isNull()) {
                c.error(at, "must be a value such as \"text\" (write \"\" for an empty one); got " + describe(v));
            } else if (hasControl(v.asText())) {
                c.error(at, "contains a control character: remove it");
            } else if (!v.isTextual()) {
                e.setValue(o.textNode(c.text(v, at))); // 1.10 stays "1.10", yes stays "yes"
            }
        }
        return o;
    }

    /** @return true for an IPv4 or IPv6 address literal (never a name: nothing is looked up) */
    static boolean ip(String s) {
        return IPV4.matcher(s).matches() || ipv6(s);
    }

    private static boolean ipv6(String s) {
        String addr = s.indexOf('%') > 0 ? s.substring(0, s.indexOf('%')) : s;
        int gap = addr.indexOf("::");
        if (!addr.contains(":") || (gap >= 0 && addr.indexOf("::", gap + 1) >= 0)) return false;
        String[] halves = gap >= 0 ? new String[]{addr.substring(0, gap), addr.substring(gap + 2)} : new String[]{addr};
        int groups = 0;
        for (int h = 0; h < halves.length; h++) {
            if (halves[h].isEmpty()) continue;
            String[] parts = halves[h].split(":", -1);
            for (int i = 0; i < parts.length; i++) {
                if (h == halves.length - 1 && i == parts.length - 1 && IPV4.matcher(parts[i]).matches()) {
                    groups += 2; // an embedded IPv4 address, such as ::ffff:192.0.2.1
                } else if (parts[i].matches("[0-9A-Fa-f]{1,4}")) {
                    groups++;
                } else {
                    return false;
                }
            }
        }
        return gap >= 0 ? groups <= 7 : groups == 8;
    }

    /** @return true for an absolute path with no empty, {@code .} or {@code ..} segment and no control character */
    static boolean cleanAbsolute(String p) {
        if (!p.startsWith("/") || p.contains("//") || hasControl(p)) return false;
        for (String seg : p.substring(1).split("/")) {
            if (seg.equals(".") || seg.equals("..")) return false;
        }
        return true;
    }

    static boolean hasControl(String s) {
        return s.chars().anyMatch(ch -> ch < 0x20 || ch == 0x7f);
    }

    private static String show(String s) { return Printable.of(s, 60); }

    static String describe(JsonNode n) {
        if (n == null) return "nothing";
        String s = n.isObject() ? "a mapping" : n.isArray() ? "a list" : n.toString();
        return s.length() > 80 ? s.substring(0, 77) + "..." : s;
    }
}
