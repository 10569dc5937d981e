package io.shale.node.statemachine;

import java.util.List;

/** Told of every change the state machine applies to user keys, in index order, on its thread. */
public interface AppliedChanges {
  /** The state machine (re)opened holding exactly the entries up to {@code index}. */
  void restartAfter(long index);

  /** Entry {@code index} was applied, with these changes to user keys (none for most others). */
  void applied(long index, List<KeyChange> changes);

  /**
   * Whether the changes should carry each key's previous value ({@link KeyChange#previous}): one
   * more point read per written key on the apply thread.
   */
  default boolean previousValues() {
    return false;
  }

  AppliedChanges NONE =
      new AppliedChanges() {
        @Override
        public void restartAfter(long index) {}

        @Override
        public void applied(long index, List<KeyChange> changes) {}
      };
}
