package io.shale.client;

import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Request ids of one writer, 20 bytes: a random 8-byte prefix drawn once, a counter, then 4 random
 * bytes. Every replica records each identified write under its id, so how ids sort decides where
 * those records land: ids of one writer sort together and in the order they were taken, so a
 * replica inserts each record next to the one before (a warm path through its memtable, tables that
 * hold a range instead of ids spread over the whole key space) rather than at a random place.
 *
 * <p>Unique without coordination: two writers share a prefix with probability 2^-64, and a counter
 * never repeats. Not guessable from one observed id: the random tail makes pre-empting a writer's
 * next id (to have its write refused as a reuse) cost about 2^31 writes.
 */
public final class RequestIds {
  /** Bytes in an id. */
  public static final int LENGTH = 20;

  private final SecureRandom random;
  private final long prefix;
  private final AtomicLong counter = new AtomicLong();

  private RequestIds(SecureRandom random, long prefix) {
    this.random = random;
    this.prefix = prefix;
  }

  /** Ids under a fresh random prefix. */
  public static RequestIds create() {
    SecureRandom random = new SecureRandom();
    return new RequestIds(random, random.nextLong());
  }

  /** Ids whose first byte is {@code tag} (the rest of the prefix random), to tell writers apart. */
  public static RequestIds tagged(byte tag) {
    SecureRandom random = new SecureRandom();
    return new RequestIds(random, (long) tag << 56 | (random.nextLong() >>> 8));
  }

  /** The next id. Thread-safe. */
  public byte[] next() {
    byte[] tail = new byte[4];
    random.nextBytes(tail);
    return ByteBuffer.allocate(LENGTH)
        .putLong(prefix)
        .putLong(counter.incrementAndGet())
        .put(tail)
        .array();
  }
}
