package io.mesh.apply;

import io.mesh.wire.ManifestParser;
import org.junit.jupiter.api.Test;

class SpecDiffTest {
    static final String OLD = """
            module: hc-old
            hosts: [host-a]
            containers:
              minimal:
                image: mesh-demo/busybox:1
              full:
                image: mesh-demo/registry:2.8.2
                command: [/bin/registry, serve, /etc/docker/registry/config.yml]
                env: {REGISTRY_HTTP_ADDR: "127.0.0.1:5000", B: "1.10"}
                network: bridge
                ports: ["5000:5000"]
                volumes: ["store-data:/var/lib/registry", "/srv/x:/x:ro"]
                restart: always
                stop-timeout: 30s
                privileged: false
                pid: host
                cap-add: [NET_ADMIN]
                healthcheck: {test: "wget -q -O- http://127.0.0.1:5000/v2/ || exit 1", interval: 5s, retries: 3}
                ready: {min-healthy: 1s, deadline: 1m}
                depends-on: [minimal]
            """;

    @Test
    void print() throws Exception {
        var m = new ManifestParser().parse(OLD).get(0);
        for (var e : m.containers().entrySet()) System.out.println("HASH " + e.getKey() + " " + SpecDiff.hash(e.getValue()) + " " + SpecDiff.canonical(e.getValue()));
    }
}
