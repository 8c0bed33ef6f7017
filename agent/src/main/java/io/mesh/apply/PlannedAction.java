package io.mesh.apply;

import io.mesh.wire.ContainerAction;

import java.util.List;

/**
 * What an apply will do to one container.
 *
 * @param name       container name in the spec (for a removed container: its {@code mesh.container} label, or its
 *                   Docker name when it has none)
 * @param dockerName Docker name, {@code <module>-<name>} (for a removed duplicate: its own Docker name)
 * @param action     {@link Kind}
 * @param reasons    why; empty for {@code CREATE} and {@code UNCHANGED}
 * @param existingId id of the container there now, or {@code null}
 */
public record PlannedAction(String name, String dockerName, Kind action, List<String> reasons, String existingId) {
    /** @return the creation of a container that does not exist */
    public static PlannedAction create(String name, String dockerName) {
        return new PlannedAction(name, dockerName, Kind.CREATE, List.of(), null);
    }

    /** The action kinds; their report names are SPEC's. */
    public enum Kind {
        CREATE(ContainerAction.CREATED), UNCHANGED(ContainerAction.UNCHANGED), RECREATE(ContainerAction.RECREATED),
        REMOVE(ContainerAction.REMOVED), HELD(ContainerAction.HELD),
        /**
         * Docker keeps restarting it, and its spec is the desired one: a recreate with the same spec would crash the
         * same way, so it is left alone and reported {@code failed} (SPEC.md, "Health and readiness").
         */
        CRASH_LOOP(ContainerAction.FAILED),
        /**
         * Stopped by an operator's hold ({@code --stop}) that has ended, its spec unchanged: the same container is
         * started again, reported {@code unchanged} with why (decision 33).
         */
        START(ContainerAction.UNCHANGED);

        private final ContainerAction reported;

        Kind(ContainerAction reported) { this.reported = reported; }

        /** @return the action the report names when this one is done */
        public ContainerAction reported() { return reported; }
    }
}
