package io.shale.client;

import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The client's channels, one per configured endpoint, opened at build and shared by every call, and
 * which endpoint calls go to first: the leader when the client knows it (a node forwards to the
 * leader anyway; going there directly saves a hop), else the next endpoint after one that failed.
 *
 * <p>Only configured endpoints are used: an address the cluster reports for its leader (as the
 * nodes see it) may not be reachable from the client (containers, NAT), so it is only preferred
 * when it is one of the endpoints the user gave.
 */
final class Endpoints implements AutoCloseable {
  private final List<String> addresses;
  private final List<ManagedChannel> channels;
  private volatile int preferred;

  /** When each endpoint last failed (nanoTime), 0 if never. */
  private final long[] failedAt;

  /**
   * A failed endpoint is not preferred again this soon, even if a node still names it leader:
   * followers name the old leader until their election timeout passes.
   */
  private static final long FAILED_RECENTLY_NANOS = 3_000_000_000L;

  Endpoints(List<String> addresses, Function<String, ManagedChannel> open) {
    this.addresses = List.copyOf(addresses);
    this.channels = this.addresses.stream().map(open).toList();
    this.failedAt = new long[this.addresses.size()];
  }

  List<String> addresses() {
    return addresses;
  }

  /** The endpoint the next call should try. */
  int preferred() {
    return preferred;
  }

  /**
   * The next endpoint in turn that has not failed recently (any, if all have): where reads go, so
   * that they spread over every node.
   */
  int nextHealthy() {
    int n = channels.size();
    int start = Math.floorMod(turn.getAndIncrement(), n);
    long now = System.nanoTime();
    for (int k = 0; k < n; k++) {
      int i = (start + k) % n;
      if (failedAt[i] == 0 || now - failedAt[i] > FAILED_RECENTLY_NANOS) {
        return i;
      }
    }
    return start;
  }

  private final java.util.concurrent.atomic.AtomicInteger turn =
      new java.util.concurrent.atomic.AtomicInteger();

  /**
   * The channel to {@code endpoint}, told to reconnect now if its last attempt to connect failed.
   * gRPC otherwise fails every call on it at once until its own reconnect backoff ends, which grows
   * to minutes over a long outage, though the node may be back: the client's retry policy, not the
   * channel's backoff, paces attempts.
   */
  ManagedChannel channel(int endpoint) {
    ManagedChannel c = channels.get(endpoint);
    if (c.getState(false) == ConnectivityState.TRANSIENT_FAILURE) {
      c.resetConnectBackoff();
    }
    return c;
  }

  String address(int endpoint) {
    return addresses.get(endpoint);
  }

  /** The endpoint at {@code endpoint} failed: later calls start at the next one. */
  void failed(int endpoint) {
    failedAt[endpoint] = System.nanoTime();
    if (preferred == endpoint) {
      preferred = (endpoint + 1) % channels.size();
    }
  }

  /**
   * The node at {@code endpoint} answered but cannot help (it knows no leader): the next call
   * starts at the next endpoint. Not a failure: it may be preferred again at once.
   */
  void passOver(int endpoint) {
    if (preferred == endpoint) {
      preferred = (endpoint + 1) % channels.size();
    }
  }

  /** The leader serves at {@code apiAddress}: prefer it if it is a configured endpoint. */
  void leaderAt(String apiAddress) {
    int i = addresses.indexOf(apiAddress);
    if (i >= 0 && (failedAt[i] == 0 || System.nanoTime() - failedAt[i] > FAILED_RECENTLY_NANOS)) {
      preferred = i;
    }
  }

  @Override
  public void close() {
    channels.forEach(ManagedChannel::shutdownNow);
    for (ManagedChannel c : channels) {
      try {
        c.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }
}
