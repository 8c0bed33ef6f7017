/**
 * Secrets (decision 18, docs/decisions/0018-secrets.md; readable where: docs/security.md): a container's
 * {@code secrets:} are files under {@code --secrets-dir}, re-read at every apply, plan and reconcile, delivered as env
 * or read-only mounts ({@code io.mesh.docker.SecretDelivery}), shown only as digests. {@code SecretsDir} reads,
 * checks and digests them; {@code DigestKey} is the per-host key; {@code Redaction} takes secret values out of a container's
 * log lines and healthcheck output before a report carries them.
 */
package io.mesh.secrets;
