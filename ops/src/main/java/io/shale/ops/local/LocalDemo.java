package io.shale.ops.local;

import io.shale.client.Entry;
import io.shale.client.Expectation;
import io.shale.client.ShaleClient;
import io.shale.client.TlsSettings;
import io.shale.engine.blob.BlobOptions;
import io.shale.node.server.NodeConfig;
import io.shale.ops.cli.ClientTls;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * The short workload {@code ops/bin/shale-local up} runs through the SDK once the cluster has a
 * leader: puts of mixed value sizes (including values above the engine's blob threshold, so blob
 * files are written), reads every key back and compares it, scans, and bumps a run counter by
 * compare-and-set. Keys of earlier runs are counted first: a second {@code up} finds the data of
 * the first.
 *
 * <p>Arguments: {@code --endpoints HOST:PORT,...} (required), {@code --keys N} (default 600),
 * {@code --node-config FILE} (the nodes' configuration, for the blob threshold it reports values
 * against; default: the engine's), {@code --tls-dir DIR} (speak TLS with the certificates there, as
 * the user root; default: plaintext).
 */
public final class LocalDemo {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(LocalDemo.class);

  /** Value sizes by share of keys: mostly small, some medium, a tenth above the blob threshold. */
  private static final int[] SIZES = {200, 200, 200, 200, 200, 200, 2048, 2048, 2048, 32768};

  private LocalDemo() {}

  public static void main(String[] args) throws Exception {
    String endpoints = null;
    TlsSettings tls = null;
    int keys = 600;
    int blobThreshold = BlobOptions.DEFAULT.minValueSizeBytes();
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--endpoints" -> endpoints = args[++i];
        case "--tls-dir" ->
            tls = ClientTls.fromDirectory(Path.of(args[++i]), ClientTls.DEFAULT_USER);
        case "--keys" -> keys = Integer.parseInt(args[++i]);
        case "--node-config" ->
            blobThreshold =
                NodeConfig.load(Path.of(args[++i]), List.of()).engine().blob().minValueSizeBytes();
        default -> {
          LOG.error("local-demo: unknown argument " + args[i]);
          System.exit(2);
        }
      }
    }
    if (endpoints == null) {
      LOG.error("local-demo: --endpoints HOST:PORT,... is required");
      System.exit(2);
    }
    try (ShaleClient client =
        ShaleClient.builder()
            .endpoints(endpoints)
            .deadline(Duration.ofSeconds(30))
            .tls(tls)
            .build()) {
      run(client, keys, blobThreshold);
    }
  }

  static void run(ShaleClient client, int keys, int blobThreshold) throws Exception {
    long earlier = client.scanPrefix("demo/run-").keysOnly().stream().count();
    int run = nextRun(client);
    System.out.printf(Locale.ROOT, "  run %d; %,d keys from earlier runs found%n", run, earlier);

    String prefix = String.format(Locale.ROOT, "demo/run-%04d/", run);
    SplittableRandom random = new SplittableRandom(run);
    byte[][] values = new byte[keys][];
    long bytes = 0;
    int blobs = 0;
    for (int i = 0; i < keys; i++) {
      values[i] = value(random, SIZES[i % SIZES.length]);
      bytes += values[i].length;
      blobs += values[i].length >= blobThreshold ? 1 : 0;
    }
    Histogram writes = new Histogram(3);
    Semaphore inFlight = new Semaphore(16);
    List<CompletableFuture<Void>> pending = new ArrayList<>();
    long start = System.nanoTime();
    for (int i = 0; i < keys; i++) {
      inFlight.acquire();
      long t0 = System.nanoTime();
      pending.add(
          client
              .putAsync(key(prefix, i), values[i])
              .whenComplete(
                  (v, e) -> {
                    synchronized (writes) {
                      writes.recordValue(TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - t0));
                    }
                    inFlight.release();
                  }));
    }
    CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).join();
    double seconds = (System.nanoTime() - start) / 1e9;
    System.out.printf(
        Locale.ROOT,
        "  wrote %,d keys (%,d KiB; %d values of 32 KiB in blob "
            + "files) in %.1f s: %.0f puts/s, P50 %.1f ms, P99 %.1f ms%n",
        keys,
        bytes / 1024,
        blobs,
        seconds,
        keys / seconds,
        writes.getValueAtPercentile(50) / 1000.0,
        writes.getValueAtPercentile(99) / 1000.0);

    Histogram reads = new Histogram(3);
    int same = 0;
    for (int i = 0; i < keys; i++) {
      long t0 = System.nanoTime();
      Entry e = client.get(key(prefix, i));
      reads.recordValue(TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - t0));
      if (e != null && Arrays.equals(e.value(), values[i])) {
        same++;
      }
    }
    System.out.printf(
        Locale.ROOT,
        "  read back %,d of %,d keys unchanged (linearizable gets: "
            + "P50 %.1f ms, P99 %.1f ms)%n",
        same,
        keys,
        reads.getValueAtPercentile(50) / 1000.0,
        reads.getValueAtPercentile(99) / 1000.0);
    long scanned = client.scanPrefix(prefix).pageSize(100).stream().count();
    System.out.printf(
        Locale.ROOT,
        "  scanned %s: %,d keys; all runs together hold %,d keys%n",
        prefix,
        scanned,
        client.scanPrefix("demo/run-").keysOnly().stream().count());
    if (same != keys || scanned != keys) {
      LOG.error("local-demo: the cluster did not return what was written");
      System.exit(1);
    }
  }

  /** Bumps demo/runs by compare-and-set and returns the new count. */
  private static int nextRun(ShaleClient client) {
    while (true) {
      Entry e = client.get("demo/runs");
      int next = e == null ? 1 : Integer.parseInt(e.valueUtf8()) + 1;
      Expectation expected = e == null ? Expectation.absent() : Expectation.modIndex(e.modIndex());
      if (client.compareAndSet("demo/runs", expected, Integer.toString(next)).applied()) {
        return next;
      }
    }
  }

  private static byte[] key(String prefix, int i) {
    return String.format(Locale.ROOT, "%skey-%05d", prefix, i).getBytes(StandardCharsets.UTF_8);
  }

  /** Half random, half repeated bytes: compressible like real data, not trivially. */
  private static byte[] value(SplittableRandom random, int size) {
    byte[] v = new byte[size];
    for (int i = 0; i < size / 2; i++) {
      v[i] = (byte) random.nextInt(256);
    }
    Arrays.fill(v, size / 2, size, (byte) 'x');
    return v;
  }
}
