package io.mesh.window;

import io.mesh.manifest.ContainerSpec;
import io.mesh.manifest.ModuleSpec;
import io.mesh.manifest.ScheduleSpec;
import io.mesh.secrets.Redaction;
import io.mesh.secrets.SecretsDir;

/**
 * What a window step's log lines must not carry (decision 18): a step with {@code volumes-from: C} mounts C's file
 * secrets, so it can print them; its log tail goes into the window result, the report and the log with C's secret
 * values taken out, read from the host's secrets dir as the apply reads them.
 */
final class StepRedaction {
    private StepRedaction() {}

    /**
     * @param secrets  the host's secrets dir
     * @param spec     the module's desired spec, or {@code null}
     * @param schedule the window's schedule
     * @return the redaction of the secrets of the container the step's {@code volumes-from} names; of every container
     *         of the module when the schedule is no longer in the spec (a window finished after a push changed it)
     */
    static Redaction of(SecretsDir secrets, ModuleSpec spec, String schedule) {
        if (spec == null) return Redaction.NONE;
        ScheduleSpec s = spec.schedules().get(schedule);
        if (s != null) {
            String from = s.step().volumesFrom();
            return from == null ? Redaction.NONE : secrets.resolve(spec.containers().get(from)).redaction();
        }
        Redaction all = Redaction.NONE;
        for (ContainerSpec c : spec.containers().values()) all = all.plus(secrets.resolve(c).redaction());
        return all;
    }
}
