/**
 * Compose import (decision 21, docs/decisions/0021-import-compose.md): {@code ComposeImport} turns a compose file into
 * a module manifest ({@code ServiceFields}, {@code ComposeNetworks} with the {@code ProjectNetwork}s it reads, {@code ComposeYaml}), or refuses every field mesh
 * does not do with its path ({@code ComposeProblem}, {@code ComposeRefusedException}); needs no coordinator.
 */
package io.mesh.client.compose;
