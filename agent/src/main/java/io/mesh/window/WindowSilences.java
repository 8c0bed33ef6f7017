package io.mesh.window;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mesh.gate.AnswerWithin;
import io.mesh.manifest.SilenceSpec;
import io.mesh.wire.Json;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A window's Alertmanager silences, and a rollout host's (SPEC.md, "The rest of the operator's stack";
 * docs/decisions/0036-window-silences.md),
 * through Alertmanager's v2 API: one per held container, made before the first stop with the schedule's matchers plus
 * {@code mesh_host} and {@code mesh_container}, ending on their own at the window's latest end; expired once the
 * containers are ready again. Alertmanager not answering within {@link #TIMEOUT} is logged and stops nothing.
 */
public final class WindowSilences {
    private static final Logger log = LoggerFactory.getLogger(WindowSilences.class);
    /** How long Alertmanager has to answer one request whole, connection and body included (SPEC.md: 5 s; {@link AnswerWithin}). */
    static final Duration TIMEOUT = Duration.ofSeconds(5);
    private WindowSilences() {}

    private static HttpClient client() { return AnswerWithin.client(); }

    /**
     * Makes one silence per held container. Alertmanager refused one: logged, and the window goes on without that
     * silence. Alertmanager did not answer: logged, and it is not asked for the rest (one wait of {@link #TIMEOUT} per
     * window, SPEC.md).
     *
     * @param spec       the schedule's {@code silence}
     * @param host       this host, for {@code mesh_host}
     * @param containers Docker names of the held containers, for {@code mesh_container}
     * @param endsAt     when the silences end on their own (the window's latest end)
     * @param who        for the silences' {@code createdBy} and {@code comment}: the window and its schedule
     * @return the silences made (an interrupt ends the making, kept set for the caller)
     */
    public static List<WindowJournal.Silence> create(SilenceSpec spec, String host, List<String> containers, Instant endsAt, String who) {
        List<WindowJournal.Silence> made = new ArrayList<>();
        for (String container : containers) {
            ObjectNode body = Json.MAPPER.createObjectNode();
            ArrayNode matchers = body.putArray("matchers");
            for (Map.Entry<String, String> m : spec.matchers().entrySet()) matcher(matchers, m.getKey(), m.getValue());
            matcher(matchers, "mesh_host", host);
            matcher(matchers, "mesh_container", container);
            body.put("startsAt", Instant.now().toString());
            body.put("endsAt", endsAt.toString());
            body.put("createdBy", "mesh on " + host);
            body.put("comment", who + " holds " + container + " stopped on purpose");
            String url = base(spec.alertmanager()) + "/api/v2/silences";
            try {
                HttpResponse<String> r = AnswerWithin.send(client(), HttpRequest.newBuilder(URI.create(url)).timeout(TIMEOUT)
                        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(Json.text(body))).build(),
                        TIMEOUT);
                JsonNode answer = r.statusCode() == 200 ? Json.MAPPER.readTree(r.body()) : null;
                String id = answer == null ? null : answer.path("silenceID").asText(null);
                if (id == null) {
                    log.warn("{}: Alertmanager at {} did not silence {} ({} {}): the window goes on without it", who, spec.alertmanager(),
                            container, r.statusCode(), io.mesh.manifest.Printable.of(r.body(), 200));
                    continue;
                }
                made.add(new WindowJournal.Silence(spec.alertmanager(), id, container));
                log.info("{}: {} silenced in Alertmanager at {} until {} (silence {})", who, container, spec.alertmanager(), endsAt, id);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                log.warn("{}: interrupted while Alertmanager silenced {}: the window goes on without the rest", who, container);
                break;
            } catch (Exception e) {
                // Not asked again for the rest (SPEC.md: not answering within 5 s does not stop the window): one wait per
                // window, not one per held container, before the first stop.
                log.warn("{}: Alertmanager at {} did not answer ({}): {} are not silenced; the window goes on", who, spec.alertmanager(), e,
                        containers.subList(containers.indexOf(container), containers.size()));
                break;
            }
        }
        return made;
    }

    /**
     * Expires each silence. An Alertmanager did not answer: logged, it is not asked for the rest of its silences (one
     * wait of {@link #TIMEOUT} per server), and each lapses at its own end.
     *
     * @return what was not expired, for the window's notes; empty when all were
     */
    public static List<String> expire(List<WindowJournal.Silence> silences, String who) {
        List<String> left = new ArrayList<>();
        java.util.Set<String> silent = new java.util.HashSet<>(); // Alertmanagers that did not answer: not asked again here
        for (WindowJournal.Silence s : silences) {
            if (silent.contains(s.alertmanager())) {
                left.add("the silence of " + s.container() + " (" + s.id() + ") was not expired: Alertmanager at " + s.alertmanager()
                        + " did not answer for another silence; it ends on its own");
                continue;
            }
            String url = base(s.alertmanager()) + "/api/v2/silence/" + URLEncoder.encode(s.id(), StandardCharsets.UTF_8);
            try {
                HttpResponse<String> r = AnswerWithin.send(client(), HttpRequest.newBuilder(URI.create(url)).timeout(TIMEOUT).DELETE().build(),
                        TIMEOUT);
                // 404: gone already (expired by hand, or Alertmanager lost it): nothing left to expire.
                if (r.statusCode() == 200 || r.statusCode() == 404) {
                    log.info("{}: silence {} of {} expired", who, s.id(), s.container());
                    continue;
                }
                left.add("the silence of " + s.container() + " (" + s.id() + ") was not expired: Alertmanager answered " + r.statusCode()
                        + "; it ends on its own");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt(); // a closing is not cut short: the interrupt is kept for after it
                left.add("the silence of " + s.container() + " (" + s.id() + ") was not expired: interrupted; it ends on its own");
            } catch (Exception e) {
                silent.add(s.alertmanager());
                left.add("the silence of " + s.container() + " (" + s.id() + ") was not expired: Alertmanager at " + s.alertmanager()
                        + " did not answer (" + e + "); it ends on its own");
            }
        }
        for (String l : left) log.warn("{}: {}", who, l);
        return left;
    }

    private static void matcher(ArrayNode matchers, String name, String value) {
        matchers.addObject().put("name", name).put("value", value).put("isRegex", false).put("isEqual", true);
    }

    private static String base(String url) { return url.replaceAll("/+$", ""); }
}
