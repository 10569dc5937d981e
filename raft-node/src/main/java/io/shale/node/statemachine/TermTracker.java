package io.shale.node.statemachine;

import io.shale.engine.Engine;
import io.shale.engine.WriteBatch;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * Knows the term of every applied index. The term is kept in the engine under a reserved key (keys
 * beginning with byte 0 are the node's), written in the batch of the first entry of every term, so
 * the persisted state always holds the term of its persisted index; in memory, the index at which
 * each term's first applied entry is.
 *
 * <p>{@link #recover} and {@link #onApply} run on the apply thread; {@link #termOf} from any.
 */
public final class TermTracker {
  /** The engine key holding the term of the last applied entry. */
  static final byte[] TERM_KEY = {0, 't', 'e', 'r', 'm'};

  private final ConcurrentSkipListMap<Long, Long> termStarts = new ConcurrentSkipListMap<>();
  private long lastTerm = -1;

  /** Read the term of an engine just opened; -1 if it holds no applied entry. */
  public long recover(Engine engine) {
    byte[] t = engine.get(TERM_KEY);
    lastTerm = t == null ? -1 : ByteBuffer.wrap(t).getLong();
    termStarts.clear();
    if (engine.persistedAppliedIndex() > 0 && lastTerm >= 0) {
      termStarts.put(0L, lastTerm);
    }
    return lastTerm;
  }

  /** The entry at {@code index} is of {@code term}: a new term's first entry records it. */
  public void onApply(long term, long index, WriteBatch batch) {
    if (term != lastTerm) {
      batch.put(TERM_KEY, ByteBuffer.allocate(8).putLong(term).array());
      termStarts.put(index, term);
      lastTerm = term;
    }
  }

  /** The term of applied index {@code index}; 0 before the first known term. */
  public long termOf(long index) {
    Map.Entry<Long, Long> t = termStarts.floorEntry(index);
    return t == null ? 0 : t.getValue();
  }
}
