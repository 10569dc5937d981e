package io.shale.engine.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Read advice finds the descriptors open on a file, and only those, and advises them. */
class ReadAdviceTest {
  @TempDir Path dir;

  @Test
  void theDescriptorsOpenOnAFileAreFoundAndAdvised() throws IOException {
    assumeTrue(ReadAdvice.available(), "posix_fadvise through /proc/self/fd is Linux-only");
    Path file = Files.write(dir.resolve("000001.sst"), new byte[4096]);
    Path other = Files.write(dir.resolve("000002.sst"), new byte[4096]);
    assertThat(ReadAdvice.descriptorsOf(file)).isEmpty();
    try (FileChannel a = FileChannel.open(file, StandardOpenOption.READ);
        FileChannel unused = FileChannel.open(file, StandardOpenOption.READ);
        FileChannel alsoUnused = FileChannel.open(other, StandardOpenOption.READ)) {
      assertThat(ReadAdvice.descriptorsOf(file)).hasSize(2);
      assertThat(ReadAdvice.descriptorsOf(other)).hasSize(1);
      assertThat(ReadAdvice.adviseRandom(file)).isEqualTo(2);
      assertThat(a.read(java.nio.ByteBuffer.allocate(16), 100)).isEqualTo(16); // still readable
    }
    assertThat(ReadAdvice.descriptorsOf(file)).isEmpty();
    assertThat(ReadAdvice.adviseRandom(dir.resolve("absent.sst"))).isZero();
  }
}
