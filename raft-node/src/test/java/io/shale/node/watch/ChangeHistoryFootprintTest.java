package io.shale.node.watch;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.withinPercentage;

import io.shale.node.statemachine.KeyChange;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.openjdk.jol.info.GraphLayout;
import org.openjdk.jol.vm.VM;

/**
 * What the change history counts against its budget is what it takes on the heap, as JOL measures
 * it by walking the object graph, for small and large changes alike.
 */
class ChangeHistoryFootprintTest {
  /** The heap bytes {@code root} and everything it reaches take. */
  private static long heap(Object root) {
    return GraphLayout.parseInstance(root).totalSize();
  }

  /** Key {@code n} of 11 bytes, with a value of 2 to 8 bytes, created by entry {@code index}. */
  private static KeyChange small(long index, int n) {
    byte[] key = String.format("key%08d", n).getBytes(UTF_8);
    return new KeyChange(key, new byte[2 + n % 7], index, 1);
  }

  /** A 64 KiB value replacing one of 64 KiB. */
  private static KeyChange large(long index, int n) {
    byte[] key = ("large/" + n).getBytes(UTF_8);
    byte[] value = new byte[64 << 10];
    Arrays.fill(value, (byte) n);
    return new KeyChange(
        key, value, 3, 2 + n, new KeyChange.Previous(new byte[64 << 10], index - 1, 3, 1 + n));
  }

  private static List<KeyChange> smalls(long index, int first, int count) {
    List<KeyChange> changes = new ArrayList<>(count);
    for (int n = first; n < first + count; n++) {
      changes.add(small(index, n));
    }
    return changes;
  }

  @Test
  void theConstantsAreThoseOfThisJvm() {
    assertThat(VM.current().arrayHeaderSize()).isEqualTo(ChangeHistory.ARRAY_HEADER_BYTES);
    assertThat(VM.current().sizeOfField("object")).isEqualTo(ChangeHistory.REFERENCE_BYTES);
    assertThat(VM.current().objectAlignment()).isEqualTo(ChangeHistory.OBJECT_ALIGNMENT);
  }

  @Test
  void retainedBytesIsWhatTheHeldChangesTake() {
    ChangeHistory h = new ChangeHistory(Long.MAX_VALUE);
    h.restartAfter(0);
    long empty = heap(h);
    long index = 0;
    int n = 0;
    for (; n < 100_000; n++) {
      index++;
      h.applied(index, List.of(small(index, n)));
    }
    assertThat(h.retainedBytes()).isCloseTo(heap(h) - empty, withinPercentage(10));
    for (int batch = 0; batch < 20; batch++, n += 5_000) {
      index++;
      h.applied(index, smalls(index, n, 5_000));
    }
    assertThat(h.retainedBytes()).isCloseTo(heap(h) - empty, withinPercentage(10));
    for (int i = 0; i < 40; i++) {
      index++;
      h.applied(
          index,
          List.of(large(index, i), new KeyChange(("gone/" + i).getBytes(UTF_8), null, 0, 0)));
    }
    assertThat(h.retainedBytes()).isCloseTo(heap(h) - empty, withinPercentage(10));
  }

  /**
   * The heap per change of an 11-byte key with a 5-byte value: one array and one ring slot per
   * entry of one change, about the encoded change alone in entries of 5,000.
   */
  @Test
  void aSmallChangeTakesLittleMoreThanItsBytes() {
    int changes = 100_000;
    ChangeHistory single = new ChangeHistory(Long.MAX_VALUE);
    single.restartAfter(1_000_000);
    long empty = heap(single);
    for (int n = 0; n < changes; n++) {
      long index = 1_000_001L + n;
      single.applied(index, List.of(fiveByteValue(index, n)));
    }
    double perSingle = (double) (heap(single) - empty) / changes;

    ChangeHistory batched = new ChangeHistory(Long.MAX_VALUE);
    batched.restartAfter(1_000_000);
    for (int b = 0; b < changes / 5_000; b++) {
      long index = 1_000_001L + b;
      List<KeyChange> batch = new ArrayList<>(5_000);
      for (int n = b * 5_000; n < (b + 1) * 5_000; n++) {
        batch.add(fiveByteValue(index, n));
      }
      batched.applied(index, batch);
    }
    double perBatched = (double) (heap(batched) - empty) / changes;

    System.out.printf(
        "heap per change of an 11-byte key and a 5-byte value: %.1f bytes in entries of one"
            + " change, %.1f in entries of 5,000%n",
        perSingle, perBatched);
    assertThat(perSingle).isLessThanOrEqualTo(56);
    assertThat(perBatched).isLessThanOrEqualTo(22);
  }

  private static KeyChange fiveByteValue(long index, int n) {
    return new KeyChange(String.format("key%08d", n).getBytes(UTF_8), new byte[5], index, 1);
  }

  /**
   * Whatever mix of changes goes through a history, the heap it takes stays within its budget, plus
   * its own fields, plus the newest entry when that alone is larger.
   */
  @Test
  void theHeapItTakesStaysWithinItsBudget() {
    long budget = 4 << 20;
    ChangeHistory h = new ChangeHistory(budget);
    h.restartAfter(0);
    long fixed = heap(h); // its fields and empty ring
    long index = 0;
    int n = 0;
    for (int round = 0; round < 3; round++) {
      for (int i = 0; i < 60_000; i++, n++) {
        index++;
        h.applied(index, List.of(small(index, n)));
        if (i % 10_000 == 0) {
          assertThat(heap(h)).isLessThanOrEqualTo(budget + fixed);
        }
      }
      for (int i = 0; i < 10; i++, n += 5_000) {
        index++;
        h.applied(index, smalls(index, n, 5_000));
        assertThat(heap(h)).isLessThanOrEqualTo(budget + fixed);
      }
      for (int i = 0; i < 80; i++) {
        index++;
        h.applied(index, List.of(large(index, i)));
        if (i % 10 == 0) {
          assertThat(heap(h)).isLessThanOrEqualTo(budget + fixed);
        }
      }
      // One entry larger than the whole budget: it alone stays.
      index++;
      List<KeyChange> huge = new ArrayList<>();
      for (int i = 0; i < 40; i++) {
        huge.add(large(index, i));
      }
      long hugeEntry = heap(ChangeCodec.encode(index, huge));
      h.applied(index, huge);
      assertThat(h.oldestIndex()).isEqualTo(index);
      assertThat(heap(h)).isLessThanOrEqualTo(budget + fixed + hugeEntry);
      assertThat(h.read(index, new KeyFilter(new byte[0], null), 1).events()).hasSize(40);
    }
  }
}
