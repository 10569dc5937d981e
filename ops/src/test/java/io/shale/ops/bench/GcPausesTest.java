package io.shale.ops.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.Map;
import org.junit.jupiter.api.Test;

class GcPausesTest {
  /** Bean names of the JDK 25 collectors and whether their time is a pause. */
  private static final Map<String, Boolean> BEANS =
      Map.of(
          "G1 Young Generation", true,
          "G1 Old Generation", true,
          "G1 Concurrent GC", true,
          "ZGC Minor Cycles", false,
          "ZGC Minor Pauses", true,
          "ZGC Major Cycles", false,
          "ZGC Major Pauses", true,
          "Shenandoah Cycles", false,
          "Shenandoah Pauses", true,
          "PS Scavenge", true);

  @Test
  void onlyCycleBeansAreLeftOut() {
    BEANS.forEach((name, pause) -> assertEquals(pause, GcPauses.isPauseBean(name), name));
  }

  @Test
  void aRequestedCollectionIsCounted() {
    long before = GcPauses.millisSoFar();
    long countBefore = collections();
    System.gc();
    assertTrue(collections() > countBefore, "System.gc() ran no collection this JVM counts");
    assertTrue(GcPauses.millisSoFar() >= before);
  }

  private static long collections() {
    long n = 0;
    for (var b : ManagementFactory.getGarbageCollectorMXBeans()) {
      if (GcPauses.isPauseBean(b.getName())) {
        n += b.getCollectionCount();
      }
    }
    return n;
  }
}
