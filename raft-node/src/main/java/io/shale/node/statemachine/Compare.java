package io.shale.node.statemachine;

import java.util.Arrays;

/**
 * One condition of a transaction on one key, as etcd's: the key's value, version, create index or
 * modification index compared with an operand. An absent key has version, create index and
 * modification index 0 and no value (a value comparison with an absent key is false, whatever the
 * result asked; test absence with {@code VERSION EQUAL 0}).
 *
 * @param value the operand of a {@link Target#VALUE} comparison (null for the others)
 * @param number the operand of the other targets (ignored for VALUE)
 */
public record Compare(byte[] key, Target target, Result result, byte[] value, long number) {
  /** What of the key is compared. */
  public enum Target {
    VALUE,
    VERSION,
    CREATE_INDEX,
    MOD_INDEX
  }

  /** How the key's side relates to the operand for the comparison to hold. */
  public enum Result {
    EQUAL,
    NOT_EQUAL,
    LESS,
    GREATER
  }

  public Compare {
    CommandCodec.checkKey(key);
    if ((target == Target.VALUE) != (value != null)) {
      throw new IllegalArgumentException(
          "a VALUE comparison takes a value operand and the others a number");
    }
    if (target != Target.VALUE && number < 0) {
      throw new IllegalArgumentException("a comparison with a negative " + target + ": " + number);
    }
  }

  /** A comparison of the key's value. */
  public static Compare value(byte[] key, Result result, byte[] value) {
    return new Compare(key, Target.VALUE, result, value, 0);
  }

  /** A comparison of the key's version, create index or modification index. */
  public static Compare number(byte[] key, Target target, Result result, long number) {
    return new Compare(key, target, result, null, number);
  }

  /** Whether the comparison holds for the key as it is ({@code current} null: absent). */
  boolean holds(EntryView.KeyState current) {
    int order;
    if (target == Target.VALUE) {
      if (current == null) {
        return false;
      }
      order = Arrays.compareUnsigned(current.value(), value);
    } else {
      long mine =
          current == null
              ? 0
              : switch (target) {
                case VERSION -> current.version();
                case CREATE_INDEX -> current.createIndex();
                default -> current.modIndex();
              };
      order = Long.compare(mine, number);
    }
    return switch (result) {
      case EQUAL -> order == 0;
      case NOT_EQUAL -> order != 0;
      case LESS -> order < 0;
      case GREATER -> order > 0;
    };
  }
}
