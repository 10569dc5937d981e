package io.shale.engine.concurrent;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Thread factories for the server's background threads. Every thread is a daemon (a stuck
 * background job never keeps a JVM from exiting) and carries a name that says what it does, so a
 * thread dump reads as a list of jobs.
 */
public final class DaemonThreads {
  private DaemonThreads() {}

  /** A factory whose threads are all named {@code name} (for single-thread executors). */
  public static ThreadFactory named(String name) {
    return r -> newThread(r, name);
  }

  /** A factory whose threads are named {@code prefix-1}, {@code prefix-2}, ... */
  public static ThreadFactory numbered(String prefix) {
    AtomicInteger next = new AtomicInteger();
    return r -> newThread(r, prefix + "-" + next.incrementAndGet());
  }

  /** A new, not yet started daemon thread running {@code r}. */
  public static Thread newThread(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }
}
