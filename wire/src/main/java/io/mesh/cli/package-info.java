/**
 * What the agent's and the coordinator's command lines share: {@code ProcessOptions} (the picocli mixin of
 * {@code --zk-root}, {@code --zk-auth-file} and {@code --log-format}), {@code LogFormat} (text or JSON logs, each
 * jar's {@code logback.xml}) and {@code ListenAddress} (a {@code --listen} address).
 *
 * <p>Rules ({@code ArchitectureTest}): it may use the curator package, the wire and the manifest; none of those use
 * it.
 */
package io.mesh.cli;
