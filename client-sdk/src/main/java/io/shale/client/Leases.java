package io.shale.client;

import com.google.protobuf.ByteString;
import io.shale.client.proto.LeaseGrantRequest;
import io.shale.client.proto.LeaseGrpc;
import io.shale.client.proto.LeaseListRequest;
import io.shale.client.proto.LeaseListResponse;
import io.shale.client.proto.LeaseRevokeRequest;
import io.shale.client.proto.LeaseStatus;
import io.shale.client.proto.LeaseTimeToLiveRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Leases (etcd's Lease client): grant, revoke, time to live, list, and {@link #keepAlive}, which
 * keeps a lease alive until closed. Obtained from {@link ShaleClient#leases()}; thread-safe.
 *
 * <p>Expiry is decided by the cluster's leader on its own clock; a failover restarts every lease's
 * TTL, so a lease never expires early because of one. Grants and revokes carry request ids like
 * every write, so a retried grant creates one lease.
 */
public final class Leases {
  private final RetryingCall.Settings settings;
  private final Consumer<AutoCloseable> opened;

  Leases(RetryingCall.Settings settings, Consumer<AutoCloseable> opened) {
    this.settings = settings;
    this.opened = opened;
  }

  private static LeaseGrpc.LeaseFutureStub stub(io.grpc.Channel ch, long timeoutMillis) {
    return LeaseGrpc.newFutureStub(ch).withDeadlineAfter(timeoutMillis, TimeUnit.MILLISECONDS);
  }

  /** Grants a lease of {@code ttl} (within the nodes' lease.min_ttl and lease.max_ttl). */
  public CompletableFuture<Lease> grantAsync(Duration ttl) {
    LeaseGrantRequest req =
        LeaseGrantRequest.newBuilder()
            .setTtlMs(ttl.toMillis())
            .setRequestId(ShaleClient.requestId())
            .build();
    return RetryingCall.start(settings, "lease grant", (ch, t) -> stub(ch, t).grant(req))
        .thenApply(r -> new Lease(r.getId(), Duration.ofMillis(r.getTtlMs())));
  }

  public Lease grant(Duration ttl) {
    return ShaleClient.join(grantAsync(ttl));
  }

  /**
   * Revokes lease {@code id} and deletes its keys; completes with how many it deleted, or fails
   * with {@link LeaseNotFoundException} if it does not live.
   */
  public CompletableFuture<Long> revokeAsync(long id) {
    LeaseRevokeRequest req =
        LeaseRevokeRequest.newBuilder().setId(id).setRequestId(ShaleClient.requestId()).build();
    return RetryingCall.start(settings, "lease revoke", (ch, t) -> stub(ch, t).revoke(req))
        .thenApply(r -> r.getDeleted());
  }

  public long revoke(long id) {
    return ShaleClient.join(revokeAsync(id));
  }

  /**
   * Lease {@code id} as the leader sees it, with up to 10,000 of its keys if {@code withKeys};
   * fails with {@link LeaseNotFoundException} if it does not live.
   */
  public CompletableFuture<LeaseTimeToLive> timeToLiveAsync(long id, boolean withKeys) {
    LeaseTimeToLiveRequest req =
        LeaseTimeToLiveRequest.newBuilder().setId(id).setKeys(withKeys).build();
    return RetryingCall.start(settings, "lease ttl", (ch, t) -> stub(ch, t).timeToLive(req))
        .thenApply(
            r -> {
              if (!r.getFound()) {
                throw new java.util.concurrent.CompletionException(
                    new LeaseNotFoundException(
                        "lease " + id + " does not live (never granted, revoked or expired)",
                        null));
              }
              List<byte[]> keys = new ArrayList<>(r.getKeysCount());
              for (ByteString k : r.getKeysList()) {
                keys.add(k.toByteArray());
              }
              return new LeaseTimeToLive(
                  id,
                  Duration.ofMillis(r.getGrantedTtlMs()),
                  Duration.ofMillis(r.getRemainingMs()),
                  keys,
                  r.getMoreKeys());
            });
  }

  public LeaseTimeToLive timeToLive(long id, boolean withKeys) {
    return ShaleClient.join(timeToLiveAsync(id, withKeys));
  }

  /** Every live lease, in id order (read page by page). */
  public CompletableFuture<List<Lease>> listAsync() {
    return listFrom(0, new ArrayList<>());
  }

  private CompletableFuture<List<Lease>> listFrom(long after, List<Lease> acc) {
    LeaseListRequest req = LeaseListRequest.newBuilder().setAfterId(after).build();
    return RetryingCall.start(settings, "lease list", (ch, t) -> stub(ch, t).list(req))
        .thenCompose(
            (LeaseListResponse r) -> {
              long last = after;
              for (LeaseStatus s : r.getLeasesList()) {
                acc.add(new Lease(s.getId(), Duration.ofMillis(s.getGrantedTtlMs())));
                last = s.getId();
              }
              return r.getMore() && last > after
                  ? listFrom(last, acc)
                  : CompletableFuture.completedFuture(acc);
            });
  }

  public List<Lease> list() {
    return ShaleClient.join(listAsync());
  }

  /**
   * Keeps {@code lease} alive until the returned keeper is closed: a keep-alive every third of its
   * TTL over a stream, moving to another node when one fails. {@link LeaseKeeper#lost()} completes
   * if the lease is gone (the cluster says so) or may be gone (no keep-alive got through for a
   * whole TTL); the keeper then stops.
   */
  public LeaseKeeper keepAlive(Lease lease) {
    LeaseKeeper k = new LeaseKeeper(settings, lease);
    opened.accept(k);
    k.start();
    return k;
  }
}
