package io.shale.ops.ycsb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.Map;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.Size;

/** The record codec: what is encoded decodes to the same fields; truncations are refused. */
class YcsbRecordTest {
  @Property(tries = 300)
  void roundTrips(@ForAll @Size(max = 12) Map<String, byte[]> fields) {
    Map<String, byte[]> in = new LinkedHashMap<>(fields);
    Map<String, byte[]> out = YcsbRecord.decode(YcsbRecord.encode(in));
    assertThat(out.keySet()).containsExactlyElementsOf(in.keySet());
    in.forEach((k, v) -> assertThat(out.get(k)).isEqualTo(v));
  }

  @Property(tries = 300)
  void aTruncatedRecordIsRefused(@ForAll @Size(min = 1, max = 6) Map<String, byte[]> fields) {
    byte[] full = YcsbRecord.encode(new LinkedHashMap<>(fields));
    byte[] cut = java.util.Arrays.copyOf(full, full.length - 1);
    assertThatThrownBy(() -> YcsbRecord.decode(cut)).isInstanceOf(IllegalArgumentException.class);
  }
}
