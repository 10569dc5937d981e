package io.shale.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.AbstractStub;
import io.grpc.stub.MetadataUtils;
import io.shale.client.proto.AddMemberRequest;
import io.shale.client.proto.AuthGrpc;
import io.shale.client.proto.AuthenticateRequest;
import io.shale.client.proto.ClusterGrpc;
import io.shale.client.proto.GetRequest;
import io.shale.client.proto.KVGrpc;
import io.shale.client.proto.Member;
import io.shale.client.proto.Permission;
import io.shale.client.proto.PutRequest;
import io.shale.client.proto.RoleAddRequest;
import io.shale.client.proto.RolePermissionRequest;
import io.shale.client.proto.ScanRequest;
import io.shale.client.proto.StatusRequest;
import io.shale.client.proto.UserAddRequest;
import io.shale.client.proto.UserChangePasswordRequest;
import io.shale.client.proto.UserDeleteRequest;
import io.shale.client.proto.UserRoleRequest;
import io.shale.client.proto.WhoAmIRequest;
import io.shale.node.local.LocalCluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import javax.net.ssl.SSLException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Users, roles and their permissions on a cluster with TLS, through the public API: each boundary
 * refused with the status a client can act on, tokens from Authenticate accepted by every node, a
 * change taking effect at once, and users and roles surviving a restart.
 */
class AuthTest {
  @TempDir Path dir;

  private LocalCluster cluster;
  private final ApiChannels rootChannels = new ApiChannels();
  private final List<ManagedChannel> open = new ArrayList<>();

  @AfterEach
  void stop() throws IOException {
    rootChannels.close();
    open.forEach(ManagedChannel::shutdownNow);
    if (cluster != null) {
      cluster.close();
    }
  }

  private static ByteString s(String v) {
    return ByteString.copyFromUtf8(v);
  }

  /** A TLS channel to {@code node} that presents no certificate (callers use tokens). */
  private ManagedChannel anonymous(String node) {
    ManagedChannel ch;
    try {
      ch =
          NettyChannelBuilder.forTarget(cluster.peer(node).apiAddress())
              .sslContext(
                  GrpcSslContexts.forClient()
                      .trustManager(cluster.tlsFiles(node).caFile().toFile())
                      .build())
              .build();
    } catch (SSLException e) {
      throw new IllegalStateException(e);
    }
    open.add(ch);
    return ch;
  }

  private static <T extends AbstractStub<T>> T bearer(T stub, String token) {
    Metadata md = new Metadata();
    md.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
    return stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md))
        .withDeadlineAfter(20, TimeUnit.SECONDS);
  }

  private String token(String node, String user, String password) {
    return AuthGrpc.newBlockingStub(anonymous(node))
        .withDeadlineAfter(20, TimeUnit.SECONDS)
        .authenticate(AuthenticateRequest.newBuilder().setName(user).setPassword(password).build())
        .getToken();
  }

  private static void assertStatus(Status.Code code, String containing, Supplier<?> call) {
    assertThatThrownBy(call::get)
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).as(e.getStatus().toString()).isEqualTo(code);
              assertThat(e.getStatus().getDescription()).contains(containing);
            });
  }

  private static Permission permission(Permission.Type type, String start, String end) {
    return Permission.newBuilder().setType(type).setStart(s(start)).setEnd(s(end)).build();
  }

  @Test
  void everyPermissionBoundaryHoldsAndChangesTakeEffectAtOnce() throws Exception {
    cluster = LocalCluster.withPeerTls(dir, 3);
    String leader = cluster.leader();
    String follower = cluster.running().stream().filter(n -> !n.equals(leader)).findFirst().get();
    AuthGrpc.AuthBlockingStub root =
        AuthGrpc.newBlockingStub(rootChannels.to(cluster, leader))
            .withDeadlineAfter(30, TimeUnit.SECONDS);
    root.roleAdd(RoleAddRequest.newBuilder().setName("app-reader").build());
    root.roleGrantPermission(
        RolePermissionRequest.newBuilder()
            .setRole("app-reader")
            .setPermission(permission(Permission.Type.READ, "app/", "app0"))
            .build());
    root.roleAdd(RoleAddRequest.newBuilder().setName("app-writer").build());
    root.roleGrantPermission(
        RolePermissionRequest.newBuilder()
            .setRole("app-writer")
            .setPermission(permission(Permission.Type.READWRITE, "app/", "app0"))
            .build());
    root.userAdd(UserAddRequest.newBuilder().setName("bob").setPassword("bob-secret").build());
    root.userGrantRole(UserRoleRequest.newBuilder().setName("bob").setRole("app-reader").build());
    root.userAdd(UserAddRequest.newBuilder().setName("carol").setPassword("carol-secret").build());
    root.userGrantRole(UserRoleRequest.newBuilder().setName("carol").setRole("app-writer").build());

    // A token from one node works on another: the key that signs them is replicated.
    String bob = token(leader, "bob", "bob-secret");
    KVGrpc.KVBlockingStub bobKv = bearer(KVGrpc.newBlockingStub(anonymous(leader)), bob);
    assertThat(bobKv.get(GetRequest.newBuilder().setKey(s("app/x")).build()).getFound()).isFalse();
    bobKv.scan(ScanRequest.newBuilder().setStart(s("app/")).setEnd(s("app0")).build());
    assertStatus(
        Status.Code.PERMISSION_DENIED,
        "bob may not write key \"app/x\"",
        () -> bobKv.put(PutRequest.newBuilder().setKey(s("app/x")).setValue(s("1")).build()));
    assertStatus(
        Status.Code.PERMISSION_DENIED,
        "bob may not read key \"other\"",
        () -> bobKv.get(GetRequest.newBuilder().setKey(s("other")).build()));
    assertStatus(
        Status.Code.PERMISSION_DENIED,
        "bob may not read [\"\", end)",
        () -> bobKv.scan(ScanRequest.getDefaultInstance()));
    assertThat(
            bearer(AuthGrpc.newBlockingStub(anonymous(follower)), bob)
                .whoAmI(WhoAmIRequest.getDefaultInstance()))
        .satisfies(
            w -> {
              assertThat(w.getUser()).isEqualTo("bob");
              assertThat(w.getAuthenticatedBy()).isEqualTo("token");
              assertThat(w.getPermissionsList())
                  .containsExactly(permission(Permission.Type.READ, "app/", "app0"));
            });

    String carol = token(follower, "carol", "carol-secret");
    KVGrpc.KVBlockingStub carolKv = bearer(KVGrpc.newBlockingStub(anonymous(follower)), carol);
    carolKv.put(PutRequest.newBuilder().setKey(s("app/x")).setValue(s("1")).build());
    ClusterGrpc.ClusterBlockingStub carolCluster =
        bearer(ClusterGrpc.newBlockingStub(anonymous(follower)), carol);
    assertThat(carolCluster.status(StatusRequest.getDefaultInstance()).getNodesCount())
        .isEqualTo(3);
    assertStatus(
        Status.Code.PERMISSION_DENIED,
        "it needs ADMIN",
        () ->
            carolCluster.addMember(
                AddMemberRequest.newBuilder()
                    .setMember(
                        Member.newBuilder()
                            .setId("n9")
                            .setRaftAddress("127.0.0.1:1")
                            .setApiAddress("127.0.0.1:2"))
                    .build()));
    AuthGrpc.AuthBlockingStub carolAuth =
        bearer(AuthGrpc.newBlockingStub(anonymous(follower)), carol);
    assertStatus(
        Status.Code.PERMISSION_DENIED,
        "it needs ADMIN",
        () -> carolAuth.userAdd(UserAddRequest.newBuilder().setName("mallory").build()));
    assertStatus(
        Status.Code.PERMISSION_DENIED,
        "carol may change only its own password",
        () ->
            carolAuth.userChangePassword(
                UserChangePasswordRequest.newBuilder().setName("bob").setPassword("x").build()));
    carolAuth.userChangePassword(
        UserChangePasswordRequest.newBuilder().setName("carol").setPassword("new-secret").build());
    assertStatus(
        Status.Code.UNAUTHENTICATED,
        "wrong user name or password",
        () -> token(follower, "carol", "carol-secret"));
    token(follower, "carol", "new-secret");

    // Bad credentials.
    assertStatus(
        Status.Code.UNAUTHENTICATED,
        "not valid or has expired",
        () ->
            bearer(KVGrpc.newBlockingStub(anonymous(leader)), bob.substring(0, bob.length() - 2))
                .get(GetRequest.newBuilder().setKey(s("app/x")).build()));
    assertStatus(
        Status.Code.UNAUTHENTICATED,
        "no credentials",
        () ->
            KVGrpc.newBlockingStub(anonymous(leader))
                .get(GetRequest.newBuilder().setKey(s("app/x")).build()));

    // Revoked on the leader: refused there at once; a deleted user's token is refused too.
    root.userRevokeRole(UserRoleRequest.newBuilder().setName("bob").setRole("app-reader").build());
    assertStatus(
        Status.Code.PERMISSION_DENIED,
        "bob may not read",
        () -> bobKv.get(GetRequest.newBuilder().setKey(s("app/x")).build()));
    root.userDelete(UserDeleteRequest.newBuilder().setName("bob").build());
    assertStatus(
        Status.Code.UNAUTHENTICATED,
        "there is no user bob",
        () -> bobKv.get(GetRequest.newBuilder().setKey(s("app/x")).build()));

    // Refused changes name their reason.
    assertStatus(
        Status.Code.FAILED_PRECONDITION,
        "the user root cannot be deleted",
        () -> root.userDelete(UserDeleteRequest.newBuilder().setName("root").build()));
    assertStatus(
        Status.Code.INVALID_ARGUMENT,
        "user name",
        () -> root.userAdd(UserAddRequest.newBuilder().setName("no spaces").build()));

    // The audit trail of each node: who did what, with the outcome, never a password.
    String leaderAudit =
        Files.readString(cluster.config(leader).dataDir().resolve("audit").resolve("audit.jsonl"));
    String followerAudit =
        Files.readString(
            cluster.config(follower).dataDir().resolve("audit").resolve("audit.jsonl"));
    assertThat(leaderAudit.lines())
        .anySatisfy(
            l ->
                assertThat(l)
                    .contains("\"user\":\"root\",\"authenticated_by\":\"certificate\"")
                    .contains("\"method\":\"shale.v1.Auth/UserAdd\"")
                    .contains("name: \\\"bob\\\"")
                    .contains("\"outcome\":\"OK\""))
        .anySatisfy(
            l ->
                assertThat(l)
                    .contains("\"user\":\"bob\",\"authenticated_by\":\"token\"")
                    .contains("\"method\":\"shale.v1.KV/Put\"")
                    .contains("\"outcome\":\"PERMISSION_DENIED\""));
    assertThat(followerAudit.lines())
        .anySatisfy(
            l ->
                assertThat(l)
                    .contains("\"method\":\"shale.v1.Auth/Authenticate\"")
                    .contains("\"outcome\":\"UNAUTHENTICATED\""))
        .anySatisfy(
            l ->
                assertThat(l)
                    .contains("\"user\":\"carol\"")
                    .contains("\"method\":\"shale.v1.Cluster/AddMember\"")
                    .contains("\"outcome\":\"PERMISSION_DENIED\""));
    for (String secret : List.of("bob-secret", "carol-secret", "new-secret")) {
      assertThat(leaderAudit + followerAudit).doesNotContain(secret);
    }

    // Users and roles survive a restart of the node that answers.
    cluster.stop(follower);
    cluster.start(follower);
    String again = token(follower, "carol", "new-secret");
    assertThat(
            bearer(KVGrpc.newBlockingStub(anonymous(follower)), again)
                .get(GetRequest.newBuilder().setKey(s("app/x")).build())
                .getValue())
        .isEqualTo(s("1"));
  }
}
