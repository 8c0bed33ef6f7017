package io.mesh.gate;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.manifest.GateSpec;
import io.mesh.manifest.Printable;
import io.mesh.wire.Json;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The one question a gate answers before a window takes its slot or a rollout's host begins (SPEC.md, "The rest of
 * the operator's stack"; docs/decisions/0035-window-gates.md): is it blocked now? As kured's {@code RebootBlocker}, one
 * method; one mechanism, two drivers (the window's wait, the rollout's admission).
 */
public interface Gate {
    /**
     * @return the gate's answer now
     * @throws InterruptedException when interrupted while asking
     */
    Answer ask() throws InterruptedException;

    /**
     * @param blocked true when the window or the host may not begin now
     * @param said    what the gate answered, for the report (a window's {@code lastWindow.gate}, a host's {@code rollout}):
     *                the same words while the answer is the same, so that a host asking again writes no new report
     */
    record Answer(boolean blocked, String said) {}

    /** How long a gate's server has to answer, connection included. */
    Duration ASK_TIMEOUT = Duration.ofSeconds(5);

    /**
     * A Prometheus instant query ({@code GET /api/v1/query}): any series in the answer blocks the window. A server that
     * does not answer whole (its body too: {@link AnswerWithin}) in {@link #ASK_TIMEOUT}, answers with an error, or an answer that is no list of series (a scalar)
     * blocks too: a gate that cannot say the fleet is quiet does not let a change begin (decision 35).
     *
     * @param client the HTTP client (its connect timeout is not relied on: each request has {@link #ASK_TIMEOUT})
     * @param p      the server and query
     * @return the gate
     */
    static Gate prometheus(HttpClient client, GateSpec.Prometheus p) {
        return () -> {
            String q = Printable.of(p.query(), 120);
            URI uri = URI.create(p.url().replaceAll("/+$", "") + "/api/v1/query?query=" + URLEncoder.encode(p.query(), StandardCharsets.UTF_8));
            HttpResponse<String> r;
            try {
                r = AnswerWithin.send(client, HttpRequest.newBuilder(uri).timeout(ASK_TIMEOUT).header("Accept", "application/json").GET().build(),
                        ASK_TIMEOUT);
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                return new Answer(true, "blocked: Prometheus at " + p.url() + " was not asked (" + e + "): nothing begins until the gate"
                        + " can answer");
            }
            JsonNode body;
            try {
                body = Json.MAPPER.readTree(r.body());
            } catch (Exception e) {
                body = null;
            }
            if (r.statusCode() != 200 || body == null || !"success".equals(body.path("status").asText())) {
                String err = body == null ? Printable.of(r.body(), 200) : body.path("error").asText("");
                return new Answer(true, "blocked: Prometheus at " + p.url() + " answered " + r.statusCode() + " to " + q
                        + (err.isEmpty() ? "" : " (" + err + ")") + ": fix the query or the server");
            }
            JsonNode data = body.path("data");
            String type = data.path("resultType").asText();
            if (!"vector".equals(type) && !"matrix".equals(type)) {
                return new Answer(true, "blocked: " + q + " answered a " + type + ", not series: write a query over series, such as"
                        + " ALERTS{alertstate=\"firing\"}");
            }
            JsonNode result = data.path("result");
            if (result.isEmpty()) return new Answer(false, "open: " + q + " answered no series");
            return new Answer(true, "blocked: " + q + " answered " + result.size() + " series"
                    + ", such as " + Printable.of(result.get(0).path("metric").toString(), 200));
        };
    }
}
