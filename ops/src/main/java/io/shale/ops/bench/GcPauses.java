package io.shale.ops.bench;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;

/**
 * Stop-the-world time of this JVM's garbage collectors, the figure behind every benchmark's "GC
 * time" row. Concurrent collectors also publish beans for their concurrent cycles (ZGC's "ZGC Minor
 * Cycles" and "ZGC Major Cycles", Shenandoah's "Shenandoah Cycles"), whose time runs beside the
 * application and is not a pause: summing every bean charged ZGC seconds of its background work as
 * pauses. G1's beans are all pauses ("G1 Concurrent GC" counts the Remark and Cleanup pauses of a
 * concurrent cycle, checked against {@code -Xlog:gc} on JDK 25).
 */
public final class GcPauses {
  private GcPauses() {}

  /** Milliseconds the application was stopped for collections so far. */
  public static long millisSoFar() {
    long sum = 0;
    for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans()) {
      if (isPauseBean(b.getName())) {
        sum += Math.max(0, b.getCollectionTime());
      }
    }
    return sum;
  }

  /** False for the beans that time concurrent cycles rather than pauses. */
  static boolean isPauseBean(String name) {
    return !name.endsWith(" Cycles");
  }
}
