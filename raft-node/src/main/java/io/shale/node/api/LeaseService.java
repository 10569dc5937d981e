package io.shale.node.api;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.shale.client.proto.LeaseGrantRequest;
import io.shale.client.proto.LeaseGrantResponse;
import io.shale.client.proto.LeaseGrpc;
import io.shale.client.proto.LeaseKeepAliveRequest;
import io.shale.client.proto.LeaseKeepAliveResponse;
import io.shale.client.proto.LeaseListRequest;
import io.shale.client.proto.LeaseListResponse;
import io.shale.client.proto.LeaseRevokeRequest;
import io.shale.client.proto.LeaseRevokeResponse;
import io.shale.client.proto.LeaseStatus;
import io.shale.client.proto.LeaseTimeToLiveRequest;
import io.shale.client.proto.LeaseTimeToLiveResponse;
import io.shale.client.proto.ResponseHeader;
import io.shale.node.auth.ApiGuard;
import io.shale.node.auth.AuthState;
import io.shale.node.auth.Grants;
import io.shale.node.statemachine.Command;
import io.shale.node.statemachine.Query;
import io.shale.node.statemachine.Reply;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;
import org.apache.ratis.server.RaftServer;

/**
 * The Lease API of one node. Grants, revokes and keep-alives are log entries (a keep-alive changes
 * nothing but restarts the lease's TTL on the leader when applied), so any node takes them; the
 * time a lease has left is asked of the leader, the only node that counts it.
 */
public final class LeaseService extends LeaseGrpc.LeaseImplBase {
  /** Leases one List call returns unless it asks for fewer. */
  static final int DEFAULT_LIST_LIMIT = 1_000;

  private final RaftServer.Division division;
  private final WritePath writes;
  private final RaftSubmitter submitter;
  private final CallRunner calls;
  private final Duration minTtl;
  private final Duration maxTtl;
  private final Supplier<AuthState> auth;

  LeaseService(
      RaftServer.Division division,
      WritePath writes,
      RaftSubmitter submitter,
      CallRunner calls,
      Duration minTtl,
      Duration maxTtl,
      Supplier<AuthState> auth) {
    this.division = division;
    this.writes = writes;
    this.submitter = submitter;
    this.calls = calls;
    this.minTtl = minTtl;
    this.maxTtl = maxTtl;
    this.auth = auth;
  }

  private ResponseHeader header(long appliedIndex) {
    return ResponseHeaders.of(division, appliedIndex);
  }

  @Override
  public void grant(LeaseGrantRequest req, StreamObserver<LeaseGrantResponse> out) {
    calls.serveAsync(
        out,
        req,
        "lease grant",
        true,
        () -> {
          long ttl = req.getTtlMs();
          if (ttl < minTtl.toMillis() || ttl > maxTtl.toMillis()) {
            throw new IllegalArgumentException(
                "a lease TTL of "
                    + ttl
                    + " ms is outside lease.min_ttl "
                    + minTtl.toMillis()
                    + " ms to lease.max_ttl "
                    + maxTtl.toMillis()
                    + " ms");
          }
          return writes
              .writeAsync(req.getRequestId(), new Command.LeaseGrant(ttl))
              .thenApply(
                  r -> {
                    Reply.LeaseResult l = (Reply.LeaseResult) r;
                    return LeaseGrantResponse.newBuilder()
                        .setHeader(header(l.appliedIndex()))
                        .setId(l.id())
                        .setTtlMs(l.ttlMillis())
                        .build();
                  });
        });
  }

  @Override
  public void revoke(LeaseRevokeRequest req, StreamObserver<LeaseRevokeResponse> out) {
    calls.serveAsync(
        out,
        req,
        "lease revoke",
        true,
        () -> {
          long id = positive(req.getId());
          byte[] requestId =
              req.getRequestId().isEmpty()
                  ? WritePath.newRequestId()
                  : req.getRequestId().toByteArray();
          return mayRevoke(id)
              .thenCompose(ok -> revokeAll(requestId, id, 0, 0))
              .thenApply(
                  r ->
                      LeaseRevokeResponse.newBuilder()
                          .setHeader(header(r.appliedIndex()))
                          .setDeleted(r.deleted())
                          .build());
        });
  }

  /**
   * Revoke entries until the lease's keys are all deleted; the {@code k}-th under an id derived
   * from the call's, so a retried call retries the same entries. The result sums their deletions.
   */
  private CompletableFuture<Reply.LeaseResult> revokeAll(
      byte[] requestId, long id, int k, long deletedBefore) {
    return writes
        .writeAsync(WritePath.chunkId(requestId, k), new Command.LeaseRevoke(id))
        .thenCompose(
            r -> {
              Reply.LeaseResult l = (Reply.LeaseResult) r;
              long deleted = deletedBefore + l.deleted();
              if (l.more()) {
                return revokeAll(requestId, id, k + 1, deleted);
              }
              return CompletableFuture.completedFuture(
                  new Reply.LeaseResult(
                      l.appliedIndex(), l.outcome(), id, l.ttlMillis(), deleted, false));
            });
  }

  /**
   * A caller without ADMIN may revoke a lease only if it may write every key attached to it (a
   * revoke deletes them); the check reads the lease's keys first.
   */
  private CompletableFuture<Void> mayRevoke(long id) {
    ApiGuard.Caller caller = ApiGuard.CALLER.get();
    if (caller == null) {
      return CompletableFuture.completedFuture(null);
    }
    Grants grants = auth.get().grants(caller.user());
    if (grants != null && grants.admin()) {
      return CompletableFuture.completedFuture(null);
    }
    return submitter
        .readAsync(new Query.Lease(id, Query.MAX_LEASE_PAGE), false)
        .thenAccept(
            r -> {
              Reply.LeaseInfo info = (Reply.LeaseInfo) r;
              Grants now = auth.get().grants(caller.user());
              String denied = null;
              if (now == null) {
                denied = "there is no user " + caller.user();
              } else if (info.moreKeys()) {
                denied =
                    "revoking a lease of more than " + Query.MAX_LEASE_PAGE + " keys needs ADMIN";
              } else {
                for (byte[] key : info.keys()) {
                  if (!now.mayWrite(key, Grants.after(key))) {
                    denied =
                        caller.user()
                            + " may not revoke lease "
                            + id
                            + ": it may not write one of its keys";
                    break;
                  }
                }
              }
              if (denied != null) {
                throw new CompletionException(
                    Status.PERMISSION_DENIED.withDescription(denied).asException());
              }
            });
  }

  /**
   * Revokes lease {@code id} with one entry, for the leader's expiry clock (which sends another if
   * keys remain, and again if this fails).
   */
  public CompletableFuture<?> revokeExpired(long id) {
    return writes.writeAsync(WritePath.newRequestId(), new Command.LeaseRevoke(id));
  }

  /**
   * Keep-alives are answered one at a time, in order: the next request is read once the previous
   * one's answer left, so a client cannot pile up entries faster than they apply.
   */
  @Override
  public StreamObserver<LeaseKeepAliveRequest> keepAlive(
      StreamObserver<LeaseKeepAliveResponse> responses) {
    ServerCallStreamObserver<LeaseKeepAliveResponse> out =
        (ServerCallStreamObserver<LeaseKeepAliveResponse>) responses;
    out.disableAutoRequest();
    out.request(1);
    KeepAliveStream stream =
        new KeepAliveStream() {
          private final Object lock = new Object();
          private boolean done;

          @Override
          public void stop() {
            fail(
                Status.UNAVAILABLE
                    .withDescription(
                        "node " + division.getId() + " is stopping; keep alive elsewhere")
                    .asException());
          }

          @Override
          public void onNext(LeaseKeepAliveRequest req) {
            long id;
            try {
              id = positive(req.getId());
            } catch (IllegalArgumentException bad) {
              fail(Status.INVALID_ARGUMENT.withDescription(bad.getMessage()).asException());
              return;
            }
            // Not identified and not held back by write pressure: renewing is idempotent, and a
            // lease must not expire because the engines are busy.
            submitter
                .writeAsync(new Command.LeaseKeepAlive(id))
                .whenComplete(
                    (r, e) -> {
                      if (e != null) {
                        fail(calls.failure(e));
                        return;
                      }
                      Reply.LeaseResult l = (Reply.LeaseResult) r;
                      synchronized (lock) {
                        if (done) {
                          return;
                        }
                        out.onNext(
                            LeaseKeepAliveResponse.newBuilder()
                                .setHeader(header(l.appliedIndex()))
                                .setId(id)
                                .setFound(l.outcome() == Reply.LeaseOutcome.ALIVE)
                                .setTtlMs(l.ttlMillis())
                                .build());
                      }
                      out.request(1);
                    });
          }

          private void fail(Throwable t) {
            synchronized (lock) {
              if (!done) {
                done = true;
                out.onError(t);
              }
            }
            keepAlives.remove(this);
          }

          @Override
          public void onError(Throwable t) {
            synchronized (lock) {
              done = true;
            }
            keepAlives.remove(this);
          }

          @Override
          public void onCompleted() {
            synchronized (lock) {
              if (!done) {
                done = true;
                out.onCompleted();
              }
            }
            keepAlives.remove(this);
          }
        };
    keepAlives.add(stream);
    return stream;
  }

  /** An open keep-alive stream, which the node ends when it stops. */
  private interface KeepAliveStream extends StreamObserver<LeaseKeepAliveRequest> {
    void stop();
  }

  private final java.util.Set<KeepAliveStream> keepAlives =
      java.util.concurrent.ConcurrentHashMap.newKeySet();

  /** Ends every open keep-alive stream (UNAVAILABLE): their clients go on with another node. */
  public void close() {
    for (KeepAliveStream s : keepAlives) {
      s.stop();
    }
  }

  @Override
  public void timeToLive(LeaseTimeToLiveRequest req, StreamObserver<LeaseTimeToLiveResponse> out) {
    calls.serveAsync(
        out,
        req,
        "read",
        false,
        () ->
            submitter
                .readOnLeaderAsync(
                    new Query.Lease(
                        positive(req.getId()), req.getKeys() ? Query.MAX_LEASE_PAGE : 0))
                .thenApply(
                    r -> {
                      Reply.LeaseInfo i = (Reply.LeaseInfo) r;
                      LeaseTimeToLiveResponse.Builder b =
                          LeaseTimeToLiveResponse.newBuilder()
                              .setHeader(header(i.appliedIndex()))
                              .setId(i.id())
                              .setFound(i.grantedTtlMillis() >= 0);
                      if (i.grantedTtlMillis() >= 0) {
                        b.setGrantedTtlMs(i.grantedTtlMillis())
                            .setRemainingMs(
                                i.remainingMillis() >= 0
                                    ? i.remainingMillis()
                                    : i.grantedTtlMillis())
                            .setMoreKeys(i.moreKeys());
                        for (byte[] k : i.keys()) {
                          b.addKeys(ByteString.copyFrom(k));
                        }
                      }
                      return b.build();
                    }));
  }

  @Override
  public void list(LeaseListRequest req, StreamObserver<LeaseListResponse> out) {
    calls.serveAsync(
        out,
        req,
        "read",
        false,
        () -> {
          int limit = req.getLimit() == 0 ? DEFAULT_LIST_LIMIT : req.getLimit();
          if (limit > Query.MAX_LEASE_PAGE) {
            throw new RequestLimits.LimitExceeded(
                io.shale.client.ErrorTrailers.SCAN_LIMIT_TOO_LARGE,
                "a lease list returns at most " + Query.MAX_LEASE_PAGE + " leases, not " + limit);
          }
          return submitter
              .readAsync(new Query.Leases(Math.max(0, req.getAfterId()), limit), false)
              .thenApply(
                  r -> {
                    Reply.LeaseList l = (Reply.LeaseList) r;
                    LeaseListResponse.Builder b =
                        LeaseListResponse.newBuilder()
                            .setHeader(header(l.appliedIndex()))
                            .setMore(l.more());
                    for (long[] lease : l.leases()) {
                      b.addLeases(
                          LeaseStatus.newBuilder().setId(lease[0]).setGrantedTtlMs(lease[1]));
                    }
                    return b.build();
                  });
        });
  }

  private static long positive(long id) {
    if (id <= 0) {
      throw new IllegalArgumentException("lease id must be positive, got " + id);
    }
    return id;
  }
}
