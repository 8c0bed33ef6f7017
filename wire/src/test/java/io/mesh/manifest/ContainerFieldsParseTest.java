package io.mesh.manifest;

import io.mesh.wire.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The compose-grade container fields (SPEC.md, "Containers"; decision 17): each one's accepted forms and what they
 * become, and each bad value refused with the document, the field path and the fix, nothing returned.
 */
class ContainerFieldsParseTest {
    private final ManifestParser parser = new ManifestParser();

    /** Module {@code hc-fields}, container {@code web}, with these lines. */
    static String web(String... lines) {
        StringBuilder b = new StringBuilder("module: hc-fields\nhosts: [host-a]\ncontainers:\n  web:\n    image: mesh-demo/busybox:1\n");
        for (String l : lines) b.append("    ").append(l).append('\n');
        return b.toString();
    }

    private ContainerSpec parse(String... lines) throws ManifestException {
        ContainerSpec yaml = parser.parse(web(lines)).get(0).containers().get("web");
        // The coordinator writes the module as JSON and every agent validates it again: the same spec comes back.
        ContainerSpec json = parser.parseJson(Json.text(parser.parse(web(lines)).get(0))).containers().get("web");
        assertThat(json).isEqualTo(yaml);
        return yaml;
    }

    @Test
    void everyFieldInItsMainForm() throws Exception {
        ContainerSpec s = parse(
                "entrypoint: [/bin/sh, -c]",
                "user: app:staff",
                "working-dir: /srv/app",
                "hostname: web-1.example",
                "labels: {com.example.team: store, com.example.tier: 2}",
                "memory: 512m",
                "cpus: 1.5",
                "pids-limit: 200",
                "ulimits: {nofile: {soft: 20000, hard: 40000}, nproc: 65535}",
                "tmpfs: [/run, \"/tmp:size=64m,mode=1777\"]",
                "read-only: true",
                "extra-hosts: [\"db.internal:192.0.2.10\", \"v6:2001:db8::1\", \"gw:host-gateway\"]",
                "stop-signal: SIGINT",
                "init: true",
                "logging: {driver: json-file, options: {max-size: 10m, max-file: 3}}",
                "dns: [192.0.2.53, \"2001:db8::53\"]",
                "devices: [/dev/fuse, \"/dev/ttyUSB0:/dev/ttyS0:rw\"]",
                "sysctls: {kernel.shm_rmid_forced: 1}",
                "security-opt: [\"no-new-privileges:true\", seccomp=unconfined]",
                "create-host-path: true");
        assertThat(s.entrypoint()).containsExactly("/bin/sh", "-c");
        assertThat(s.user()).isEqualTo("app:staff");
        assertThat(s.workingDir()).isEqualTo("/srv/app");
        assertThat(s.hostname()).isEqualTo("web-1.example");
        assertThat(s.labels()).isEqualTo(Map.of("com.example.team", "store", "com.example.tier", "2"));
        assertThat(s.memory()).isEqualTo("512m");
        assertThat(s.memoryBytes()).isEqualTo(512L * 1024 * 1024);
        assertThat(s.cpus()).isEqualTo("1.5");
        assertThat(s.nanoCpus()).isEqualTo(1_500_000_000L);
        assertThat(s.pidsLimit()).isEqualTo(200L);
        assertThat(s.ulimits()).isEqualTo(Map.of("nofile", new ContainerSpec.Ulimit(20000, 40000), "nproc", new ContainerSpec.Ulimit(65535, 65535)));
        assertThat(s.tmpfs()).containsExactly("/run", "/tmp:size=64m,mode=1777");
        assertThat(s.readOnlyRootfs()).isTrue();
        assertThat(s.extraHosts()).containsExactly("db.internal:192.0.2.10", "v6:2001:db8::1", "gw:host-gateway");
        assertThat(s.stopSignal()).isEqualTo("SIGINT");
        assertThat(s.runsInit()).isTrue();
        assertThat(s.logging()).isEqualTo(new ContainerSpec.Logging("json-file", Map.of("max-size", "10m", "max-file", "3")));
        assertThat(s.dns()).containsExactly("192.0.2.53", "2001:db8::53");
        assertThat(s.devices()).containsExactly("/dev/fuse", "/dev/ttyUSB0:/dev/ttyS0:rw");
        assertThat(s.sysctls()).isEqualTo(Map.of("kernel.shm_rmid_forced", "1"));
        assertThat(s.securityOpt()).containsExactly("no-new-privileges:true", "seccomp=unconfined");
        assertThat(s.createsHostPath()).isTrue();
    }

    /** Compose's other forms become the one form the desired node keeps. */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            labels: [com.example.team=store, empty=]    | labels: {com.example.team: store, empty: ""}
            sysctls: ["net.core.somaxconn=1024"]        | sysctls: {net.core.somaxconn: "1024"}
            extra-hosts: {db: 192.0.2.10}               | extra-hosts: ["db:192.0.2.10"]
            tmpfs: /run                                 | tmpfs: [/run]
            dns: 192.0.2.53                             | dns: [192.0.2.53]
            ulimits: {nproc: 100}                       | ulimits: {nproc: {soft: 100, hard: 100}}
            ulimits: {memlock: -1}                      | ulimits: {memlock: {soft: -1, hard: -1}}
            memory: 1G                                  | memory: 1g
            memory: 1073741824                          | memory: "1073741824"
            cpus: "2.0"                                 | cpus: 2
            user: 1000                                  | user: "1000"
            stop-signal: 15                             | stop-signal: "15"
            """)
    void composeFormsAreRewrittenToOne(String written, String same) throws Exception {
        String network = written.startsWith("sysctls") ? "network: none" : "network: host";
        assertThat(parse(network, written)).isEqualTo(parse(network, same));
    }

    @Test
    void byteUnitsAreCompose() {
        assertThat(ByteSize.parse("6m")).isEqualTo(6L << 20);
        assertThat(ByteSize.parse("512MB")).isEqualTo(512L << 20);
        assertThat(ByteSize.parse("1GiB")).isEqualTo(1L << 30);
        assertThat(ByteSize.parse("1.5g")).isEqualTo(3L << 29);
        assertThat(ByteSize.parse("100k")).isEqualTo(102400);
        assertThat(ByteSize.parse("4096b")).isEqualTo(4096);
        assertThat(ByteSize.parse("4096")).isEqualTo(4096);
        assertThat(catchThrowableOfType(IllegalArgumentException.class, () -> ByteSize.parse("12 parsecs")))
                .hasMessageContaining("such as 512m");
    }

    @Test
    void hostnameIsAllowedWithHostNetworkingAsDockerAllowsIt() throws Exception {
        assertThat(parse("hostname: web-1").hostname()).isEqualTo("web-1");
        assertThat(parse("network: host", "hostname: web-1").hostname()).isEqualTo("web-1");
    }

    @Test
    void aContainerWithoutTheFieldsHasThemEmpty() throws Exception {
        ContainerSpec s = parse();
        assertThat(s.entrypoint()).isEmpty();
        assertThat(s.labels()).isEmpty();
        assertThat(s.ulimits()).isEmpty();
        assertThat(s.memory()).isNull();
        assertThat(s.memoryBytes()).isNull();
        assertThat(s.nanoCpus()).isNull();
        assertThat(s.readOnly()).isNull();
        assertThat(s.createsHostPath()).isFalse();
        assertThat(parse("read-only: false", "init: false").readOnly()).isNull();
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', textBlock = """
            entrypoint: []                                  | containers.web.entrypoint                    | leave entrypoint out for the image's own
            entrypoint: /bin/sh                             | containers.web.entrypoint                    | must be a list of strings
            user: "root; rm -rf /"                          | containers.web.user                          | write user or user:group
            user: [root]                                    | containers.web.user                          | must be a non-empty string
            working-dir: srv/app                            | containers.web.working-dir                   | absolute, clean path such as /srv/app
            working-dir: /srv/../etc                        | containers.web.working-dir                   | absolute, clean path
            hostname: web_1                                 | containers.web.hostname                      | is not a host name
            labels: {mesh.module: other}                    | containers.web.labels.mesh.module            | are mesh's own
            labels: [mesh.spec-hash=x]                      | containers.web.labels.mesh.spec-hash         | rename it, such as com.example.spec-hash
            labels: {a: {b: c}}                             | containers.web.labels.a                      | must be a value
            labels: [noequals]                              | containers.web.labels[0]                     | must be "key=value"
            labels: yes                                     | containers.web.labels                        | a mapping of label to value
            memory: 512 parsecs                             | containers.web.memory                        | write a number with b, k, m or g, such as 512m
            memory: 1m                                      | containers.web.memory                        | below Docker's smallest memory limit, 6m
            memory: true                                    | containers.web.memory                        | must be a non-empty string
            cpus: 0                                         | containers.web.cpus                          | a number of CPUs from 0.01, such as 1.5
            cpus: "-1"                                      | containers.web.cpus                          | a number of CPUs from 0.01
            cpus: lots                                      | containers.web.cpus                          | a number of CPUs
            pids-limit: 0                                   | containers.web.pids-limit                    | from 1, such as 200, or -1 for no limit
            pids-limit: "100"                               | containers.web.pids-limit                    | a whole number of processes
            ulimits: {files: 10}                            | containers.web.ulimits.files                 | not a resource Docker limits: use one of
            ulimits: {nofile: {soft: 10}}                   | containers.web.ulimits.nofile                | must be {soft: N, hard: N}
            ulimits: {nofile: {soft: 20, hard: 10}}         | containers.web.ulimits.nofile.soft           | must not exceed the hard one
            ulimits: {nofile: -5}                           | containers.web.ulimits.nofile                | whole number from 0
            ulimits: {nofile: {soft: -1, hard: 100}}        | containers.web.ulimits.nofile.soft           | must not exceed the hard one
            ulimits: [nofile]                               | containers.web.ulimits                       | {nofile: {soft: 20000, hard: 40000}, nproc: 65535}
            tmpfs: [run]                                    | containers.web.tmpfs[0]                      | an absolute container path
            tmpfs: ["/run:size=1m;rm"]                      | containers.web.tmpfs[0]                      | comma-separated options such as size=64m
            tmpfs: [/run, /run]                             | containers.web.tmpfs[1]                      | mounted twice
            read-only: "yes"                                | containers.web.read-only                     | must be true or false
            extra-hosts: [db]                               | containers.web.extra-hosts[0]                | write "name:ip"
            extra-hosts: ["db:db.example"]                  | containers.web.extra-hosts[0]                | such as "db.internal:192.0.2.10"
            extra-hosts: ["db:1:2"]                         | containers.web.extra-hosts[0]                | is not a host entry
            stop-signal: SIGFOO                             | containers.web.stop-signal                   | write its name such as SIGINT
            stop-signal: 99                                 | containers.web.stop-signal                   | its number from 1 to 64
            init: 1                                         | containers.web.init                          | must be true or false
            logging: {driver: splunkish}                    | containers.web.logging.driver                | a log driver Docker ships, one of
            logging: {driver: local, opts: {}}              | containers.web.logging.opts                  | allowed here are [driver, options]
            logging: {}                                     | containers.web.logging                       | {driver: json-file, options: {max-size: 10m}}
            logging: {options: [max-size=1m]}               | containers.web.logging.options               | a mapping of option to value
            dns: [dns.example]                              | containers.web.dns[0]                        | Docker takes DNS servers by address
            dns: ["300.1.1.1"]                              | containers.web.dns[0]                        | is not an IP address
            devices: [dev/fuse]                             | containers.web.devices[0]                    | write "<host device>[:<container path>[:rwm]]"
            devices: ["/dev/fuse:/dev/fuse:rwx"]            | containers.web.devices[0]                    | is not a device
            sysctls: {"net core": 1}                        | containers.web.sysctls.net core              | write it dotted, such as net.core.somaxconn
            sysctls: {net.core.somaxconn: 1024}             | containers.web.sysctls.net.core.somaxconn    | cannot be set with network host (the default)
            security-opt: [privileged]                      | containers.web.security-opt[0]               | is not a security option: Docker takes
            security-opt: [seccomp=/etc/profile.json]       | containers.web.security-opt[0]               | use seccomp=unconfined or seccomp=builtin
            create-host-path: "true"                        | containers.web.create-host-path              | must be true or false
            """)
    void badValuesAreRefusedNamingTheFieldAndTheFix(String line, String field, String hint) {
        ManifestException e = catchThrowableOfType(ManifestException.class, () -> parser.parse(web(line)));
        assertThat(e).as(line).isNotNull();
        assertThat(e.errors()).as(line).anySatisfy(err -> {
            assertThat(err.document()).isEqualTo(1);
            assertThat(err.field()).isEqualTo(field);
            assertThat(err.message()).contains(hint);
        });
    }

    @Test
    void netSysctlsNeedTheirOwnNetworkNamespace() throws Exception {
        assertThat(parse("network: none", "sysctls: {net.core.somaxconn: 1024}").sysctls()).containsEntry("net.core.somaxconn", "1024");
        ManifestException e = catchThrowableOfType(ManifestException.class,
                () -> parser.parse(web("network: host", "sysctls: {net.ipv4.ip_forward: 1}")));
        assertThat(e.errors()).singleElement().satisfies(err -> assertThat(err.message()).contains("network host:", "give network: none"));
    }

    @Test
    void everyProblemOfAContainerIsListedTogether() {
        ManifestException e = catchThrowableOfType(ManifestException.class,
                () -> parser.parse(web("memory: 1m", "cpus: 0", "labels: {mesh.x: y}", "init: maybe")));
        assertThat(e.errors()).extracting(ManifestError::field).containsExactlyInAnyOrder(
                "containers.web.memory", "containers.web.cpus", "containers.web.labels.mesh.x", "containers.web.init");
    }

    @Test
    void ipAddressesAreCheckedWithoutALookup() {
        assertThat(List.of("192.0.2.1", "::1", "2001:db8::1", "::ffff:192.0.2.1", "fe80::1%eth0", "1:2:3:4:5:6:7:8"))
                .allMatch(ContainerFields::ip);
        assertThat(List.of("1:2", "1:2:3:4:5:6:7:8:9", "1::2::3", "256.0.0.1", "db.example", "12345::", ""))
                .noneMatch(ContainerFields::ip);
    }
}
