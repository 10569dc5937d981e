package io.shale.testing.linearizability;

/**
 * The sequential specification the checker holds a key's operations to: a register holding one
 * value or nothing. {@link #step} says whether an operation may come next in a sequential execution
 * from {@code state}, and the state after it.
 *
 * <p>States are small ints (the checker interns values: 0 is absent), so that the search can
 * memoize (linearized set, state) pairs cheaply.
 */
final class RegisterModel {
  /** No state: the operation cannot be linearized here. */
  static final int INVALID = -1;

  private RegisterModel() {}

  /**
   * @param input the interned value written (WRITE, CAS), 0 for a delete
   * @param expected the interned value a CAS expects, 0 for absent
   * @param output the interned value a READ returned, 0 for absent
   */
  static int step(int state, Operation op, int input, int expected, int output) {
    return switch (op.kind()) {
      case READ -> state == output ? state : INVALID;
      case WRITE -> input;
      case CAS -> {
        boolean matches = state == expected;
        if (op.indeterminate()) {
          yield matches ? input : state; // applied or not: either is allowed
        }
        if (op.applied()) {
          yield matches ? input : INVALID;
        }
        yield matches ? INVALID : state;
      }
    };
  }
}
