package io.mesh.hold;

import io.mesh.wire.HeldRecord;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which operators' holds this agent has closed in its ledger, so that each hold's interval closes exactly once
 * (decision 28): at its {@code until} (the expiry timer), or when its node goes or another hold replaces it, whichever
 * this agent meets first.
 *
 * <p>A hold is its container, its {@code by} and its {@code since}: two holds of one container by one operator are two
 * holds. An agent paused past its session meets a hold released and another placed meanwhile as one change of the
 * node, with no delete between (its cache is rebuilt): the first one's expiry must not swallow the second one's end.
 * Only a hold with an {@code until} can be met twice (its expiry, then its end); its key is kept from the first
 * meeting to the second, so the set holds at most the holds whose second meeting is still to come.
 */
final class HoldClosings {
    private final Set<String> metOnce = ConcurrentHashMap.newKeySet();

    private static String key(HeldRecord h) {
        return h.container() + "|" + h.hold().by() + "|" + h.hold().since();
    }

    /**
     * @param h a hold whose {@code until} has come, whose node was deleted, or whose node now carries another hold
     * @return true when its interval is to be closed now: the first time this agent meets its end
     */
    boolean close(HeldRecord h) {
        if (h.hold().until() == null) return true; // no expiry: its end is met once
        String k = key(h);
        return !metOnce.remove(k) && metOnce.add(k);
    }

    /**
     * @return true when both are the same hold (its host's confirmation and {@code --stop} change its node, not the hold)
     */
    static boolean same(HeldRecord a, HeldRecord b) {
        return a != null && b != null && a.operatorHold() && b.operatorHold() && key(a).equals(key(b));
    }
}
