package io.shale.ops.seed;

import java.util.SplittableRandom;

/**
 * Zipfian ranks in {@code [0, n)} with exponent {@code theta} (YCSB's default 0.99), by the
 * rejection-inversion method of Hörmann and Derflinger, so that no table of n entries is needed.
 * Rank 0 is the most popular; callers scramble ranks into keys so that popular keys are spread over
 * the key space rather than clustered in one table.
 */
public final class Zipfian {
  private final long n;
  private final double theta;
  private final double hIntegralX1;
  private final double hIntegralN;
  private final double s;

  public Zipfian(long n, double theta) {
    if (n < 1 || !(theta > 0) || theta == 1.0) {
      throw new IllegalArgumentException(
          "zipfian needs n >= 1 and theta > 0, != 1; got " + n + ", " + theta);
    }
    this.n = n;
    this.theta = theta;
    this.hIntegralX1 = hIntegral(1.5) - 1;
    this.hIntegralN = hIntegral(n + 0.5);
    this.s = 2 - hIntegralInverse(hIntegral(2.5) - h(2));
  }

  /** A rank in [0, n). */
  public long next(SplittableRandom rnd) {
    while (true) {
      double u = hIntegralN + rnd.nextDouble() * (hIntegralX1 - hIntegralN);
      double x = hIntegralInverse(u);
      long k = (long) (x + 0.5);
      if (k < 1) {
        k = 1;
      } else if (k > n) {
        k = n;
      }
      if (k - x <= s || u >= hIntegral(k + 0.5) - h(k)) {
        return k - 1;
      }
    }
  }

  private double h(double x) {
    return Math.exp(-theta * Math.log(x));
  }

  private double hIntegral(double x) {
    double logX = Math.log(x);
    return helper2((1 - theta) * logX) * logX;
  }

  private double hIntegralInverse(double x) {
    double t = x * (1 - theta);
    if (t < -1) {
      t = -1;
    }
    return Math.exp(helper1(t) * x);
  }

  /** log(1 + x) / x, stable near 0. */
  private static double helper1(double x) {
    return Math.abs(x) > 1e-8 ? Math.log1p(x) / x : 1 - x * (0.5 - x * (1.0 / 3 - 0.25 * x));
  }

  /** (exp(x) - 1) / x, stable near 0. */
  private static double helper2(double x) {
    return Math.abs(x) > 1e-8
        ? Math.expm1(x) / x
        : 1 + x * 0.5 * (1 + x * (1.0 / 3) * (1 + 0.25 * x));
  }
}
