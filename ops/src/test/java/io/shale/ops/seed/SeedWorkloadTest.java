package io.shale.ops.seed;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.EnumMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The generated stream has the mix, sizes and skew the seed benchmark documents. */
class SeedWorkloadTest {
  private static final int N = 1_000_000;

  @Test
  void operationMixIs80ReadsAnd15ScansAnd5Writes() {
    SeedWorkload w = new SeedWorkload(1_000_000, 7);
    Map<SeedWorkload.Kind, Integer> counts = new EnumMap<>(SeedWorkload.Kind.class);
    int deletesOutsideHot = 0;
    for (int i = 0; i < N; i++) {
      SeedWorkload.Op op = w.next();
      counts.merge(op.kind(), 1, Integer::sum);
      if (op.kind() == SeedWorkload.Kind.DELETE && !w.isHot(op.key())) {
        deletesOutsideHot++;
      }
      if (op.kind() == SeedWorkload.Kind.SCAN) {
        assertThat(op.scanLength()).isBetween(10, 100);
      }
    }
    double reads =
        (counts.get(SeedWorkload.Kind.GET) + counts.get(SeedWorkload.Kind.GET_HOT)) / (double) N;
    double scans = counts.get(SeedWorkload.Kind.SCAN) / (double) N;
    double writes =
        (counts.get(SeedWorkload.Kind.OVERWRITE)
                + counts.get(SeedWorkload.Kind.INSERT)
                + counts.get(SeedWorkload.Kind.DELETE))
            / (double) N;
    assertThat(reads).isCloseTo(0.80, within(0.005));
    assertThat(scans).isCloseTo(0.15, within(0.005));
    assertThat(writes).isCloseTo(0.05, within(0.002));
    assertThat(deletesOutsideHot).isZero();
    assertThat(counts.get(SeedWorkload.Kind.DELETE) / (double) N)
        .isCloseTo(0.05 * 0.25, within(0.001));
  }

  @Test
  void valueSizesHaveTheSeedsLongTail() {
    SplittableRandom rnd = new SplittableRandom(3);
    int atLeast8k = 0;
    int atLeast32k = 0;
    long sum = 0;
    for (int i = 0; i < N; i++) {
      int s = ValueSizes.next(rnd);
      assertThat(s).isBetween(200, 64 << 10);
      sum += s;
      atLeast8k += s >= (8 << 10) ? 1 : 0;
      atLeast32k += s >= (32 << 10) ? 1 : 0;
    }
    assertThat(atLeast8k / (double) N).isCloseTo(0.10, within(0.005));
    assertThat(atLeast32k / (double) N).isCloseTo(0.02, within(0.002));
    System.out.printf("mean value size %.0f bytes%n", sum / (double) N);
  }

  @Test
  void zipfianRanksAreSkewedAsTheory() {
    Zipfian z = new Zipfian(1_000_000, 0.99);
    SplittableRandom rnd = new SplittableRandom(5);
    long top = 0;
    long rank0 = 0;
    for (int i = 0; i < N; i++) {
      long r = z.next(rnd);
      assertThat(r).isBetween(0L, 999_999L);
      top += r < 10_000 ? 1 : 0;
      rank0 += r == 0 ? 1 : 0;
    }
    // Theory for theta 0.99 over 1M ranks: P(rank 0) = 1 / H(1M, 0.99) ~ 0.0665, P(top 1%) ~ 0.68.
    double h = 0;
    for (int k = 1; k <= 1_000_000; k++) {
      h += Math.pow(k, -0.99);
    }
    double hTop = 0;
    for (int k = 1; k <= 10_000; k++) {
      hTop += Math.pow(k, -0.99);
    }
    assertThat(rank0 / (double) N).isCloseTo(1 / h, within(0.003));
    assertThat(top / (double) N).isCloseTo(hTop / h, within(0.005));
  }

  @Test
  void theStreamIsTheSameForTheSameSeed() {
    SeedWorkload a = new SeedWorkload(50_000, 11);
    SeedWorkload b = new SeedWorkload(50_000, 11);
    for (int i = 0; i < 10_000; i++) {
      assertThat(a.next()).isEqualTo(b.next());
    }
  }
}
