package io.mesh.hold;

import io.mesh.wire.HeldRecord;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which operators' holds this agent has closed in its ledger, so that each hold's interval closes exactly once
 * (decision 28): at its {@code until} ({@link #expire}), or when its node goes or another hold replaces it
 * ({@link #end}), whichever this agent meets first.
 *
 * <p>A hold is its container, its {@code by} and its {@code since}: two holds of one container by one operator are two
 * holds. An agent paused past its session meets a hold released and another placed meanwhile as one change of the
 * node, with no delete between (its cache is rebuilt): the first one's expiry must not swallow the second one's end.
 */
final class HoldClosings {
    private final Set<String> expired = ConcurrentHashMap.newKeySet();

    private static String key(HeldRecord h) {
        return h.container() + "|" + h.hold().by() + "|" + h.hold().since();
    }

    /**
     * @param h a hold whose {@code until} has come
     * @return true when its interval is to be closed now (the first time)
     */
    boolean expire(HeldRecord h) {
        return expired.add(key(h));
    }

    /**
     * @param h a hold whose node was deleted, or written over by another hold
     * @return true when its interval is still to be closed (it did not expire first)
     */
    boolean end(HeldRecord h) {
        return !expired.remove(key(h));
    }

    /**
     * @return true when both are the same hold (its host's confirmation and {@code --stop} change its node, not the hold)
     */
    static boolean same(HeldRecord a, HeldRecord b) {
        return a != null && b != null && a.operatorHold() && b.operatorHold() && key(a).equals(key(b));
    }
}
