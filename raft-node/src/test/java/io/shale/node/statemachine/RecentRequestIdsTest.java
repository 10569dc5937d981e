package io.shale.node.statemachine;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.shale.engine.Engine;
import io.shale.engine.EngineOptions;
import io.shale.engine.WriteBatch;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RecentRequestIdsTest {
  @TempDir Path dir;

  private static byte[] id(int n) {
    return ("request-" + n).getBytes(UTF_8);
  }

  @Test
  void beforeLoadingEveryIdMayBeHeld() {
    RecentRequestIds recent = new RecentRequestIds();
    assertThat(recent.mayHold(id(1), 10)).isTrue();
  }

  @Test
  void loadedFromTheEngineRecordsWithinTheRetention() throws Exception {
    try (Engine e = Engine.open(dir, EngineOptions.defaults())) {
      WriteBatch b = new WriteBatch();
      RequestRecords.record(b, id(1), 5, new byte[32], new byte[] {1});
      RequestRecords.record(b, id(2), 6, new byte[32], new byte[] {1});
      e.applyCommitted(b, 6);
      RecentRequestIds recent = new RecentRequestIds();
      recent.load(e, 6);
      assertThat(recent.mayHold(id(1), 7)).isTrue();
      assertThat(recent.mayHold(id(2), 7)).isTrue();
      int falsePositives = 0;
      for (int n = 100; n < 10_100; n++) {
        falsePositives += recent.mayHold(id(n), 7) ? 1 : 0;
      }
      assertThat(falsePositives).as("of 10,000 ids never recorded").isLessThan(100);
      // Past the retention the records cannot answer a retry: the filters forget them too.
      long late = 6 + RequestRecords.RETAIN_ENTRIES + 1;
      assertThat(recent.mayHold(id(1), late)).isFalse();
      assertThat(recent.segments()).isZero();
    }
  }

  @Test
  void everyIdAddedIsHeldAcrossSegments() {
    RecentRequestIds recent = new RecentRequestIds(1 << 12, 4);
    try (Engine e = Engine.open(dir, EngineOptions.defaults())) {
      recent.load(e, 0);
    } catch (Exception ex) {
      throw new AssertionError(ex);
    }
    int n = (1 << 12) + 10;
    for (int i = 0; i < n; i++) {
      recent.add(id(i), 1 + i / 100);
    }
    assertThat(recent.segments()).isEqualTo(2);
    for (int i : List.of(0, 1, (1 << 12) - 1, n - 1)) {
      assertThat(recent.mayHold(id(i), 1_000)).as("id %d", i).isTrue();
    }
  }

  @Test
  void droppingSegmentsForTheMemoryBoundMakesThoseIndexesUnknown() throws Exception {
    int perSegment = 1 << 12;
    RecentRequestIds recent = new RecentRequestIds(perSegment, 4);
    try (Engine e = Engine.open(dir, EngineOptions.defaults())) {
      recent.load(e, 0);
    }
    long index = 1;
    for (int s = 0; s <= 4; s++) {
      for (int i = 0; i < perSegment; i++) {
        recent.add(new byte[] {(byte) s, (byte) (i >> 16), (byte) (i >> 8), (byte) i}, index);
      }
      index++;
    }
    assertThat(recent.segments()).isEqualTo(4);
    // The dropped segment's ids could still have records: every id must be looked up.
    assertThat(recent.mayHold(id(123_456_789), index)).isTrue();
    assertThat(recent.mayHold(id(123_456_789), 1 + RequestRecords.RETAIN_ENTRIES)).isTrue();
    // Once the retention has passed the dropped segment (index 1), lookups can be skipped again.
    assertThat(recent.mayHold(id(123_456_789), 2 + RequestRecords.RETAIN_ENTRIES)).isFalse();
  }
}
