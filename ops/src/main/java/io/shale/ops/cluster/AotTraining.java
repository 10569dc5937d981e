package io.shale.ops.cluster;

import io.shale.client.Lease;
import io.shale.client.LeaseKeeper;
import io.shale.client.ReadConsistency;
import io.shale.client.ShaleClient;
import io.shale.client.TlsSettings;
import io.shale.client.Txn;
import io.shale.client.Watch;
import io.shale.client.WatchOptions;
import io.shale.node.transport.ClusterCertificates;
import io.shale.ops.release.ReleaseLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The training run that makes a release layout's ahead-of-time cache ({@code lib/shale.aot}): a
 * 3-node cluster started from the layout exactly as {@code shale-node} starts it (its runtime, its
 * jars, TLS on every port, 512 MiB heaps), n1 with {@code -XX:AOTCacheOutput}; the SDK drives what
 * users run (puts of 256 B, 16 KiB and 64 KiB at 16 in flight, linearizable and stale gets, scans,
 * transactions, batches, deletes, leases with keep-alives, a watch), while leadership moves from n1
 * to n2 to n3 so that n1 runs both as leader and as follower. n1 then stops politely and its JVM
 * writes the cache (class loading and linking, method profiles: JEP 483, 514, 515), and the
 * layout's fingerprint is recorded beside it.
 *
 * <p>Usage: {@code AotTraining --home DIR [--seconds S] [--dir WORK]}; run by {@code mvn package}
 * (ops/pom.xml) over the staged release layout, skipped with {@code -Dshale.aot.skip}.
 */
public final class AotTraining {
  private static final Logger LOG = LoggerFactory.getLogger(AotTraining.class);
  private static final int KEYS = 1_000;
  private static final int[] SIZES = {256, 16 << 10, 64 << 10};

  private AotTraining() {}

  public static void main(String[] args) throws Exception {
    Path home = null;
    Path work = null;
    double seconds = 45;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--home" -> home = Path.of(args[++i]);
        case "--dir" -> work = Path.of(args[++i]).toAbsolutePath();
        case "--seconds" -> seconds = Double.parseDouble(args[++i]);
        default -> {
          LOG.error(
              "aot-training: unknown argument {} (--home DIR [--seconds S] [--dir WORK])", args[i]);
          System.exit(2);
        }
      }
    }
    if (home == null) {
      LOG.error("aot-training: --home DIR (a release layout) is required");
      System.exit(2);
    }
    if (work == null) {
      work = Files.createTempDirectory("shale-aot-training");
    }
    train(new ReleaseLayout(home.toAbsolutePath()), work, seconds);
  }

  static void train(ReleaseLayout layout, Path work, double seconds) throws Exception {
    long start = System.nanoTime();
    Path cache = layout.aotCache();
    Files.deleteIfExists(cache);
    Files.deleteIfExists(layout.home().resolve(ReleaseLayout.AOT_SUMS));
    NodeRuntime runtime = NodeRuntime.of(layout, false);
    List<String> record = List.of("-XX:AOTCacheOutput=" + cache);
    try (ShaleTarget cluster =
        new ShaleTarget(work, "512m", 4, true, runtime, i -> i == 0 ? record : List.of())) {
      Path certs = cluster.certificates();
      try (ShaleClient client =
          ShaleClient.builder()
              .endpoints(cluster.apiAddresses().toArray(String[]::new))
              .deadline(Duration.ofSeconds(30))
              .tls(
                  TlsSettings.mutual(
                      certs.resolve("ca.pem"),
                      ClusterCertificates.clientCertificate(certs, "root"),
                      ClusterCertificates.clientKey(certs, "root")))
              .build()) {
        for (String leader : List.of("n1", "n2", "n3")) {
          client.cluster().transferLeadership(leader);
          long ops = workload(client, seconds / 3);
          System.out.printf(Locale.ROOT, "aot-training: %s leading, %,d operations%n", leader, ops);
        }
      }
      cluster.stop(0, Duration.ofMinutes(3)); // n1's JVM writes the cache as it exits
    }
    if (!Files.isRegularFile(cache)) {
      throw new IllegalStateException("n1 ended without writing " + cache + "; see " + work);
    }
    layout.writeFingerprint();
    System.out.printf(
        Locale.ROOT,
        "aot-training: %s, %.1f MiB, made in %.0f s%n",
        cache,
        Files.size(cache) / 1048576.0,
        (System.nanoTime() - start) / 1e9);
  }

  /** Every kind of call, mixed, 16 in flight, for {@code seconds}; returns how many completed. */
  private static long workload(ShaleClient client, double seconds) throws Exception {
    long end = System.nanoTime() + (long) (seconds * 1e9);
    SplittableRandom random = new SplittableRandom(7);
    Semaphore inFlight = new Semaphore(16);
    AtomicLong done = new AtomicLong();
    AtomicLong events = new AtomicLong();
    Lease lease = client.leases().grant(Duration.ofSeconds(30));
    List<CompletableFuture<?>> pending = new ArrayList<>();
    try (LeaseKeeper keeper = client.leases().keepAlive(lease);
        Watch watch =
            client.watch(
                WatchOptions.prefix("train/"),
                (changes, through) -> events.addAndGet(changes.size()))) {
      while (System.nanoTime() < end) {
        inFlight.acquire();
        byte[] key = key(random.nextInt(KEYS));
        int kind = random.nextInt(100);
        CompletableFuture<?> call;
        if (kind < 40) {
          byte[] value = new byte[SIZES[random.nextInt(SIZES.length)]];
          random.nextBytes(value);
          call = client.putAsync(key, value);
        } else if (kind < 70) {
          call = client.getAsync(key);
        } else if (kind < 80) {
          call = client.getAsync(key, ReadConsistency.STALE);
        } else if (kind < 85) {
          call =
              client
                  .txn()
                  .ifVersion(key, Txn.Cmp.GREATER, 0)
                  .thenPut(key, key)
                  .elseGet(key)
                  .commitAsync();
        } else if (kind < 90) {
          call = client.batch().put(key(random.nextInt(KEYS)), key).delete(key).commitAsync();
        } else if (kind < 94) {
          call = client.putAsync(key, key, lease.id());
        } else if (kind < 97) {
          call = client.scanPrefix("train/0").limit(50).toListAsync();
        } else {
          call = client.deleteAsync(key);
        }
        pending.add(
            call.whenComplete(
                (r, e) -> {
                  if (e == null) {
                    done.incrementAndGet();
                  }
                  inFlight.release();
                }));
        if (pending.size() > 1024) {
          pending.removeIf(CompletableFuture::isDone);
        }
      }
      CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new))
          .exceptionally(e -> null)
          .join();
      LOG.debug("aot-training: watch saw {} events, lease {}", events.get(), keeper.lease().id());
    }
    client.leases().revoke(lease.id());
    return done.get();
  }

  private static byte[] key(int i) {
    return String.format(Locale.ROOT, "train/%04d", i).getBytes(StandardCharsets.UTF_8);
  }
}
