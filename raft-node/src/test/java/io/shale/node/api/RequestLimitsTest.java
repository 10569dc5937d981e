package io.shale.node.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.shale.client.ErrorTrailers;
import io.shale.client.proto.KeyValue;
import io.shale.client.proto.Op;
import io.shale.node.statemachine.Command;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

class RequestLimitsTest {
  private final RequestLimits limits = new RequestLimits(16, 32);

  @Property
  void keysAreRefusedExactlyWhenOverTheLimit(@ForAll @IntRange(min = 1, max = 40) int size) {
    ByteString key = ByteString.copyFromUtf8("k").concat(ByteString.copyFrom(new byte[size]));
    int total = size + 1;
    if (total <= 16) {
      assertThat(limits.key(key)).hasSize(total);
    } else {
      assertThatThrownBy(() -> limits.key(key))
          .isInstanceOfSatisfying(
              RequestLimits.LimitExceeded.class,
              e -> assertThat(e.error).isEqualTo(ErrorTrailers.KEY_TOO_LARGE))
          .hasMessageContaining(total + " bytes")
          .hasMessageContaining("limits.max_key_size");
    }
  }

  @Property
  void valuesAreRefusedExactlyWhenOverTheLimit(@ForAll @IntRange(min = 0, max = 64) int size) {
    ByteString value = ByteString.copyFrom(new byte[size]);
    if (size <= 32) {
      assertThat(limits.value(value)).hasSize(size);
    } else {
      assertThatThrownBy(() -> limits.value(value))
          .isInstanceOfSatisfying(
              RequestLimits.LimitExceeded.class,
              e -> assertThat(e.error).isEqualTo(ErrorTrailers.VALUE_TOO_LARGE))
          .hasMessageContaining("limits.max_value_size");
    }
  }

  @Test
  void emptyKeyIsRefusedButNotAsASizeLimit() {
    assertThatThrownBy(() -> limits.key(ByteString.EMPTY))
        .isInstanceOf(IllegalArgumentException.class)
        .isNotInstanceOf(RequestLimits.LimitExceeded.class);
  }

  @Test
  void operationsConvertAndCheckBothParts() {
    Command.Op put =
        limits.op(
            Op.newBuilder()
                .setPut(
                    KeyValue.newBuilder()
                        .setKey(ByteString.copyFromUtf8("a"))
                        .setValue(ByteString.copyFromUtf8("v")))
                .build());
    assertThat(put.isDelete()).isFalse();
    assertThat(put.value()).containsExactly('v');
    Command.Op del = limits.op(Op.newBuilder().setDelete(ByteString.copyFromUtf8("a")).build());
    assertThat(del.isDelete()).isTrue();
    assertThatThrownBy(() -> limits.op(Op.getDefaultInstance()))
        .hasMessageContaining("neither put nor delete");
    assertThatThrownBy(
            () ->
                limits.op(
                    Op.newBuilder()
                        .setPut(
                            KeyValue.newBuilder()
                                .setKey(ByteString.copyFromUtf8("a"))
                                .setValue(ByteString.copyFrom(new byte[33])))
                        .build()))
        .isInstanceOf(RequestLimits.LimitExceeded.class);
  }

  @Test
  void rangeEndMustFollowStart() {
    byte[] b = {'b'};
    assertThat(RequestLimits.rangeEnd(b, ByteString.EMPTY)).isNull();
    assertThat(RequestLimits.rangeEnd(b, ByteString.copyFromUtf8("c"))).containsExactly('c');
    assertThatThrownBy(() -> RequestLimits.rangeEnd(b, ByteString.copyFromUtf8("b")))
        .hasMessageContaining("end must be after start");
    assertThatThrownBy(() -> RequestLimits.rangeEnd(b, ByteString.copyFromUtf8("a")))
        .hasMessageContaining("end must be after start");
  }
}
