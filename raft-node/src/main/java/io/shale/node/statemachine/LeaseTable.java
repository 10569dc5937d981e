package io.shale.node.statemachine;

import io.shale.engine.Engine;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The leases an engine holds, read when it (re)opens: live leases' granted TTLs by id, and the ids
 * of revokes that stopped before deleting every key (they must be finished).
 */
public record LeaseTable(Map<Long, Long> ttls, List<Long> unfinishedRevokes) {
  public static LeaseTable load(Engine state) {
    Map<Long, Long> ttls = new HashMap<>();
    for (LeaseRecords.Lease l : LeaseRecords.list(state, -1, (int) LeaseApplier.MAX_LEASES)) {
      ttls.put(l.id(), l.ttlMillis());
    }
    return new LeaseTable(ttls, LeaseRecords.unfinishedRevokes(state, 1_000));
  }
}
