package io.shale.client.recipes;

import io.shale.client.Entry;
import io.shale.client.ShaleClient;
import io.shale.client.ShaleException;
import io.shale.client.Watch;
import io.shale.client.WatchEvent;
import io.shale.client.WatchListener;
import io.shale.client.WatchOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.concurrent.TimeoutException;

/**
 * A local copy of every key under a prefix, kept current by a watch (a Kubernetes informer's list
 * then watch): reads are local and never reach the cluster. It reflects the cluster as of {@link
 * #index()}, and changes only forward.
 *
 * <p>How it starts consistent without a snapshot scan: it notes an index {@code I0} (an empty
 * transaction), watches from {@code I0 + 1}, scans the prefix (whose pages may see any later
 * state), notes an index {@code I1}, and replays every watched change in order over the scan. Each
 * change sets a key to its value at that index, so once the changes through {@code I1} are replayed
 * the copy equals the cluster at {@code I1} whatever the scan saw; it is served from then on. A
 * watch that fails for good (its index left every node's history) starts it over the same way.
 *
 * <p>Thread-safe.
 */
public final class WatchCache implements AutoCloseable {
  private final ShaleClient client;
  private final String prefix;
  private final Object lock = new Object();

  /** The copy being built or served; replaced whole when the cache starts over. */
  private NavigableMap<String, Entry> entries = new TreeMap<>();

  /** Changes seen through this index. */
  private long through;

  /** The copy is served once {@link #through} reaches this. */
  private long readyAt = Long.MAX_VALUE;

  private Watch watch;
  private boolean closed;
  private ShaleException failure;

  private WatchCache(ShaleClient client, String prefix) {
    this.client = client;
    this.prefix = prefix;
  }

  /** A cache of the keys under {@code prefix}, ready (consistent) when this returns. */
  public static WatchCache open(ShaleClient client, String prefix, Duration timeout)
      throws TimeoutException, InterruptedException {
    WatchCache c = new WatchCache(client, prefix);
    c.start();
    c.awaitIndex(0, timeout);
    return c;
  }

  private void start() {
    long i0 = client.txn().commit().index();
    synchronized (lock) {
      entries = new TreeMap<>();
      through = i0;
      readyAt = Long.MAX_VALUE;
    }
    Watch w = client.watch(WatchOptions.prefix(prefix).startIndex(i0 + 1), new Changes());
    NavigableMap<String, Entry> scanned = new TreeMap<>();
    for (Entry e : client.scanPrefix(prefix)) {
      scanned.put(e.keyUtf8(), e);
    }
    long i1 = client.txn().commit().index();
    synchronized (lock) {
      // Changes replayed so far (through some index) went into an empty map: apply the scan
      // beneath them, so each key ends with its newest known value.
      scanned.putAll(entries);
      for (String deleted : deletedSinceStart) {
        scanned.remove(deleted);
      }
      deletedSinceStart.clear();
      entries = scanned;
      scanning = false;
      readyAt = i1;
      watch = w;
      lock.notifyAll();
    }
  }

  /** Keys deleted by changes replayed while the scan ran (the scan may still show them). */
  private final List<String> deletedSinceStart = new ArrayList<>();

  private boolean scanning = true;

  private final class Changes implements WatchListener {
    @Override
    public void onEvents(List<WatchEvent> events, long throughIndex) {
      synchronized (lock) {
        for (WatchEvent e : events) {
          String key = e.entry().keyUtf8();
          if (e.type() == WatchEvent.Type.DELETE) {
            entries.remove(key);
            if (scanning) {
              deletedSinceStart.add(key);
            }
          } else {
            entries.put(key, e.entry());
            if (scanning) {
              deletedSinceStart.remove(key);
            }
          }
        }
        through = Math.max(through, throughIndex);
        lock.notifyAll();
      }
    }

    @Override
    public void onError(ShaleException e) {
      synchronized (lock) {
        if (closed) {
          return;
        }
        failure = e;
        lock.notifyAll();
      }
    }
  }

  /**
   * Waits until the copy is consistent and reflects every change through {@code index} (an index a
   * write of this client returned: read your writes); a failed watch starts the cache over.
   */
  public void awaitIndex(long index, Duration timeout)
      throws TimeoutException, InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      boolean restart = false;
      synchronized (lock) {
        if (closed) {
          throw new IllegalStateException("the cache is closed");
        }
        if (failure != null) {
          failure = null;
          scanning = true;
          restart = true;
        } else if (through >= readyAt && through >= index) {
          return;
        } else {
          long left = deadline - System.nanoTime();
          if (left <= 0) {
            throw new TimeoutException(
                "the cache of " + prefix + " is through " + through + ", not " + index);
          }
          lock.wait(Math.max(1, left / 1_000_000));
        }
      }
      if (restart) {
        Watch old = watch;
        if (old != null) {
          old.close();
        }
        start();
      }
    }
  }

  /** The entry under {@code key} as of {@link #index()}, or null if absent. */
  public Entry get(String key) {
    synchronized (lock) {
      return entries.get(key);
    }
  }

  /** Every entry, in key order, as of {@link #index()}. */
  public List<Entry> entries() {
    synchronized (lock) {
      return new ArrayList<>(entries.values());
    }
  }

  /** The index the copy is complete through. */
  public long index() {
    synchronized (lock) {
      return through;
    }
  }

  @Override
  public void close() {
    Watch w;
    synchronized (lock) {
      closed = true;
      w = watch;
      lock.notifyAll();
    }
    if (w != null) {
      w.close();
    }
  }
}
