package io.shale.client.backup;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HashSet;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Checks every byte of a backup directory against its manifest: the manifest's own checksum, each
 * file's presence, size, block CRC32Cs (a mismatch is reported with the file and the offset of the
 * damaged block) and SHA-256, and that no file is there the manifest does not list.
 */
public final class BackupVerifier {
  private BackupVerifier() {}

  /**
   * Verifies the backup in {@code dir} and returns its manifest.
   *
   * @throws BackupCorruptException naming the first damaged file and offset
   */
  public static BackupManifest verify(Path dir) throws IOException {
    BackupManifest m = BackupManifest.read(dir);
    Path files = dir.resolve(BackupManifest.FILES);
    Set<String> listed = new HashSet<>();
    for (BackupManifest.FileInfo f : m.files()) {
      listed.add(f.name());
      Path file = files.resolve(f.name());
      if (!Files.isRegularFile(file)) {
        throw new BackupCorruptException(file, 0, "missing (the manifest lists it)");
      }
      long size = Files.size(file);
      BackupManifest.FileInfo actual = BackupFiles.of(file, f.name());
      int blocks = Math.min(actual.blockCrcs().length, f.blockCrcs().length);
      for (int b = 0; b < blocks; b++) {
        if (actual.blockCrcs()[b] != f.blockCrcs()[b]) {
          throw new BackupCorruptException(
              file,
              (long) b * BackupManifest.BLOCK_BYTES,
              "block "
                  + b
                  + " ("
                  + BackupManifest.BLOCK_BYTES
                  + " bytes from this offset) has CRC32C "
                  + Integer.toHexString(actual.blockCrcs()[b])
                  + ", the manifest says "
                  + Integer.toHexString(f.blockCrcs()[b]));
        }
      }
      if (size != f.size()) {
        throw new BackupCorruptException(
            file, Math.min(size, f.size()), size + " bytes, the manifest says " + f.size());
      }
      if (!MessageDigest.isEqual(actual.sha256(), f.sha256())) {
        throw new BackupCorruptException(file, 0, "its SHA-256 differs from the manifest's");
      }
    }
    try (Stream<Path> s = Files.list(files)) {
      for (Path p : (Iterable<Path>) s::iterator) {
        if (!listed.contains(p.getFileName().toString())) {
          throw new BackupCorruptException(p, 0, "not listed in the manifest");
        }
      }
    }
    return m;
  }
}
