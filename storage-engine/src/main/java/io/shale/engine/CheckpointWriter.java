package io.shale.engine;

import io.shale.engine.io.DurableFiles;
import io.shale.engine.version.BlobFileMeta;
import io.shale.engine.version.FileMetadata;
import io.shale.engine.version.FileNames;
import io.shale.engine.version.VersionSet;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes a checkpoint: hard links to every table and blob file of the current version plus a
 * standalone manifest naming them and the applied index they reflect, synced. The version is pinned
 * while the links are made, so no file of it can be deleted in between. The caller flushes first;
 * writes may continue meanwhile and are not in the checkpoint.
 */
final class CheckpointWriter {
  private final Path dir;
  private final VersionSet versions;

  CheckpointWriter(Path dir, VersionSet versions) {
    this.dir = dir;
    this.versions = versions;
  }

  /** Precondition: {@code target} does not exist or is empty. */
  CheckpointInfo write(Path target) throws IOException {
    if (Files.exists(target)) {
      try (var s = Files.list(target)) {
        if (s.findAny().isPresent()) {
          throw new IllegalArgumentException("checkpoint directory " + target + " is not empty");
        }
      }
    }
    Files.createDirectories(target);
    VersionSet.Pinned pinned = versions.pinCurrent();
    try {
      List<String> names = new ArrayList<>();
      long bytes = 0;
      for (FileMetadata f : pinned.version().allFiles()) {
        bytes += link(target, FileNames.tableName(f.number()), names, f.size());
      }
      for (BlobFileMeta b : pinned.version().blobFiles().values()) {
        bytes += link(target, FileNames.blobName(b.number()), names, b.fileSize());
      }
      VersionSet.writeStandaloneManifest(
          target, pinned.version(), pinned.appliedIndex(), pinned.nextFileNumber());
      DurableFiles.syncDirectory(target);
      return new CheckpointInfo(target, pinned.appliedIndex(), names, bytes);
    } finally {
      pinned.version().release();
    }
  }

  private long link(Path target, String name, List<String> names, long size) throws IOException {
    Files.createLink(target.resolve(name), dir.resolve(name));
    names.add(name);
    return size;
  }
}
