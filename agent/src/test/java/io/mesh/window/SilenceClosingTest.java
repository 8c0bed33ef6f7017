package io.mesh.window;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.docker.DockerEngine;
import io.mesh.docker.Labels;
import io.mesh.testing.ApplierExtension;
import io.mesh.testing.LoopbackServer;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Decision 36: a window recovered after its process died expires the silences its journal names, as the window's own
 * process would (the same {@link WindowClosing}); the journal written by a process that died after it silenced a
 * container is what the recovery reads. Real Alertmanager, real engine; what Alertmanager holds is read from its API.
 */
class SilenceClosingTest {
    private static final String HOST = ApplierExtension.HOST;
    @RegisterExtension
    static final LoopbackServer alertmanager = LoopbackServer.alertmanager();
    @RegisterExtension
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    final ApplierExtension here = new ApplierExtension(zk, "sc");
    private final HttpClient http = HttpClient.newHttpClient();

    private String state(String id) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(alertmanager.url() + "/api/v2/silence/" + id)).build(),
                HttpResponse.BodyHandlers.ofString());
        JsonNode s = Json.MAPPER.readTree(r.body());
        return s.path("status").path("state").asText();
    }

    @Test
    void aRecoveredWindowExpiresTheSilenceItsJournalNames() throws Exception {
        DockerEngine docker = here.docker();
        String module = here.module();
        String id = docker.client().createContainerCmd(BUSYBOX).withName(module + "-web").withCmd(TestDocker.SERVE)
                .withLabels(Map.of(Labels.MODULE, module, Labels.CONTAINER, "web")).exec().getId();
        Instant since = Instant.now();
        String who = "window w-test of schedule gc (module " + module + ")";
        List<WindowJournal.Silence> made = WindowSilences.create(new io.mesh.manifest.SilenceSpec(alertmanager.url(), Map.of("job", "registry")),
                HOST, List.of(module + "-web"), since.plusSeconds(600), who);
        assertThat(made).hasSize(1);
        assertThat(state(made.get(0).id())).isEqualTo("active");
        // What a process that died after silencing and stopping web left in its journal.
        WindowJournal.Entry entry = new WindowJournal.Entry(HOST, module, "gc", "w-test", since, since.plusSeconds(60),
                ProcessRef.current("gone"), since, module + ".gc.w-test",
                List.of(new WindowJournal.HeldContainer(module + "-web", id, null, false)),
                List.of(WindowStage.SILENCED, WindowStage.STEP_CREATED, WindowStage.HELD), made);
        here.journal().write(entry);
        WindowJournal.Entry read = here.journal().read(module).orElseThrow();
        assertThat(read.silences()).as("the journal keeps the silences").isEqualTo(made);

        WindowClosing closing = new WindowClosing(docker, here.journal(), read, c -> null).closeAll();
        assertThat(closing.error()).isNull();
        assertThat(docker.isRunning(id)).as("given back").isTrue();
        assertThat(state(made.get(0).id())).as("expired by the recovery").isEqualTo("expired");
        assertThat(here.journal().read(module)).isEmpty();
    }
}
