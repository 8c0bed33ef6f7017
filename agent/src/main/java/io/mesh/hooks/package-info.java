/**
 * A container's hooks (SPEC.md, "The rest of the operator's stack"; decision 38): {@code ContainerHooks} runs a
 * container's {@code pre-stop} or {@code post-start} by {@code docker exec} ({@code ContainerRuntime.exec}), bounded by
 * its {@code timeout}, its output without the container's secret values; {@code HookRun} says how one ended, in one line
 * for a window's result, a report's reasons and the log. Used by the window, the apply and an operator's hold around
 * the stops and starts they make; a hook never keeps a stop or a start from being made.
 */
package io.mesh.hooks;
