package io.shale.node.statemachine;

import org.apache.ratis.protocol.Message;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

/** Wraps encoded commands, queries and replies as Ratis messages (one copy of the bytes). */
public final class Messages {
  private Messages() {}

  public static Message of(byte[] bytes) {
    return Message.valueOf(ByteString.copyFrom(bytes));
  }

  public static Message of(Reply reply) {
    return of(Reply.encode(reply));
  }
}
