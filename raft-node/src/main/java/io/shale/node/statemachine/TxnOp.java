package io.shale.node.statemachine;

import java.util.Arrays;

/**
 * One operation of a transaction's branch. They apply in order at the transaction's index, and a
 * get sees the writes of the operations before it.
 */
public sealed interface TxnOp permits TxnOp.Put, TxnOp.Delete, TxnOp.DeleteRange, TxnOp.Get {
  /** Puts {@code value} under {@code key}, attached to {@code lease} (0: none). */
  record Put(byte[] key, byte[] value, long lease) implements TxnOp {
    public Put {
      CommandCodec.checkKey(key);
      if (value == null) {
        throw new IllegalArgumentException("a put needs a value");
      }
      if (lease < 0) {
        throw new IllegalArgumentException("lease id " + lease + " is negative");
      }
    }

    public Put(byte[] key, byte[] value) {
      this(key, value, 0);
    }
  }

  record Delete(byte[] key) implements TxnOp {
    public Delete {
      CommandCodec.checkKey(key);
    }
  }

  /**
   * Deletes the user keys in [start, end) (end null: to the last key). Within a transaction a range
   * holds at most {@link TxnApplier#MAX_RANGE_KEYS} keys, or the transaction is refused: it must
   * apply whole, in one bounded entry.
   */
  record DeleteRange(byte[] start, byte[] end) implements TxnOp {
    public DeleteRange {
      if (start.length > CommandCodec.MAX_KEY_BYTES) {
        throw new IllegalArgumentException(
            "delete range start exceeds " + CommandCodec.MAX_KEY_BYTES + " bytes");
      }
      if (end != null) {
        CommandCodec.checkKey(end);
        if (Arrays.compareUnsigned(start, end) >= 0) {
          throw new IllegalArgumentException("delete range end must be after its start");
        }
      }
    }
  }

  record Get(byte[] key) implements TxnOp {
    public Get {
      CommandCodec.checkKey(key);
    }
  }
}
