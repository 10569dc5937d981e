package io.shale.engine.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * An append-only file of JSON objects, one per line, rotated past a size: {@code NAME} is renamed
 * {@code NAME.1} (and {@code NAME.1} to {@code NAME.2}, up to {@code keep} old files). Each line
 * carries its format version ({@code "v":1}) and time ({@code "ts"}, milliseconds since the epoch)
 * first and, last, the CRC32C of everything before it ({@code "crc":"..."}), so a torn or damaged
 * line is recognisable. Lines are written, not synced: these files are for people and tools.
 * Thread-safe.
 */
public final class JsonLinesFile implements AutoCloseable {
  private final Path file;
  private final long maxBytes;
  private final int keep;
  private FileChannel channel;

  /**
   * @param maxBytes the size past which the file is rotated
   * @param keep how many rotated files are kept (at least 1)
   */
  public JsonLinesFile(Path file, long maxBytes, int keep) {
    this.file = file;
    this.maxBytes = maxBytes;
    this.keep = Math.max(1, keep);
  }

  public Path file() {
    return file;
  }

  /** Appends one object; {@code body} is its fields without braces, e.g. {@code "a":1,"b":"x"}. */
  public synchronized void append(long timeMillis, String body) throws IOException {
    String head = "{\"v\":1,\"ts\":" + timeMillis + "," + body;
    byte[] headBytes = head.getBytes(StandardCharsets.UTF_8);
    String line =
        head
            + ",\"crc\":\""
            + String.format("%08x", Checksums.crc32c(headBytes, 0, headBytes.length))
            + "\"}\n";
    if (channel == null) {
      channel = openForAppend();
    }
    if (channel.size() > maxBytes) {
      channel.close();
      channel = null;
      rotate();
      channel = openForAppend();
    }
    ByteBuffer b = ByteBuffer.wrap(line.getBytes(StandardCharsets.UTF_8));
    while (b.hasRemaining()) {
      channel.write(b);
    }
  }

  private void rotate() throws IOException {
    String name = file.getFileName().toString();
    Files.deleteIfExists(file.resolveSibling(name + "." + keep));
    for (int i = keep - 1; i >= 1; i--) {
      Path older = file.resolveSibling(name + "." + i);
      if (Files.exists(older)) {
        Files.move(
            older, file.resolveSibling(name + "." + (i + 1)), StandardCopyOption.REPLACE_EXISTING);
      }
    }
    Files.move(file, file.resolveSibling(name + ".1"), StandardCopyOption.REPLACE_EXISTING);
  }

  private FileChannel openForAppend() throws IOException {
    return FileChannel.open(
        file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
  }

  /** {@code s} as a JSON string literal. */
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
