package io.shale.client;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * What to watch and from where: {@code WatchOptions.prefix("config/").startIndex(1234)}. Keys are
 * one key, a prefix or a range [start, end); the start index is the first index whose changes are
 * wanted (default 0: from now on, as the answering node has applied).
 */
public final class WatchOptions {
  enum Kind {
    KEY,
    PREFIX,
    RANGE
  }

  final Kind kind;
  final byte[] key;
  final byte[] end;
  long startIndex;
  Duration progressInterval = Duration.ZERO;
  boolean previousValues;

  private WatchOptions(Kind kind, byte[] key, byte[] end) {
    this.kind = kind;
    this.key = key.clone();
    this.end = end == null ? null : end.clone();
  }

  public static WatchOptions key(byte[] key) {
    return new WatchOptions(Kind.KEY, key, null);
  }

  public static WatchOptions key(String key) {
    return key(key.getBytes(StandardCharsets.UTF_8));
  }

  public static WatchOptions prefix(byte[] prefix) {
    return new WatchOptions(Kind.PREFIX, prefix, null);
  }

  public static WatchOptions prefix(String prefix) {
    return prefix(prefix.getBytes(StandardCharsets.UTF_8));
  }

  /** Keys in [start, end); end null: to the last key. */
  public static WatchOptions range(byte[] start, byte[] end) {
    return new WatchOptions(Kind.RANGE, start, end);
  }

  /** The first index whose changes to deliver (e.g. a Get's header index + 1). */
  public WatchOptions startIndex(long index) {
    if (index < 0) {
      throw new IllegalArgumentException("start index must not be negative: " + index);
    }
    this.startIndex = index;
    return this;
  }

  /**
   * Also deliver each changed key's previous value and revisions ({@link WatchEvent#previous}). The
   * nodes must run with {@code watch.prev_values = true}; otherwise the watch ends with an error
   * saying so.
   */
  public WatchOptions withPreviousValues() {
    this.previousValues = true;
    return this;
  }

  /** How often a quiet watch hears where it stands (zero: the node's default, 5 s). */
  public WatchOptions progressInterval(Duration interval) {
    this.progressInterval = interval;
    return this;
  }
}
