/**
 * Docker: the container operations mesh makes ({@code ContainerRuntime}), docker-java behind them
 * ({@code DockerEngine}); the only package that uses docker-java ({@code ArchitectureTest}).
 *
 * <ul>
 *   <li>Every call bounded ({@code DockerTimeoutException}; docs/design.md, "Docker calls are bounded"; failure model
 *       row 13). {@code DockerAnswer}: a failed call as dockerd said it, with the fix where one is known; a 404 is a
 *       missing container only when dockerd says so. A failed pull is the apply's error, never a docker-java stack
 *       trace in the log.</li>
 *   <li>{@code Labels}; {@code ComposeOptions} puts the compose-grade fields on the create call (decision 17).</li>
 *   <li>Images and registries (decision 20): {@code RegistryAuth} (the credentials of {@code --docker-config}:
 *       {@code auths} through docker-java, credential helpers by Docker's protocol), {@code ImageReference},
 *       {@code ImageInfo} (the reports' {@code imageDigest}), {@code PullFailure} (what a refused pull says),
 *       {@code DockerEngine.pull}, {@code PullLayers} (a pull's progress, decision 32).</li>
 *   <li>Secrets (decision 18): {@code SecretDelivery} (what a create gets: env or read-only mounts),
 *       {@code SecretSafeLogging}.</li>
 *   <li>{@code Readiness} (decision 10); {@code IdleThreads}: threads that end when idle (decision 23).</li>
 * </ul>
 */
package io.mesh.docker;
