package io.mesh.coordinator;

import io.mesh.manifest.ManifestError;
import io.mesh.manifest.ManifestFields;
import io.mesh.manifest.ModuleSpec;
import io.mesh.wire.MeshVersion;
import io.mesh.wire.AgentRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ZkPaths;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A push's fields against the versions the targeted hosts' agents publish ({@code /mesh/agents/<host>}): a field an
 * agent's version does not know would make its apply fail on the desired node, so the push is refused naming the
 * hosts and the field, unless forced (SPEC.md "Running it for real"; docs/decisions/0041-upgrades.md). Hosts with no
 * agent now are not asked: the agent that starts there later is the one to upgrade.
 */
final class AgentFieldCheck {
    private final NodeSource agents;
    private final ZkPaths paths;

    /**
     * @param agents where the agents' nodes are read (the coordinator's cache)
     * @param paths  the layout
     */
    AgentFieldCheck(NodeSource agents, ZkPaths paths) {
        this.agents = agents;
        this.paths = paths;
    }

    /**
     * @param modules the push's modules, in document order
     * @return one error per module whose fields some targeted agent does not know (none when all know them)
     * @throws Exception from ZooKeeper
     */
    List<ManifestError> refused(List<ModuleSpec> modules) throws Exception {
        List<ManifestError> out = new ArrayList<>();
        Map<String, String> versions = null;
        for (int i = 0; i < modules.size(); i++) {
            ModuleSpec m = modules.get(i);
            var used = ManifestFields.used(Json.MAPPER.valueToTree(m));
            if (versions == null) versions = versions();
            Map<String, TreeSet<String>> hostsByField = new TreeMap<>();
            Map<String, String> since = new TreeMap<>();
            for (Map.Entry<String, String> a : versions.entrySet()) {
                if (!m.runsOn(a.getKey())) continue;
                MeshVersion.unknownTo(a.getValue(), used).forEach((field, v) -> {
                    hostsByField.computeIfAbsent(field, f -> new TreeSet<>()).add(a.getKey() + " (" + a.getValue() + ")");
                    since.put(field, v);
                });
            }
            for (Map.Entry<String, TreeSet<String>> e : hostsByField.entrySet()) {
                out.add(new ManifestError(i + 1, e.getKey(), e.getKey() + " came in mesh " + since.get(e.getKey()) + "; the agents of "
                        + String.join(", ", e.getValue()) + " do not know it and would fail this apply: upgrade those agents first, "
                        + "or push with --force (mesh push --force) to send it anyway"));
            }
        }
        return out;
    }

    /** @return every agent's published version, by host */
    private Map<String, String> versions() throws Exception {
        Map<String, String> out = new TreeMap<>();
        for (String host : agents.children(paths.agents())) {
            AgentRecord a = agents.read(paths.agent(host), AgentRecord.class);
            if (a != null) out.put(host, a.version());
        }
        return out;
    }
}
