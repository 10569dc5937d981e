package io.shale.engine.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Files opened for random reads are advised through their own descriptor, read what was written,
 * and leave no descriptor behind when their channel closes.
 */
class ReadAdviceTest {
  @TempDir Path dir;

  @Test
  void anAdvisedFileIsReadableAndClosesWithItsChannel() throws IOException {
    assumeTrue(
        Files.isDirectory(Path.of("/proc/self/fd")), "descriptors are listed in /proc/self/fd");
    byte[] data = new byte[8192];
    for (int i = 0; i < data.length; i++) {
      data[i] = (byte) (i * 31);
    }
    Path file = Files.write(dir.resolve("000001.sst"), data);
    long before = ReadAdvice.advised();
    try (FileChannel ch = ReadAdvice.open(file, true)) {
      assertThat(ReadAdvice.descriptorsOf(file)).hasSize(1);
      ByteBuffer b = ByteBuffer.allocate(16);
      assertThat(ch.read(b, 4000)).isEqualTo(16);
      for (int i = 0; i < 16; i++) {
        assertThat(b.get(i)).isEqualTo(data[4000 + i]);
      }
      assertThat(ch.size()).isEqualTo(data.length);
    }
    assertThat(ReadAdvice.descriptorsOf(file)).isEmpty();
    if (ReadAdvice.available()) {
      assertThat(ReadAdvice.advised() - before).isEqualTo(1);
    }
  }

  @Test
  void theBuildAdvisesOnLinux() {
    // Surefire runs with --add-opens java.base/java.io=ALL-UNNAMED, as every launcher does: if
    // advice silently stopped working, reads would quietly go back to the kernel's read-ahead.
    assumeTrue(System.getProperty("os.name").startsWith("Linux"), "posix_fadvise is Linux-only");
    assertThat(ReadAdvice.available()).isTrue();
  }

  @Test
  void withoutAdviceTheFileOpensPlainly() throws IOException {
    Path file = Files.write(dir.resolve("000002.blob"), new byte[100]);
    long before = ReadAdvice.advised();
    try (FileChannel ch = ReadAdvice.open(file, false)) {
      assertThat(ch.size()).isEqualTo(100);
    }
    assertThat(ReadAdvice.advised()).isEqualTo(before);
    assertThatThrownBy(() -> ReadAdvice.open(dir.resolve("absent.sst"), true))
        .isInstanceOf(IOException.class);
  }
}
