package io.mesh.coordinator;

/** Manifests the tests push. */
public final class Manifests {
    private Manifests() {}

    public static String store(String hosts) {
        return """
                module: store
                hosts: %s
                containers:
                  registry:
                    image: mesh-demo/registry:2.8.2
                    command: ["/bin/registry", "serve", "/etc/docker/registry/config.yml"]
                    env: {REGISTRY_HTTP_ADDR: "127.0.0.1:5000"}
                    network: host
                    volumes: ["store-data:/var/lib/registry"]
                    restart: unless-stopped
                schedules:
                  garbage-collect:
                    cron: "30 3 * * *"
                    timezone: UTC
                    while-stopped: [registry]
                    step:
                      image: mesh-demo/registry:2.8.2
                      command: ["/bin/registry", "garbage-collect", "--delete-untagged", "/etc/docker/registry/config.yml"]
                      volumes-from: registry
                    timeout: 30m
                """.formatted(hosts);
    }

    public static String web(String hosts) {
        return """
                module: web
                hosts: %s
                containers:
                  app:
                    image: mesh-demo/busybox:1
                    command: ["httpd", "-f", "-p", "127.0.0.1:8080"]
                """.formatted(hosts);
    }

    public static final String TWO = store("[host-a]") + "---\n" + web("[host-a, host-b]");
}
