package io.shale.node.statemachine;

import io.shale.engine.Engine;
import java.util.List;

/**
 * Told what applied entries do to leases, in index order, on the apply thread; the leader's expiry
 * clock ({@code io.shale.node.lease.LeaseExpiry}) is one.
 */
public interface AppliedLeases {
  /**
   * The state machine (re)opened on {@code state}: the leases it holds (and revokes left
   * unfinished) replace whatever was known. Called before any entry after it is applied.
   */
  void reload(Engine state);

  /** An applied entry granted, kept alive or revoked these leases. */
  void applied(List<LeaseEvent> events);

  /**
   * Milliseconds before lease {@code id} expires as this node's clock counts them, or -1 when this
   * node does not know (it does not lead, or the lease does not live).
   */
  long remainingMillis(long id);

  AppliedLeases NONE =
      new AppliedLeases() {
        @Override
        public void reload(Engine state) {}

        @Override
        public void applied(List<LeaseEvent> events) {}

        @Override
        public long remainingMillis(long id) {
          return -1;
        }
      };
}
