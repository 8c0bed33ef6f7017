package io.mesh.manifest;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** A schedule's {@code gate} and {@code silence} (SPEC.md, "The rest of the operator's stack"), parsed and checked field by field. */
class GateAndSilenceParseTest {
    private static final String SCHEDULE = "schedules:\n  gc:\n    cron: \"30 3 * * *\"\n    step: {image: busybox, command: [\"true\"]}\n";

    @Test
    void theGateIsParsedAndEachBadFieldIsNamedWithItsFix() throws Exception {
        ManifestParser p = new ManifestParser();
        ScheduleSpec s = p.parse(ManifestParserTest.GOOD + SCHEDULE
                + "    gate: {prometheus: {url: \"http://127.0.0.1:9090\", query: 'ALERTS{severity=\"critical\"}'}, on-blocked: skip}\n")
                .get(0).schedules().get("gc");
        assertThat(s.gate().prometheus().url()).isEqualTo("http://127.0.0.1:9090");
        assertThat(s.gate().prometheus().query()).isEqualTo("ALERTS{severity=\"critical\"}");
        assertThat(s.gate().onBlockedOrDefault()).isEqualTo(GateSpec.OnBlocked.SKIP);
        assertThat(p.parse(ManifestParserTest.GOOD + SCHEDULE + "    gate: {prometheus: {url: \"https://prom.example:9090/\", query: up}}\n")
                .get(0).schedules().get("gc").gate().onBlockedOrDefault()).as("the default").isEqualTo(GateSpec.OnBlocked.WAIT);
        for (String[] bad : new String[][] {
                {"gate: 3", "schedules.gc.gate"},
                {"gate: {on-blocked: wait}", "schedules.gc.gate.prometheus"},
                {"gate: {prometheus: {url: \"ftp://x\", query: up}}", "schedules.gc.gate.prometheus.url"},
                {"gate: {prometheus: {url: \"http://127.0.0.1:9090?x=1\", query: up}}", "schedules.gc.gate.prometheus.url"},
                {"gate: {prometheus: {url: \"http://127.0.0.1:9090\", query: \" \"}}", "schedules.gc.gate.prometheus.query"},
                {"gate: {prometheus: {url: \"http://127.0.0.1:9090\", query: up, step: 1}}", "schedules.gc.gate.prometheus.step"},
                {"gate: {prometheus: {url: \"http://127.0.0.1:9090\", query: up}, on-blocked: later}", "schedules.gc.gate.on-blocked"},
                {"gate: {prometheus: {url: \"http://ops:pw@127.0.0.1:9090\", query: up}}", "schedules.gc.gate.prometheus.url"},
                {"gate: {prometheus: {url: \"http://127.0.0.1:9090\", query: 'ALERTS{severity=\"critical\"'}}", "schedules.gc.gate.prometheus.query"},
                {"gate: {prometheus: {url: \"http://127.0.0.1:9090\", query: 'sum(up'}}", "schedules.gc.gate.prometheus.query"},
                {"gate: {prometheus: {url: \"http://127.0.0.1:9090\", query: 'up{job=\"a}'}}", "schedules.gc.gate.prometheus.query"}}) {
            ManifestException e = org.assertj.core.api.Assertions.catchThrowableOfType(ManifestException.class,
                    () -> p.parse(ManifestParserTest.GOOD + SCHEDULE + "    " + bad[0] + "\n"));
            assertThat(e).as(bad[0]).isNotNull();
            assertThat(e.errors()).as(bad[0]).singleElement().satisfies(err -> {
                assertThat(err.field()).isEqualTo(bad[1]);
                assertThat(err.message()).isNotBlank();
            });
        }
    }

    @Test
    void theSilenceIsParsedAndEachBadFieldIsNamedWithItsFix() throws Exception {
        ManifestParser p = new ManifestParser();
        ScheduleSpec s = p.parse(ManifestParserTest.GOOD + SCHEDULE
                + "    silence: {alertmanager: \"http://127.0.0.1:9093\", matchers: {job: registry, team: storage}}\n").get(0).schedules().get("gc");
        assertThat(s.silence().alertmanager()).isEqualTo("http://127.0.0.1:9093");
        assertThat(s.silence().matchers()).containsExactly(java.util.Map.entry("job", "registry"), java.util.Map.entry("team", "storage"));
        for (String[] bad : new String[][] {
                {"silence: yes", "schedules.gc.silence"},
                {"silence: {matchers: {job: registry}}", "schedules.gc.silence.alertmanager"},
                {"silence: {alertmanager: \"http://127.0.0.1:9093\", matchers: [job]}", "schedules.gc.silence.matchers"},
                {"silence: {alertmanager: \"http://127.0.0.1:9093\", matchers: {9job: x}}", "schedules.gc.silence.matchers.9job"},
                {"silence: {alertmanager: \"http://127.0.0.1:9093\", matchers: {mesh_host: x}}", "schedules.gc.silence.matchers.mesh_host"},
                {"silence: {alertmanager: \"http://127.0.0.1:9093\", matchers: {job: 3}}", "schedules.gc.silence.matchers.job"},
                {"silence: {alertmanager: \"http://127.0.0.1:9093\", until: 2h}", "schedules.gc.silence.until"},
                {"silence: {alertmanager: \"http://u:p@127.0.0.1:9093\", matchers: {job: x}}", "schedules.gc.silence.alertmanager"}}) {
            ManifestException e = org.assertj.core.api.Assertions.catchThrowableOfType(ManifestException.class,
                    () -> p.parse(ManifestParserTest.GOOD + SCHEDULE + "    " + bad[0] + "\n"));
            assertThat(e).as(bad[0]).isNotNull();
            assertThat(e.errors()).as(bad[0]).singleElement().satisfies(err -> {
                assertThat(err.field()).isEqualTo(bad[1]);
                assertThat(err.message()).isNotBlank();
            });
        }
    }

    /** The gate's query check catches what Prometheus would refuse for its brackets and quotes, and nothing it takes. */
    @Test
    void aQueryWithAnUnclosedBracketOrQuoteIsNamedAndAGoodOneIsNot() {
        assertThat(ManifestParser.unbalanced("ALERTS{alertstate=\"firing\",severity=~\"crit|page\"}")).isNull();
        assertThat(ManifestParser.unbalanced("sum by (job) (rate(http_requests_total{code=~\"5..\"}[5m])) > 0.1")).isNull();
        assertThat(ManifestParser.unbalanced("up{job=\"a}b\\\"c\"}")).as("brackets and an escaped quote inside a string").isNull();
        assertThat(ManifestParser.unbalanced("up{job=`a{`}")).isNull();
        assertThat(ManifestParser.unbalanced("sum(up")).isEqualTo("'(' is not closed");
        assertThat(ManifestParser.unbalanced("up)")).isEqualTo("')' closes nothing opened");
        assertThat(ManifestParser.unbalanced("up{job=\"a}")).isEqualTo("a \" is not closed");
        assertThat(ManifestParser.unbalanced("rate(up[5m)]")).isNotNull();
    }
}
