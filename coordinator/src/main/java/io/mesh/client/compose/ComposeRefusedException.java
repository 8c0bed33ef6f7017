package io.mesh.client.compose;

import java.util.List;

/** A compose file that {@link ComposeImport} refuses, with every refusal (not only the first), in file order. */
public final class ComposeRefusedException extends Exception {
    private final transient List<ComposeProblem> problems;

    /** @param problems every refusal, at least one */
    public ComposeRefusedException(List<ComposeProblem> problems) {
        super(problems.size() + " field(s) of the compose file refused, first: " + problems.get(0));
        this.problems = List.copyOf(problems);
    }

    /** @return every refusal, with its path */
    public List<ComposeProblem> problems() { return problems; }
}
