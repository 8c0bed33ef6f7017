package io.mesh.coordinator;

import io.mesh.wire.MeshEvent;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One POST of one event to one webhook, whose whole answer comes within {@link #WITHIN} or counts as failed: a
 * receiver that stalls delays only its own queue (SPEC.md: "a receiver that is down blocks nothing"). As the agent's
 * {@code AnswerWithin} does for gates, the bound is on the whole exchange: {@link HttpRequest#timeout} alone ends with
 * the response's headers. Redirects are not followed (a webhook's URL is where it is).
 */
final class WebhookCall {
    /** How long one delivery may take, connection and answer included. */
    static final Duration WITHIN = Duration.ofSeconds(10);
    /** How long connecting may take. */
    static final Duration CONNECT = Duration.ofSeconds(5);

    /** What one POST came to: a 2xx, or why not (an HTTP status, or the exception's words). */
    record Answer(boolean delivered, String said) {}

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(CONNECT).followRedirects(HttpClient.Redirect.NEVER).build();

    /**
     * @param webhook the webhook
     * @param event   the event, with its id
     * @return its answer; never throws for the receiver's failures
     * @throws InterruptedException when this thread is interrupted (the coordinator stops); the exchange is cancelled
     */
    Answer post(Webhook webhook, MeshEvent event) throws InterruptedException {
        byte[] body = webhook.body(event);
        HttpRequest.Builder b = HttpRequest.newBuilder(webhook.url()).timeout(WITHIN)
                .header("Content-Type", "application/json")
                .header("User-Agent", "mesh-coordinator")
                .header("X-Mesh-Event", event.type().wire())
                .header("X-Mesh-Event-Id", event.id())
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        String signature = webhook.signature(body);
        if (signature != null) b.header(Webhook.SIGNATURE, signature);
        CompletableFuture<HttpResponse<Void>> answer = http.sendAsync(b.build(), HttpResponse.BodyHandlers.discarding());
        try {
            int status = answer.get(WITHIN.toMillis(), TimeUnit.MILLISECONDS).statusCode();
            return new Answer(status / 100 == 2, "HTTP " + status);
        } catch (TimeoutException e) {
            answer.cancel(true);
            return new Answer(false, "no answer within " + WITHIN.toSeconds() + "s");
        } catch (InterruptedException e) {
            answer.cancel(true);
            throw e;
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            return new Answer(false, c instanceof IOException && c.getMessage() == null ? c.getClass().getSimpleName() : String.valueOf(c));
        }
    }
}
