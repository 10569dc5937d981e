package io.shale.engine.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

/** Varints and fixed-width integers: what is written reads back, and short input is refused. */
class VarintsProperties {
  @Property
  void aSequenceOfVarintsReadsBack(@ForAll List<@LongRange(min = 0) Long> values) {
    ByteSink sink = new ByteSink(4);
    int expectedLength = 0;
    for (long v : values) {
      sink.putVarint(v);
      expectedLength += Varints.varintLength(v);
    }
    byte[] b = sink.toByteArray();
    assertThat(b).hasSize(expectedLength);
    Varints.Cursor c = new Varints.Cursor(b, 0, b.length);
    for (long v : values) {
      assertThat(Varints.readVarint64(c)).isEqualTo(v);
    }
    assertThat(c.hasRemaining()).isFalse();
  }

  @Property
  void aVarintTakesOneByteFor7BitsOfValue(@ForAll @LongRange(min = 0) long v) {
    int bits = 64 - Long.numberOfLeadingZeros(v);
    assertThat(Varints.varintLength(v)).isEqualTo(Math.max(1, (bits + 6) / 7));
  }

  @Property
  void aTruncatedVarintIsAnErrorNeverAValue(@ForAll @LongRange(min = 128) long v) {
    byte[] b = new ByteSink(10).putVarint(v).toByteArray();
    byte[] cut = Arrays.copyOf(b, b.length - 1);
    assertThatThrownBy(() -> Varints.readVarint64(new Varints.Cursor(cut, 0, cut.length)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("truncated varint");
  }

  @Property
  void fixedWidthIntegersReadBackAtAnyOffset(
      @ForAll long v64, @ForAll int v32, @ForAll @IntRange(min = 0, max = 8) int offset) {
    byte[] b = new byte[offset + 12];
    Varints.writeFixed64(b, offset, v64);
    Varints.writeFixed32(b, offset + 8, v32);
    assertThat(Varints.readFixed64(b, offset)).isEqualTo(v64);
    assertThat(Varints.readFixed32(b, offset + 8)).isEqualTo(v32);
  }

  @Property
  void varint32RefusesValuesBeyondAnInt(@ForAll @LongRange(min = 1L << 31) long v) {
    byte[] b = new ByteSink(10).putVarint(v).toByteArray();
    assertThatThrownBy(() -> Varints.readVarint32(new Varints.Cursor(b, 0, b.length)))
        .hasMessageContaining("out of range");
  }
}
