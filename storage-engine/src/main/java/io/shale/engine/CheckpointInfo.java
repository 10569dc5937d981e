package io.shale.engine;

import java.nio.file.Path;
import java.util.List;

/**
 * A checkpoint written by {@link Engine#checkpoint}: an openable engine directory reflecting every
 * batch up to {@code appliedIndex}.
 *
 * @param tableFiles the table and blob file names hard-linked into it
 */
public record CheckpointInfo(
    Path directory, long appliedIndex, List<String> tableFiles, long totalBytes) {
  public CheckpointInfo {
    tableFiles = List.copyOf(tableFiles);
  }
}
