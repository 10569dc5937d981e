package io.shale.ops.cluster;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * CPU time spent by the servers' processes, by this client process and by the host, read from
 * Linux's /proc around a measured cell, so that a cell reports CPU per operation per process and
 * how idle the host was (a cell whose host had no idle CPU measures the machine, not the system).
 * Elsewhere than Linux the figures are -1.
 */
final class CpuUsage {
  /** Clock ticks per second of /proc's CPU times (USER_HZ): 100 on every Linux this runs on. */
  private static final long TICKS_PER_SECOND = 100;

  /** One reading: each server's CPU time, this process's, and the host's idle and total ticks. */
  record Sample(long[] serverNanos, long clientNanos, long hostIdleTicks, long hostTotalTicks) {}

  /**
   * CPU per 1,000 operations: all servers together, the leader alone, and this client; and the
   * share of the host's CPU that stayed idle, in percent.
   */
  record PerOp(double serversMs, double leaderMs, double clientMs, double hostIdlePercent) {
    static final PerOp UNKNOWN = new PerOp(-1, -1, -1, -1);
  }

  private CpuUsage() {}

  static Sample sample(List<Process> servers) {
    long[] nanos = new long[servers.size()];
    for (int i = 0; i < nanos.length; i++) {
      nanos[i] = processNanos(servers.get(i).pid());
    }
    long client = -1;
    if (ManagementFactory.getOperatingSystemMXBean()
        instanceof com.sun.management.OperatingSystemMXBean os) {
      client = os.getProcessCpuTime();
    }
    long idle = -1;
    long total = -1;
    try {
      // cpu  user nice system idle iowait irq softirq steal ...
      String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
      total = 0;
      for (int i = 1; i < Math.min(f.length, 9); i++) {
        total += Long.parseLong(f[i]);
      }
      idle = Long.parseLong(f[4]) + Long.parseLong(f[5]);
    } catch (IOException | RuntimeException notLinux) {
      // left at -1
    }
    return new Sample(nanos, client, idle, total);
  }

  /** What happened between {@code a} and {@code b}, over {@code ops} operations. */
  static PerOp between(Sample a, Sample b, long ops, int leader) {
    if (ops <= 0 || a.hostTotalTicks() < 0 || b.hostTotalTicks() <= a.hostTotalTicks()) {
      return PerOp.UNKNOWN;
    }
    double perK = 1000.0 / ops / 1e6;
    long servers = 0;
    for (int i = 0; i < a.serverNanos().length; i++) {
      if (a.serverNanos()[i] < 0 || b.serverNanos()[i] < 0) {
        return PerOp.UNKNOWN;
      }
      servers += b.serverNanos()[i] - a.serverNanos()[i];
    }
    double leaderMs = leader < 0 ? -1 : (b.serverNanos()[leader] - a.serverNanos()[leader]) * perK;
    double idle =
        100.0
            * (b.hostIdleTicks() - a.hostIdleTicks())
            / (double) (b.hostTotalTicks() - a.hostTotalTicks());
    return new PerOp(servers * perK, leaderMs, (b.clientNanos() - a.clientNanos()) * perK, idle);
  }

  /** utime + stime of process {@code pid}, in nanoseconds; -1 when it cannot be read. */
  static long processNanos(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
      // pid (comm) state ppid ...: fields after the command name, which may hold spaces.
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]);
      return ticks * (1_000_000_000L / TICKS_PER_SECOND);
    } catch (IOException | RuntimeException notLinux) {
      return -1;
    }
  }
}
