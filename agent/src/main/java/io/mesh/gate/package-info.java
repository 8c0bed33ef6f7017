/**
 * Gates: the one question ({@link io.mesh.gate.Gate#ask}) asked before a window takes its slot or a rollout's host
 * begins, answered by a Prometheus query (SPEC.md, "The rest of the operator's stack"; decision 35). Used by the window
 * and the rollout; uses only the manifest and the wire.
 */
package io.mesh.gate;
