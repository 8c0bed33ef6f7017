package io.mesh.wire;

import java.time.Instant;
import java.util.List;

/**
 * Data of {@code {root}/pushes/push-<seq>/cancelled}: the operator dropped the push ({@code mesh push cancel PUSH},
 * {@code POST /v1/pushes/{push}/cancel}). Every target of the push not applied, failed or superseded then reads
 * {@link PushState#CANCELLED} from then on, so the push is done; the desired nodes are untouched
 * (docs/decisions/0030-cancel-and-expire-pushes.md). Written once.
 *
 * @param push  the push cancelled, such as {@code push-0000000002}
 * @param at    when the coordinator took the cancel
 * @param by    who cancelled it (as a push's {@code by})
 * @param hosts the hosts whose targets were not settled then (pending, deferred or waiting), sorted
 */
public record PushCancel(String push, Instant at, String by, List<String> hosts) {
    public PushCancel {
        hosts = hosts == null ? List.of() : List.copyOf(hosts);
    }
}
