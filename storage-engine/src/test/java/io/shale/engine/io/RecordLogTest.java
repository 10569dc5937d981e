package io.shale.engine.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A torn last record is an unfinished write; a damaged length or payload is corruption. */
class RecordLogTest {
  private static final long MAGIC = 0x1122334455667788L;
  @TempDir Path dir;

  private Path logWithThreeRecords() throws IOException {
    Path f = dir.resolve("log");
    try (RecordLog.Writer w = RecordLog.Writer.create(f, MAGIC, 1)) {
      w.append(new byte[] {1, 2, 3});
      w.append(new byte[100]);
      w.append(new byte[] {9});
    }
    return f;
  }

  @Test
  void readsBackEveryRecord() throws IOException {
    RecordLog.Contents c = RecordLog.read(logWithThreeRecords(), MAGIC, 1);
    assertThat(c.records()).hasSize(3);
    assertThat(c.records().get(0)).containsExactly(1, 2, 3);
    assertThat(c.tornTailAt()).isEqualTo(-1);
  }

  @Test
  void aTruncatedLastRecordIsATornTailNotCorruption() throws IOException {
    Path f = logWithThreeRecords();
    long size = Files.size(f);
    for (long cut = 1; cut <= 12; cut++) {
      Path copy = dir.resolve("cut-" + cut);
      Files.write(copy, java.util.Arrays.copyOf(Files.readAllBytes(f), (int) (size - cut)));
      RecordLog.Contents c = RecordLog.read(copy, MAGIC, 1);
      assertThat(c.records()).as("cut %d", cut).hasSize(2);
      assertThat(c.tornTailAt()).isEqualTo(RecordLog.HEADER_SIZE + 12 + 3 + 12 + 100);
    }
  }

  @Test
  void aFlippedLengthIsCorruptionEvenInTheLastRecord() throws IOException {
    Path f = logWithThreeRecords();
    long lastRecord = RecordLog.HEADER_SIZE + 12 + 3 + 12 + 100;
    try (RandomAccessFile r = new RandomAccessFile(f.toFile(), "rw")) {
      r.seek(lastRecord);
      r.write(0x7f); // claims a long record that would otherwise look torn
    }
    assertThatThrownBy(() -> RecordLog.read(f, MAGIC, 1))
        .isInstanceOf(CorruptionException.class)
        .hasMessageContaining("offset " + lastRecord)
        .hasMessageContaining("length");
  }

  @Test
  void aZeroFilledTailIsATornTail() throws IOException {
    Path f = logWithThreeRecords();
    java.nio.file.Files.write(f, new byte[100], java.nio.file.StandardOpenOption.APPEND);
    RecordLog.Contents c = RecordLog.read(f, MAGIC, 1);
    assertThat(c.records()).hasSize(3);
    assertThat(c.tornTailAt()).isPositive();
  }

  /**
   * On a real full disk (a 64 KiB tmpfs): a failed append is cut off, later appends are refused
   * even once space is free again, and the log reads back without corruption.
   */
  @Test
  void afterAFailedAppendTheLogRefusesMoreAndStaysReadable() throws Exception {
    Path mnt = dir.resolve("tiny-disk");
    java.nio.file.Files.createDirectories(mnt);
    Process p =
        new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt.toString())
            .redirectErrorStream(true)
            .start();
    p.getInputStream().readAllBytes();
    org.junit.jupiter.api.Assumptions.assumeTrue(
        p.waitFor() == 0,
        "cannot mount a tmpfs here (needs root): the failed-append test did not run");
    try {
      Path log = mnt.resolve("log");
      Path filler = mnt.resolve("filler");
      java.nio.file.Files.write(filler, new byte[16 << 10]);
      int appended = 0;
      IOException failure = null;
      try (RecordLog.Writer w = RecordLog.Writer.create(log, MAGIC, 1)) {
        try {
          for (int i = 0; i < 1000; i++) {
            w.append(new byte[3000]);
            appended++;
          }
        } catch (IOException e) {
          failure = e;
        }
        assertThat(failure).as("the disk filled up").isNotNull();
        java.nio.file.Files.delete(filler); // space again, but the writer must not resume
        assertThatThrownBy(() -> w.append(new byte[10]))
            .isInstanceOf(IOException.class)
            .hasMessageContaining("refuses appends");
      }
      RecordLog.Contents c = RecordLog.read(log, MAGIC, 1);
      assertThat(c.records()).hasSize(appended);
    } finally {
      new ProcessBuilder("umount", mnt.toString()).start().waitFor();
    }
  }

  @Test
  void wrongMagicOrVersionIsReported() throws IOException {
    Path f = logWithThreeRecords();
    assertThatThrownBy(() -> RecordLog.read(f, MAGIC + 1, 1)).hasMessageContaining("magic");
    assertThatThrownBy(() -> RecordLog.read(f, MAGIC, 2)).hasMessageContaining("version 1");
  }
}
