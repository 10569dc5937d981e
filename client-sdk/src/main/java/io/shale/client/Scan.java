package io.shale.client;

import com.google.protobuf.ByteString;
import io.shale.client.proto.KVGrpc;
import io.shale.client.proto.KeyValue;
import io.shale.client.proto.ScanRequest;
import io.shale.client.proto.ScanResponse;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * A range scan, set up fluently and then iterated: {@code client.scan("a", "b").limit(10)
 * .reverse()}. Pages of {@link #pageSize} entries are fetched as the iteration reaches them (each
 * page one call, retried like any other); each iteration runs the scan anew.
 *
 * <p>Each page is read at its own instant, so a scan of many pages is not one snapshot: a key
 * written behind the scan's position is not seen, one ahead of it is. Not thread-safe while being
 * configured; its iterators are independent.
 */
public final class Scan implements Iterable<Entry> {
  private final RetryingCall.Settings settings;
  private final byte[] start;
  private final byte[] end;
  private ReadConsistency consistency;
  private long limit;
  private boolean reverse;
  private boolean keysOnly;
  private int pageSize = 1000;

  Scan(RetryingCall.Settings settings, byte[] start, byte[] end, ReadConsistency consistency) {
    if (end != null && Arrays.compareUnsigned(start, end) >= 0) {
      throw new IllegalArgumentException("scan range is empty: end must be after start");
    }
    this.settings = settings;
    this.start = start;
    this.end = end;
    this.consistency = consistency;
  }

  /** At most {@code n} entries in all (default: every key in the range). */
  public Scan limit(long n) {
    if (n < 1) {
      throw new IllegalArgumentException("limit must be at least 1, got " + n);
    }
    this.limit = n;
    return this;
  }

  /** From the last key of the range down to the first. */
  public Scan reverse() {
    this.reverse = true;
    return this;
  }

  /** Keys only: values come back empty, and pages are small whatever the values' sizes. */
  public Scan keysOnly() {
    this.keysOnly = true;
    return this;
  }

  /** Entries fetched per call (default 1000). */
  public Scan pageSize(int n) {
    if (n < 1) {
      throw new IllegalArgumentException("pageSize must be at least 1, got " + n);
    }
    this.pageSize = n;
    return this;
  }

  /** The consistency of each page's read (default: the client's). */
  public Scan consistency(ReadConsistency c) {
    this.consistency = c;
    return this;
  }

  @Override
  public Iterator<Entry> iterator() {
    return new Pages(this);
  }

  /** The entries as a sequential stream, fetched as the stream is consumed. */
  public Stream<Entry> stream() {
    return StreamSupport.stream(
        Spliterators.spliteratorUnknownSize(iterator(), Spliterator.ORDERED | Spliterator.NONNULL),
        false);
  }

  /** Every entry, fetched page after page without blocking the caller. */
  public CompletableFuture<List<Entry>> toListAsync() {
    Pages pages = new Pages(this);
    List<Entry> all = new ArrayList<>();
    return pages.collect(all);
  }

  /** Where the scan stands between pages; one per iteration. */
  private static final class Pages implements Iterator<Entry> {
    private final Scan scan;
    private byte[] from;
    private byte[] to;
    private long remaining;
    private Iterator<KeyValue> page = List.<KeyValue>of().iterator();
    private boolean more = true;

    Pages(Scan scan) {
      this.scan = scan;
      this.from = scan.start;
      this.to = scan.end;
      this.remaining = scan.limit == 0 ? Long.MAX_VALUE : scan.limit;
    }

    private CompletableFuture<ScanResponse> fetch() {
      ScanRequest.Builder b =
          ScanRequest.newBuilder()
              .setStart(ByteString.copyFrom(from))
              .setLimit((int) Math.min(scan.pageSize, remaining))
              .setReverse(scan.reverse)
              .setKeysOnly(scan.keysOnly)
              .setConsistency(ShaleClient.wire(scan.consistency));
      if (to != null) {
        b.setEnd(ByteString.copyFrom(to));
      }
      ScanRequest req = b.build();
      return RetryingCall.startRead(
          scan.settings,
          "scan",
          (ch, t) ->
              KVGrpc.newFutureStub(ch).withDeadlineAfter(t, TimeUnit.MILLISECONDS).scan(req));
    }

    /** Takes a page in, moving the range past its last key. */
    private void accept(ScanResponse r) {
      int n = r.getEntriesCount();
      remaining -= n;
      more = r.getMore() && remaining > 0 && n > 0;
      page = r.getEntriesList().iterator();
      if (n > 0) {
        byte[] last = r.getEntries(n - 1).getKey().toByteArray();
        if (scan.reverse) {
          to = last; // the end is exclusive
        } else {
          from = Arrays.copyOf(last, last.length + 1); // the smallest key after `last`
        }
      }
    }

    @Override
    public boolean hasNext() {
      while (!page.hasNext() && more) {
        accept(ShaleClient.join(fetch()));
      }
      return page.hasNext();
    }

    @Override
    public Entry next() {
      if (!hasNext()) {
        throw new NoSuchElementException();
      }
      KeyValue kv = page.next();
      return new Entry(kv.getKey().toByteArray(), kv.getValue().toByteArray(), 0);
    }

    CompletableFuture<List<Entry>> collect(List<Entry> into) {
      while (page.hasNext()) {
        into.add(next());
      }
      if (!more) {
        return CompletableFuture.completedFuture(into);
      }
      return fetch()
          .thenCompose(
              r -> {
                accept(r);
                return collect(into);
              });
    }
  }
}
