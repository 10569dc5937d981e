package io.shale.client.backup;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * The checksums of one backup file as its bytes go by (SHA-256 of the whole, CRC32C per {@link
 * BackupManifest#BLOCK_BYTES} block), and the durable writes a backup needs.
 */
final class BackupFiles {
  private final MessageDigest sha;
  private final CRC32C block = new CRC32C();
  private int[] crcs = new int[8];
  private int blocks;
  private long size;

  BackupFiles() {
    try {
      sha = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JRE has no SHA-256", e);
    }
  }

  /** Adds the next bytes of the file. */
  void update(ByteBuffer data) {
    sha.update(data.duplicate());
    ByteBuffer rest = data.duplicate();
    while (rest.hasRemaining()) {
      int inBlock = (int) (size % BackupManifest.BLOCK_BYTES);
      int n = Math.min(rest.remaining(), BackupManifest.BLOCK_BYTES - inBlock);
      ByteBuffer part = rest.slice().limit(n);
      block.update(part);
      rest.position(rest.position() + n);
      size += n;
      if (size % BackupManifest.BLOCK_BYTES == 0) {
        endBlock();
      }
    }
  }

  private void endBlock() {
    if (blocks == crcs.length) {
      crcs = Arrays.copyOf(crcs, blocks * 2);
    }
    crcs[blocks++] = (int) block.getValue();
    block.reset();
  }

  /** The file's entry once every byte went by. */
  BackupManifest.FileInfo finish(String name) {
    if (size % BackupManifest.BLOCK_BYTES != 0) {
      endBlock();
    }
    return new BackupManifest.FileInfo(name, size, sha.digest(), Arrays.copyOf(crcs, blocks));
  }

  /** Reads {@code file} through and returns its entry. */
  static BackupManifest.FileInfo of(Path file, String name) throws IOException {
    BackupFiles sums = new BackupFiles();
    try (InputStream in = Files.newInputStream(file)) {
      byte[] buf = new byte[1 << 16];
      for (int n; (n = in.read(buf)) > 0; ) {
        sums.update(ByteBuffer.wrap(buf, 0, n));
      }
    }
    return sums.finish(name);
  }

  /** Writes {@code bytes} to {@code target} through a synced temporary file and a rename. */
  static void writeDurably(Path target, byte[] bytes) throws IOException {
    Path tmp = target.resolveSibling(target.getFileName() + ".tmp");
    try (FileChannel ch =
        FileChannel.open(
            tmp,
            StandardOpenOption.CREATE,
            StandardOpenOption.TRUNCATE_EXISTING,
            StandardOpenOption.WRITE)) {
      ByteBuffer b = ByteBuffer.wrap(bytes);
      while (b.hasRemaining()) {
        ch.write(b);
      }
      ch.force(true);
    }
    Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    syncDirectory(target.getParent());
  }

  static void syncDirectory(Path dir) throws IOException {
    try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
      ch.force(true);
    }
  }
}
