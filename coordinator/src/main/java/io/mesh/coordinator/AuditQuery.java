package io.mesh.coordinator;

import io.mesh.manifest.Durations;
import io.mesh.manifest.ModuleName;
import io.mesh.manifest.Printable;
import io.mesh.wire.ZkPaths;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The query of {@code GET /v1/audit?since=&until=&host=&module=&timeout=} (SPEC.md "Audit"), read and checked
 * without ZooKeeper; whether the hosts and modules exist is the caller's check ({@link AuditStore#knownHosts}, the
 * desired nodes).
 *
 * @param since   the span's start
 * @param until   the span's end
 * @param hosts   the hosts named ({@code host=}, repeated or comma-separated); empty for every host
 * @param modules the modules named ({@code module=}); empty for all
 * @param timeout how long to wait for the hosts
 */
public record AuditQuery(Instant since, Instant until, List<String> hosts, List<String> modules, Duration timeout) {
    /** The span when {@code since} is not given: the last 24 hours (SPEC.md, "Audit": {@code mesh audit}'s default). */
    public static final Duration DEFAULT_SPAN = Duration.ofHours(24);

    /** One thing wrong with the query: the field and a message that names the fix. */
    public record FieldError(String field, String message) {}

    /** The query is wrong; {@link #errors} says each thing, with its field. */
    public static final class InvalidException extends Exception {
        /** Every error found, in the order of the fields. */
        public final List<FieldError> errors;

        InvalidException(List<FieldError> errors) {
            super(errors.stream().map(e -> e.field() + ": " + e.message()).reduce((a, b) -> a + "; " + b).orElse("invalid"));
            this.errors = List.copyOf(errors);
        }
    }

    /**
     * @param query the raw query string, or {@code null}
     * @param now   this coordinator's time: a duration's {@code since} counts back from it, {@code until} defaults to it
     * @return the query
     * @throws InvalidException naming each field at fault and the fix
     */
    public static AuditQuery parse(String query, Instant now) throws InvalidException {
        Map<String, List<String>> params = params(query);
        List<FieldError> errors = new ArrayList<>();
        for (String name : params.keySet()) {
            if (!Set.of("since", "until", "host", "module", "timeout").contains(name)) {
                errors.add(new FieldError(name, "unknown parameter '" + Printable.cut(name) + "': GET /v1/audit takes since, until, host, module and timeout"));
            }
        }
        Instant until = now;
        String u = one(params, "until", errors);
        if (u != null) {
            try {
                until = Instant.parse(u);
            } catch (DateTimeParseException e) {
                until = null;
                errors.add(new FieldError("until", "'" + Printable.cut(u) + "' is not an ISO-8601 UTC time: write it such as 2026-12-06T08:00:00Z"));
            }
        }
        Instant since = now.minus(DEFAULT_SPAN);
        String s = one(params, "since", errors);
        if (s != null) {
            since = null;
            try {
                since = now.minus(Durations.parse(s));
            } catch (IllegalArgumentException notDuration) {
                try {
                    since = Instant.parse(s);
                } catch (DateTimeParseException e) {
                    errors.add(new FieldError("since", "'" + Printable.cut(s) + "' is neither a duration nor a time: write a duration back from now, "
                            + "such as 1h or 24h, or an ISO-8601 UTC time such as 2026-12-06T08:00:00Z"));
                }
            }
            if (since != null && since.isAfter(now)) {
                errors.add(new FieldError("since", since + " is in the future (it is " + now + " here): give a time before now, or a duration such as 1h"));
                since = null;
            }
        }
        if (since != null && until != null && since.isAfter(until)) {
            errors.add(new FieldError("since", "since " + since + " is after until " + until + ": give a since before until"));
        }
        List<String> hosts = list(params, "host");
        for (String h : hosts) {
            try {
                ZkPaths.checkHost(h);
            } catch (IllegalArgumentException e) {
                errors.add(new FieldError("host", "'" + Printable.cut(h) + "' is not a host id: host ids match [A-Za-z0-9][A-Za-z0-9._-]{0,62}, such as host-a"));
            }
        }
        List<String> modules = list(params, "module");
        for (String m : modules) {
            if (!ModuleName.matches(m)) {
                errors.add(new FieldError("module", "'" + Printable.cut(m) + "' is not a module name (mesh status lists the modules)"));
            }
        }
        Duration timeout = AuditStore.DEFAULT_TIMEOUT;
        String t = one(params, "timeout", errors);
        if (t != null) {
            try {
                timeout = Durations.parse(t);
                if (timeout.compareTo(AuditStore.MAX_TIMEOUT) > 0) {
                    errors.add(new FieldError("timeout", "'" + t + "' is over " + AuditStore.MAX_TIMEOUT.toSeconds() + "s: give up to "
                            + AuditStore.MAX_TIMEOUT.toSeconds() + "s, such as 10s"));
                }
            } catch (IllegalArgumentException e) {
                errors.add(new FieldError("timeout", e.getMessage()));
            }
        }
        if (!errors.isEmpty()) throw new InvalidException(errors);
        return new AuditQuery(since, until, hosts, modules, timeout);
    }

    /** @return the query's parameters, decoded, in order; a parameter given twice has both values */
    static Map<String, List<String>> params(String query) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        if (query == null || query.isEmpty()) return out;
        for (String kv : query.split("&")) {
            if (kv.isEmpty()) continue;
            int eq = kv.indexOf('=');
            String k = decode(eq < 0 ? kv : kv.substring(0, eq));
            String v = eq < 0 ? "" : decode(kv.substring(eq + 1));
            out.computeIfAbsent(k, x -> new ArrayList<>()).add(v);
        }
        return out;
    }

    private static String decode(String s) {
        try {
            return URLDecoder.decode(s, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return s;
        }
    }

    /** @return the one non-empty value of {@code name}, or {@code null}; given twice is an error */
    private static String one(Map<String, List<String>> params, String name, List<FieldError> errors) {
        List<String> v = params.get(name);
        if (v == null) return null;
        if (v.size() > 1) {
            errors.add(new FieldError(name, name + " is given " + v.size() + " times: give it once"));
            return null;
        }
        String s = v.get(0).strip();
        if (s.isEmpty()) {
            errors.add(new FieldError(name, name + " is empty: give a value or leave it out"));
            return null;
        }
        return s;
    }

    /** @return every value of {@code name}, comma-separated ones apart, without repeats */
    private static List<String> list(Map<String, List<String>> params, String name) {
        Set<String> out = new LinkedHashSet<>();
        for (String v : params.getOrDefault(name, List.of())) {
            for (String one : v.split(",")) if (!one.isBlank()) out.add(one.strip());
        }
        return List.copyOf(out);
    }
}
