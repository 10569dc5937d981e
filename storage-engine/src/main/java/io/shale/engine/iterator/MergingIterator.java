package io.shale.engine.iterator;

import io.shale.engine.key.Keys;
import io.shale.engine.key.ValueKind;
import java.util.List;
import java.util.PriorityQueue;

/**
 * Merges sources that each walk in the same direction into one stream in that direction. Ties go to
 * the earlier source. They are rare but real: a read state built between a flush's manifest edit
 * and its memtable's removal holds the same versions twice (memtable and table); identical entries,
 * so either is right, and readers skip the second one as an older duplicate.
 */
public final class MergingIterator implements InternalIterator {
  private final List<InternalIterator> children;
  private final PriorityQueue<Integer> heap;
  private int current = -1;

  public MergingIterator(List<InternalIterator> children, Direction direction) {
    this.children = children;
    int sign = direction == Direction.FORWARD ? 1 : -1;
    this.heap =
        new PriorityQueue<>(
            Math.max(1, children.size()),
            (a, b) -> {
              InternalIterator x = children.get(a);
              InternalIterator y = children.get(b);
              int c =
                  sign * Keys.compareInternal(x.userKey(), x.sequence(), y.userKey(), y.sequence());
              return c != 0 ? c : Integer.compare(a, b);
            });
  }

  private void rebuild() {
    heap.clear();
    for (int i = 0; i < children.size(); i++) {
      if (children.get(i).valid()) {
        heap.add(i);
      }
    }
    current = heap.isEmpty() ? -1 : heap.peek();
  }

  @Override
  public boolean valid() {
    return current >= 0;
  }

  @Override
  public void seekToFirst() {
    for (InternalIterator c : children) {
      c.seekToFirst();
    }
    rebuild();
  }

  @Override
  public void seek(byte[] target) {
    for (InternalIterator c : children) {
      c.seek(target);
    }
    rebuild();
  }

  @Override
  public void next() {
    int top = heap.poll();
    children.get(top).next();
    if (children.get(top).valid()) {
      heap.add(top);
    }
    current = heap.isEmpty() ? -1 : heap.peek();
  }

  @Override
  public byte[] userKey() {
    return children.get(current).userKey();
  }

  @Override
  public long sequence() {
    return children.get(current).sequence();
  }

  @Override
  public ValueKind kind() {
    return children.get(current).kind();
  }

  @Override
  public byte[] value() {
    return children.get(current).value();
  }

  @Override
  public ValueSlice valueSlice() {
    return children.get(current).valueSlice();
  }

  @Override
  public void close() {
    RuntimeException first = null;
    for (InternalIterator c : children) {
      try {
        c.close();
      } catch (RuntimeException e) {
        if (first == null) {
          first = e;
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }
}
