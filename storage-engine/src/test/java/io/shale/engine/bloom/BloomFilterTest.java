package io.shale.engine.bloom;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Measured false-positive rates against theory, and no false negatives. */
class BloomFilterTest {
  private static final int KEYS = 100_000;
  private static final int PROBES = 1_000_000;

  private static byte[] key(String prefix, int i) {
    return (prefix + i).getBytes(StandardCharsets.UTF_8);
  }

  @ParameterizedTest(name = "{0} bits per key")
  @ValueSource(ints = {10, 16, 14, 12})
  void falsePositiveRateIsWithin25PercentOfTheory(int bitsPerKey) {
    long[] hashes = new long[KEYS];
    for (int i = 0; i < KEYS; i++) {
      hashes[i] = KeyHash.hash64(key("member-", i));
    }
    BloomFilter f = BloomFilter.fromBytes(BloomFilter.build(hashes, KEYS, bitsPerKey));
    for (int i = 0; i < KEYS; i++) {
      assertThat(f.mayContain(key("member-", i))).as("false negative for key %d", i).isTrue();
    }
    int falsePositives = 0;
    for (int i = 0; i < PROBES; i++) {
      if (f.mayContain(key("absent-", i))) {
        falsePositives++;
      }
    }
    double measured = (double) falsePositives / PROBES;
    double theory = BloomFilter.theoreticalFalsePositiveRate(bitsPerKey);
    System.out.printf(
        "bloom %d bits/key: measured FPR %.5f%%, theory %.5f%%%n",
        bitsPerKey, measured * 100, theory * 100);
    assertThat(measured).isBetween(theory * 0.75, theory * 1.25);
    assertThat(f.memoryBytes()).isBetween(KEYS * bitsPerKey / 8, KEYS * bitsPerKey / 8 + 16);
  }

  @ParameterizedTest(name = "level {0}")
  @ValueSource(ints = {0, 1, 2, 3, 6})
  void seedPolicyGivesBitsPerLevel(int level) {
    int expected =
        switch (level) {
          case 0 -> 16;
          case 1 -> 14;
          case 2 -> 12;
          default -> 10;
        };
    assertThat(BloomPolicy.DEFAULT.bitsPerKey(level)).isEqualTo(expected);
  }
}
