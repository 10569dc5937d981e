package io.shale.ops.cluster;

import static io.shale.ops.ScriptArguments.callerPath;
import static io.shale.ops.ScriptArguments.need;

import io.shale.client.ShaleClient;
import io.shale.client.Watch;
import io.shale.client.WatchEvent;
import io.shale.client.WatchListener;
import io.shale.client.WatchOptions;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watch fan-out on a 3-node Shale cluster (ops/bin/watch-bench): W watchers on one prefix, spread
 * over the nodes by the SDK, while writers put N values under it as fast as they are acknowledged.
 * Measured per cell: deliveries per second (W x N over the time from the first put to the last
 * delivery), puts per second meanwhile, the delay from a put's start to each delivery
 * (HdrHistogram; the value carries its send time), and the servers' CPU per 1,000 deliveries. Each
 * cell runs after rounds that warm the JVMs ({@code --jit-warmup-seconds}) and an unmeasured round
 * with its number of watchers, {@code --repeats} times.
 */
public final class WatchFanOut {
  private static final Logger LOG = LoggerFactory.getLogger(WatchFanOut.class);

  private WatchFanOut() {}

  /** One measured cell. */
  record Cell(
      int watchers,
      int events,
      double seconds,
      double deliveriesPerSecond,
      double putsPerSecond,
      Histogram delay,
      CpuUsage.PerOp cpu) {}

  public static void main(String[] args) throws Exception {
    int[] watchers = {1, 100, 1000};
    int events = 20_000;
    int size = 256;
    int writers = 16;
    int repeats = 2;
    double jitWarmup = 90;
    Path dir = Path.of(System.getProperty("java.io.tmpdir"), "shale-watch-bench");
    Path out = callerPath("docs/watch-bench");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--watchers" ->
            watchers =
                Arrays.stream(need(args, ++i, "--watchers").split(","))
                    .mapToInt(Integer::parseInt)
                    .toArray();
        case "--events" -> events = Integer.parseInt(need(args, ++i, "--events"));
        case "--size" -> size = Integer.parseInt(need(args, ++i, "--size"));
        case "--writers" -> writers = Integer.parseInt(need(args, ++i, "--writers"));
        case "--repeats" -> repeats = Integer.parseInt(need(args, ++i, "--repeats"));
        case "--jit-warmup-seconds" ->
            jitWarmup = Double.parseDouble(need(args, ++i, "--jit-warmup-seconds"));
        case "--dir" -> dir = callerPath(need(args, ++i, "--dir"));
        case "--out" -> out = callerPath(need(args, ++i, "--out"));
        case "--quick" -> {
          watchers = new int[] {1, 10};
          events = 500;
          repeats = 1;
          jitWarmup = 5;
        }
        case "-h", "--help" -> {
          System.out.println(
              "watch-bench [--watchers 1,100,1000] [--events N] [--size BYTES] [--writers N]"
                  + " [--repeats N] [--jit-warmup-seconds S] [--dir DIR] [--out PREFIX] [--quick]");
          return;
        }
        default -> {
          LOG.error("watch-bench: unknown argument '{}' (--help)", args[i]);
          System.exit(2);
        }
      }
    }
    List<Cell> cells = new ArrayList<>();
    Instant started = Instant.now();
    try (ShaleTarget target = new ShaleTarget(dir, "1g", 1);
        ShaleClient client =
            ShaleClient.builder()
                .endpoints(target.apiAddresses().toArray(String[]::new))
                .deadline(Duration.ofSeconds(60))
                .build()) {
      // The JVMs compile their put and watch paths first: rounds of 10 watchers until the time
      // is up (a cold cluster puts several times slower than a warm one).
      long warmEnd = System.nanoTime() + (long) (jitWarmup * 1e9);
      int warmRounds = 0;
      while (System.nanoTime() < warmEnd) {
        run(client, target, "jit/" + warmRounds++ + "/", 10, 2_000, size, writers);
      }
      System.out.println("watch-bench: warmed up with " + warmRounds + " rounds");
      int round = 0;
      for (int w : watchers) {
        // Unmeasured: the JVMs compile the watch path for this many streams first.
        run(client, target, "warm/" + w + "/", w, Math.max(200, events / 10), size, writers);
        for (int r = 0; r < repeats; r++) {
          Cell c = run(client, target, "fan/" + round++ + "/", w, events, size, writers);
          cells.add(c);
          System.out.printf(
              Locale.ROOT,
              "watch-bench: %5d watchers x %,d events: %,.0f deliveries/s, %,.0f puts/s, delay"
                  + " P50 %.2f ms P99 %.2f ms max %.2f ms%n",
              w,
              events,
              c.deliveriesPerSecond(),
              c.putsPerSecond(),
              c.delay().getValueAtPercentile(50) / 1e6,
              c.delay().getValueAtPercentile(99) / 1e6,
              c.delay().getMaxValue() / 1e6);
        }
      }
    }
    write(out, cells, events, size, writers, started);
  }

  /** Counts what one watcher received and how late. */
  private static final class Receiver implements WatchListener {
    final AtomicLong received = new AtomicLong();
    final Histogram delay = new Histogram(TimeUnit.SECONDS.toNanos(120), 3);

    @Override
    public void onEvents(List<WatchEvent> batch, long throughIndex) {
      long now = System.nanoTime();
      synchronized (delay) {
        for (WatchEvent e : batch) {
          long sent = ByteBuffer.wrap(e.entry().value()).getLong();
          delay.recordValue(Math.max(0, Math.min(now - sent, TimeUnit.SECONDS.toNanos(120))));
        }
      }
      received.addAndGet(batch.size());
    }
  }

  private static Cell run(
      ShaleClient client,
      ShaleTarget target,
      String prefix,
      int watcherCount,
      int events,
      int size,
      int writerCount)
      throws Exception {
    List<Receiver> receivers = new ArrayList<>();
    List<Watch> watches = new ArrayList<>();
    for (int i = 0; i < watcherCount; i++) {
      Receiver r = new Receiver();
      receivers.add(r);
      watches.add(client.watch(WatchOptions.prefix(prefix), r));
    }
    long created = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    for (Watch w : watches) {
      while (w.resumeIndex() == 0) {
        if (System.nanoTime() > created) {
          throw new IllegalStateException("watches not created within 60 s");
        }
        Thread.sleep(5);
      }
    }
    AtomicLong next = new AtomicLong();
    long[] putsDone = new long[1];
    CpuUsage.Sample cpuFrom = CpuUsage.sample(target.servers());
    long start = System.nanoTime();
    Thread[] writers = new Thread[writerCount];
    for (int t = 0; t < writerCount; t++) {
      writers[t] =
          new Thread(
              () -> {
                for (long n; (n = next.getAndIncrement()) < events; ) {
                  byte[] value = new byte[size];
                  ByteBuffer.wrap(value).putLong(System.nanoTime());
                  client.put(
                      (prefix + (n % 1000)).getBytes(java.nio.charset.StandardCharsets.UTF_8),
                      value);
                }
              });
      writers[t].start();
    }
    for (Thread t : writers) {
      t.join();
    }
    putsDone[0] = System.nanoTime();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(600);
    for (Receiver r : receivers) {
      while (r.received.get() < events) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(
              "a watcher received " + r.received.get() + " of " + events + " within 600 s");
        }
        Thread.sleep(2);
      }
    }
    long end = System.nanoTime();
    CpuUsage.Sample cpuTo = CpuUsage.sample(target.servers());
    watches.forEach(Watch::close);
    Histogram all = new Histogram(TimeUnit.SECONDS.toNanos(120), 3);
    for (Receiver r : receivers) {
      all.add(r.delay);
    }
    long deliveries = (long) watcherCount * events;
    double seconds = (end - start) / 1e9;
    return new Cell(
        watcherCount,
        events,
        seconds,
        deliveries / seconds,
        events / ((putsDone[0] - start) / 1e9),
        all,
        CpuUsage.between(cpuFrom, cpuTo, deliveries, target.leaderIndex()));
  }

  private static void write(
      Path out, List<Cell> cells, int events, int size, int writers, Instant started)
      throws Exception {
    StringBuilder md = new StringBuilder();
    md.append("# Watch fan-out\n\n")
        .append("Run ")
        .append(started)
        .append(" at revision ")
        .append(System.getProperty("shale.ops.revision", "?"))
        .append(" (ops/bin/watch-bench): a 3-node Shale cluster on this machine, ")
        .append(writers)
        .append(" writers putting ")
        .append(String.format(Locale.ROOT, "%,d", events))
        .append(" values of ")
        .append(size)
        .append(" B under one prefix, every watcher watching it through one SDK client.\n\n")
        .append(
            "| watchers | deliveries/s | puts/s meanwhile | delay P50 ms | P99 ms | max ms |"
                + " seconds | server CPU-ms / 1,000 deliveries |\n")
        .append("|---|---|---|---|---|---|---|---|\n");
    for (Cell c : cells) {
      md.append(
          String.format(
              Locale.ROOT,
              "| %d | %,.0f | %,.0f | %.2f | %.2f | %.2f | %.1f | %.1f |%n",
              c.watchers(),
              c.deliveriesPerSecond(),
              c.putsPerSecond(),
              c.delay().getValueAtPercentile(50) / 1e6,
              c.delay().getValueAtPercentile(99) / 1e6,
              c.delay().getMaxValue() / 1e6,
              c.seconds(),
              c.cpu().serversMs()));
    }
    Path md5 = Path.of(out + ".md");
    if (md5.getParent() != null) {
      Files.createDirectories(md5.getParent());
    }
    Files.writeString(md5, md);
    System.out.println("watch-bench: wrote " + md5);
  }
}
