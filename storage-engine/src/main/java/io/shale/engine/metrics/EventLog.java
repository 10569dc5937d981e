package io.shale.engine.metrics;

import io.shale.engine.io.Checksums;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * The compaction event log: {@code events.jsonl} in the engine directory, one JSON object per
 * line, rotated to {@code events.jsonl.1} past {@code maxBytes}. Each line carries its format
 * version ({@code "v":1}) and, last, the CRC32C of everything before it ({@code "crc":"..."}) so a
 * torn or damaged line is recognisable. The log is for people and tools; the engine never reads
 * it back, and a failure to write it never fails the engine. Thread-safe.
 */
public final class EventLog implements AutoCloseable {
  public static final String FILE = "events.jsonl";
  private final Path file;
  private final long maxBytes;
  private FileChannel channel;

  public EventLog(Path dir, long maxBytes) {
    this.file = dir.resolve(FILE);
    this.maxBytes = maxBytes;
  }

  /** Append one event; {@code json} is an object body without braces, e.g. {@code "a":1,"b":2}. */
  public synchronized void append(String json) {
    String body = "{\"v\":1,\"ts\":" + System.currentTimeMillis() + "," + json;
    byte[] bodyBytes = body.getBytes(StandardCharsets.UTF_8);
    String line = body + ",\"crc\":\""
        + String.format("%08x", Checksums.crc32c(bodyBytes, 0, bodyBytes.length)) + "\"}\n";
    try {
      if (channel == null) {
        channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
            StandardOpenOption.APPEND);
      }
      if (channel.size() > maxBytes) {
        channel.close();
        Files.move(file, file.resolveSibling(FILE + ".1"), StandardCopyOption.REPLACE_EXISTING);
        channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
            StandardOpenOption.APPEND);
      }
      ByteBuffer b = ByteBuffer.wrap(line.getBytes(StandardCharsets.UTF_8));
      while (b.hasRemaining()) {
        channel.write(b);
      }
    } catch (IOException e) {
      // Observability must not take the engine down; the meters still count the event.
      System.err.println("shale: could not write " + file + ": " + e);
    }
  }

  /** Quote a string for JSON. */
  public static String quote(String s) {
    StringBuilder b = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        default -> {
          if (c < 0x20) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.append('"').toString();
  }

  @Override
  public synchronized void close() throws IOException {
    if (channel != null) {
      channel.close();
      channel = null;
    }
  }
}
