/**
 * The manifest: what an operator pushes, parsed and checked (SPEC.md, "Manifest"). {@code ManifestParser} reads YAML
 * (or the JSON of a stored spec) into {@code ModuleSpec}s and refuses with {@code ManifestException}, whose
 * {@code ManifestError}s name document, field and fix. The model: {@code ModuleSpec}, {@code ContainerSpec} (its
 * compose-grade fields checked by {@code ContainerFields}: decision 17), {@code NetworkSpec} ({@code NetworkFields};
 * decision 31), {@code ScheduleSpec}, {@code StepSpec}, {@code Healthcheck}, {@code ReadySpec}, {@code RolloutSpec}
 * (decision 13), {@code PullPolicy} (decision 20), {@code SecretRef} (decision 18). Values: {@code Durations},
 * {@code ByteSize}, {@code ModuleName} (the one name rule). {@code WireName} (how an enum travels) and
 * {@code Printable} (user text quoted in a message) live here because the manifest needs them and may use nothing
 * above it.
 *
 * <p>Rules ({@code ArchitectureTest.theManifestStandsAlone}): no Curator or ZooKeeper class and no other mesh package;
 * the node records ({@code io.mesh.wire}) carry a {@code ModuleSpec}, so the manifest is below them.
 */
package io.mesh.manifest;
