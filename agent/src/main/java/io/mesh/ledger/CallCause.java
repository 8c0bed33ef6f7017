package io.mesh.ledger;

/**
 * Why a mesh process makes a Docker call, as the ledger's call lines say it (decision 28; SPEC.md, "Audit").
 *
 * @param cause    {@code push-<seq>} (an apply), {@code window:<schedule>} (a window or its recovery), {@code hold} (a
 *                 hold's {@code --stop}) or {@code repair} (a start during a freeze or a rollout's wait; a put-back)
 * @param window   a window's id, or {@code null}
 * @param schedule a window's schedule, or {@code null}
 */
public record CallCause(String cause, String window, String schedule) {
    /** A hold's {@code --stop}. */
    public static final CallCause HOLD = new CallCause("hold", null, null);
    /**
     * A start of what is stopped and not held, while frozen or kept waiting by a rollout, or a put-back of what a cut
     * recreate left aside, in any apply (SPEC.md, "Freezes": a freeze stops changes, not repairs).
     */
    public static final CallCause REPAIR = new CallCause("repair", null, null);

    /** @return an apply's cause; {@code push} as the desired record names it ({@code push-<seq>}) */
    public static CallCause push(String push) {
        return new CallCause(push == null ? "push-?" : push.startsWith("push-") ? push : "push-" + push, null, null);
    }

    /** @return a window's (or its recovery's) cause */
    public static CallCause window(String window, String schedule) {
        return new CallCause("window:" + schedule, window, schedule);
    }
}
