package io.mesh.faults;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * On a test method of a class with a {@link FaultFixture}: before the test, desired state {@code r1} of the fixture's
 * module (mode {@code one}, the {@code registry}'s restart policy, a step that sleeps {@code stepSeconds}, the
 * schedule's timeout), a {@code mesh-agent run} daemon for the fixture's host reconciling every {@code reconcile}, and
 * r1 applied by it (within 60 s). The test gets the daemon as its {@code ChildJvm} parameter.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@interface DaemonWithR1 {
    /** @return the daemon's short name (its log file's) */
    String name() default "daemon";

    /** @return its {@code --reconcile-interval} */
    String reconcile() default "1s";

    /** @return the registry's restart policy */
    String restart() default "unless-stopped";

    /** @return how long the step sleeps */
    int stepSeconds();

    /** @return the schedule's timeout */
    String timeout() default "1m";
}
