package io.mesh.hooks;

import io.mesh.manifest.HooksSpec;
import io.mesh.manifest.WireName;

import java.util.List;

/** When a hook runs: before a stop mesh makes, or once a container mesh started is ready (decision 38). */
public enum HookPhase implements WireName {
    /** Before each stop: a window's, a recreate's or removal's, a hold's {@code --stop}. */
    PRE_STOP,
    /** Once a container mesh started (created, recreated, given back, started again) is ready. */
    POST_START;

    /** @return the hook's command of this phase in {@code hooks}; empty for none */
    public List<String> command(HooksSpec hooks) {
        return hooks == null ? List.of() : this == PRE_STOP ? hooks.preStop() : hooks.postStart();
    }

    @Override
    public String toString() { return wire(); }
}
