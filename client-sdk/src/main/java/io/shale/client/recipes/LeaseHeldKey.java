package io.shale.client.recipes;

import io.shale.client.Entry;
import io.shale.client.ShaleClient;
import io.shale.client.ShaleException;
import io.shale.client.Txn;
import io.shale.client.TxnResult;
import io.shale.client.Watch;
import io.shale.client.WatchEvent;
import io.shale.client.WatchListener;
import io.shale.client.WatchOptions;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One key that at most one session holds at a time: created with a transaction that succeeds only
 * if the key does not exist, put with the session's lease (so it goes when the holder's lease
 * does), and waited for by watching its deletion. The holder's token is the key's create index:
 * every later holder's is larger, so a write fenced with a compare on it ({@code ifCreateIndex(key,
 * EQUAL, token)}) can never land after the key changed hands. What {@link Lock} and {@link
 * Election} share.
 */
final class LeaseHeldKey {
  private final Session session;
  private final byte[] key;

  LeaseHeldKey(Session session, String key) {
    this.session = session;
    this.key = key.getBytes(StandardCharsets.UTF_8);
  }

  byte[] key() {
    return key;
  }

  /**
   * Tries once to take the key, with {@code value}: its create index (the token) if this session
   * took it, else -1 and {@code holder[0]} set to what holds it now (null: it was deleted
   * meanwhile).
   */
  long tryTake(byte[] value, Entry[] holder) {
    ShaleClient client = session.client();
    TxnResult r =
        client
            .txn()
            .ifCreateIndex(key, Txn.Cmp.EQUAL, 0)
            .thenPut(key, value, session.leaseId())
            .thenGet(key)
            .elseGet(key)
            .commit();
    if (r.succeeded()) {
      return r.entry(1).createIndex();
    }
    holder[0] = r.entry(0);
    return -1;
  }

  /**
   * Takes the key with {@code value}, waiting for each holder to let go, within {@code timeout};
   * returns the token.
   */
  long take(byte[] value, Duration timeout) throws TimeoutException, InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    Entry[] holder = new Entry[1];
    while (true) {
      if (!session.alive()) {
        throw new IllegalStateException("the session's lease is lost: open a new session");
      }
      long token = tryTake(value, holder);
      if (token > 0) {
        return token;
      }
      if (holder[0] != null) {
        awaitDeletion(holder[0].modIndex() + 1, deadline);
      }
    }
  }

  /** Waits until the key is deleted at or after {@code fromIndex}, or the deadline passes. */
  private void awaitDeletion(long fromIndex, long deadlineNanos)
      throws TimeoutException, InterruptedException {
    CompletableFuture<Void> deleted = new CompletableFuture<>();
    WatchListener listener =
        new WatchListener() {
          @Override
          public void onEvents(List<WatchEvent> events, long throughIndex) {
            for (WatchEvent e : events) {
              if (e.type() == WatchEvent.Type.DELETE) {
                deleted.complete(null);
              }
            }
          }

          @Override
          public void onError(ShaleException e) {
            // Try again from the top: the next attempt reads the key afresh.
            deleted.complete(null);
          }
        };
    try (Watch w = session.client().watch(WatchOptions.key(key).startIndex(fromIndex), listener)) {
      long left = deadlineNanos - System.nanoTime();
      if (left <= 0) {
        throw new TimeoutException("the key is still held");
      }
      deleted.get(left, TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      throw new IllegalStateException(e.getCause());
    }
  }

  /** Deletes the key if it is still the one taken with {@code token}; says whether it was. */
  boolean release(long token) {
    return session
        .client()
        .txn()
        .ifCreateIndex(key, Txn.Cmp.EQUAL, token)
        .thenDelete(key)
        .commit()
        .succeeded();
  }

  /** Sets the key's value if it is still the one taken with {@code token}. */
  boolean replace(long token, byte[] value) {
    return session
        .client()
        .txn()
        .ifCreateIndex(key, Txn.Cmp.EQUAL, token)
        .thenPut(key, value, session.leaseId())
        .commit()
        .succeeded();
  }
}
