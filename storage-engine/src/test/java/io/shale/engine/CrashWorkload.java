package io.shale.engine;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

/**
 * The child process of {@link CrashRecoveryIT}: applies a deterministic stream of batches (batch
 * {@code i} depends only on the seed and {@code i}) to an engine until it is killed. Every 300
 * batches it asks for a manual compaction, so kills also land inside compactions and manifest
 * writes, not only inside the background flushes the tiny memtable triggers constantly.
 */
public final class CrashWorkload {
  private CrashWorkload() {}

  /** The batch at {@code index}: keys from a space of 1500, a fifth of the operations deletes. */
  static TreeMap<String, byte[]> batch(long seed, long index) {
    Random r = new Random(seed * 1_000_003L + index);
    TreeMap<String, byte[]> ops = new TreeMap<>();
    int n = 1 + r.nextInt(8);
    for (int i = 0; i < n; i++) {
      String key = String.format("key-%05d", r.nextInt(1500));
      if (r.nextInt(5) == 0) {
        ops.put(key, null);
      } else {
        byte[] v = new byte[r.nextInt(10) == 0 ? 500 + r.nextInt(2000) : r.nextInt(150)];
        r.nextBytes(v);
        ops.put(key, v);
      }
    }
    return ops;
  }

  static WriteBatch toWriteBatch(TreeMap<String, byte[]> ops) {
    WriteBatch b = new WriteBatch();
    for (Map.Entry<String, byte[]> e : ops.entrySet()) {
      byte[] k = e.getKey().getBytes(StandardCharsets.UTF_8);
      if (e.getValue() == null) {
        b.delete(k);
      } else {
        b.put(k, e.getValue());
      }
    }
    return b;
  }

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    long seed = Long.parseLong(args[1]);
    Engine engine = Engine.open(dir, TestOptions.tiny());
    long index = engine.persistedAppliedIndex() + 1;
    System.out.println("started at " + index);
    System.out.flush();
    while (true) {
      engine.apply(toWriteBatch(batch(seed, index)), index);
      if (index % 300 == 0) {
        engine.compactRange();
      }
      index++;
    }
  }
}
