package io.mesh.docker;

/** A container that mesh meant to act on no longer exists (Docker answered 404): retrying will not help. */
public class NoSuchContainerException extends RuntimeException {
    /**
     * @param message which container
     * @param cause   the engine's answer
     */
    public NoSuchContainerException(String message, Throwable cause) { super(message, cause); }
}
