package io.shale.node.transport;

import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * One call of a Shale gRPC service (built against {@code io.grpc}) carried by a call of Ratis's
 * gRPC server (its own shaded copy of gRPC, {@code org.apache.ratis.thirdparty.io.grpc}): messages
 * cross as the bytes of their protobuf encoding, statuses by code and description. Headers and
 * trailers do not cross (the bridged services use none).
 */
final class BridgedServerCall<Q, R> extends ServerCall<Q, R> {
  private final org.apache.ratis.thirdparty.io.grpc.ServerCall<byte[], byte[]> call;
  private final MethodDescriptor<Q, R> method;

  BridgedServerCall(
      org.apache.ratis.thirdparty.io.grpc.ServerCall<byte[], byte[]> call,
      MethodDescriptor<Q, R> method) {
    this.call = call;
    this.method = method;
  }

  Q parseRequest(byte[] bytes) {
    return method.parseRequest(new ByteArrayInputStream(bytes));
  }

  @Override
  public void request(int numMessages) {
    call.request(numMessages);
  }

  @Override
  public void sendHeaders(io.grpc.Metadata headers) {
    call.sendHeaders(new org.apache.ratis.thirdparty.io.grpc.Metadata());
  }

  @Override
  public void sendMessage(R message) {
    try {
      call.sendMessage(method.streamResponse(message).readAllBytes());
    } catch (IOException e) {
      throw new UncheckedIOException("encoding a reply of " + method.getFullMethodName(), e);
    }
  }

  @Override
  public void close(io.grpc.Status status, io.grpc.Metadata trailers) {
    call.close(
        org.apache.ratis.thirdparty.io.grpc.Status.fromCodeValue(status.getCode().value())
            .withDescription(status.getDescription())
            .withCause(status.getCause()),
        new org.apache.ratis.thirdparty.io.grpc.Metadata());
  }

  @Override
  public boolean isCancelled() {
    return call.isCancelled();
  }

  @Override
  public boolean isReady() {
    return call.isReady();
  }

  @Override
  public void setMessageCompression(boolean enabled) {
    call.setMessageCompression(enabled);
  }

  @Override
  public MethodDescriptor<Q, R> getMethodDescriptor() {
    return method;
  }
}
