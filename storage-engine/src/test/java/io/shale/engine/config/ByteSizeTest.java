package io.shale.engine.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class ByteSizeTest {
  private static final String KEY = "lsm.memtable_size";

  @ParameterizedTest
  @CsvSource({
    "0, 0",
    "4096, 4096",
    "512B, 512",
    "64KiB, 65536",
    "64MiB, 67108864",
    "64 MiB, 67108864",
    "'  64MiB ', 67108864",
    "1.5GiB, 1610612736",
    "2TiB, 2199023255552",
    "0.5KiB, 512",
    // Rounded down to a whole byte: 1.0001 KiB is 1024.1024 bytes.
    "1.0001KiB, 1024",
    "9223372036854775807, 9223372036854775807",
  })
  void parsesSizes(String text, long bytes) {
    assertThat(ByteSize.parse(KEY, text)).isEqualTo(bytes);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        "   ",
        "-1",
        "-1MiB",
        "12 parsecs",
        "64MB",
        "64mib",
        "64 KB",
        "1.5.2GiB",
        ".5GiB",
        "1.GiB",
        "+5",
        "64MiB extra",
        "MiB",
        "1e6"
      })
  void rejectsWhatIsNotASize(String text) {
    assertThatThrownBy(() -> ByteSize.parse(KEY, text))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(KEY + ": cannot parse \"" + text + "\" as a size");
  }

  @Test
  void errorNamesTheKeyAndGivesExamples() {
    assertThatThrownBy(() -> ByteSize.parse(KEY, "12 parsecs"))
        .hasMessage(
            "lsm.memtable_size: cannot parse \"12 parsecs\" as a size"
                + " (examples: 4096, 64KiB, 64MiB, 1.5GiB)");
  }

  @Test
  void rejectsNull() {
    assertThatThrownBy(() -> ByteSize.parse(KEY, null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(KEY + ": cannot parse null");
  }

  @ParameterizedTest
  @ValueSource(strings = {"9223372036854775808", "8388608TiB", "99999999999999999999999999GiB"})
  void rejectsOverflow(String text) {
    assertThatThrownBy(() -> ByteSize.parse(KEY, text))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(KEY)
        .hasMessageContaining("too large");
  }

  @ParameterizedTest
  @CsvSource({
    "0, 0B",
    "1, 1B",
    "1000, 1000B",
    "4097, 4097B",
    "4096, 4KiB",
    "67108864, 64MiB",
    "1610612736, 1.5GiB",
    "1342177280, 1.25GiB",
    "1073741825, 1073741825B",
    "2199023255552, 2TiB",
    "-67108864, -64MiB",
  })
  void formats(long bytes, String text) {
    assertThat(ByteSize.format(bytes)).isEqualTo(text);
  }

  @Test
  void formatRoundTripsThroughParse() {
    Random random = new Random(42);
    for (int i = 0; i < 10_000; i++) {
      // Mostly multiples of a power of two, which are the values that get a unit.
      long bytes = (random.nextLong() >>> 1) >>> random.nextInt(63) << random.nextInt(40);
      bytes = Math.max(bytes, 0);
      assertThat(ByteSize.parse(KEY, ByteSize.format(bytes))).as("%d", bytes).isEqualTo(bytes);
    }
    assertThat(ByteSize.parse(KEY, ByteSize.format(Long.MAX_VALUE))).isEqualTo(Long.MAX_VALUE);
  }
}
