package io.shale.engine.io;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Lines carry version, time and a CRC of themselves; files rotate keeping the newest few. */
class JsonLinesFileTest {
  @TempDir Path dir;

  @Test
  void eachLineEndsWithTheCrcOfWhatPrecedesIt() throws Exception {
    try (JsonLinesFile f = new JsonLinesFile(dir.resolve("a.jsonl"), 1 << 20, 2)) {
      f.append(1234, "\"what\":" + JsonLinesFile.quote("say \"hi\"\n"));
    }
    String line = Files.readAllLines(dir.resolve("a.jsonl")).get(0);
    assertThat(line).startsWith("{\"v\":1,\"ts\":1234,\"what\":\"say \\\"hi\\\"\\n\",\"crc\":\"");
    int at = line.lastIndexOf(",\"crc\":\"");
    byte[] head = line.substring(0, at).getBytes(StandardCharsets.UTF_8);
    assertThat(line.substring(at + 8, at + 16))
        .isEqualTo(String.format("%08x", Checksums.crc32c(head, 0, head.length)));
  }

  @Test
  void rotatesPastItsSizeKeepingTheNewestOldFiles() throws Exception {
    try (JsonLinesFile f = new JsonLinesFile(dir.resolve("a.jsonl"), 100, 2)) {
      for (int i = 0; i < 40; i++) {
        f.append(i, "\"i\":" + i);
      }
    }
    assertThat(Files.exists(dir.resolve("a.jsonl.1"))).isTrue();
    assertThat(Files.exists(dir.resolve("a.jsonl.2"))).isTrue();
    assertThat(Files.exists(dir.resolve("a.jsonl.3"))).isFalse();
    List<String> current = Files.readAllLines(dir.resolve("a.jsonl"));
    List<String> older = Files.readAllLines(dir.resolve("a.jsonl.1"));
    assertThat(current.get(current.size() - 1)).contains("\"i\":39");
    // The rotated file holds the lines just before the current file's first.
    int firstNow = Integer.parseInt(current.get(0).replaceAll(".*\"i\":(\\d+).*", "$1"));
    assertThat(older.get(older.size() - 1)).contains("\"i\":" + (firstNow - 1) + ",");
  }
}
