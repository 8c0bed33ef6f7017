package io.mesh.wire;

/**
 * Which process did something: its pid and a short name such as {@code mesh-agent run}.
 *
 * @param pid     operating-system process id on its host
 * @param process a short description of the process
 */
public record ProcessRef(long pid, String process) {
    /**
     * @param process a short description such as {@code mesh-agent window}
     * @return this JVM's reference
     */
    public static ProcessRef current(String process) {
        return new ProcessRef(ProcessHandle.current().pid(), process);
    }
}
