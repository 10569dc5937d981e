package io.shale.engine.compaction;

import io.shale.engine.key.Keys;
import io.shale.engine.version.FileMetadata;
import java.util.ArrayList;
import java.util.List;

/**
 * One chosen compaction: files of {@code level} merged with the overlapping files of {@code
 * outputLevel}. Immutable.
 */
public record Compaction(
    int level,
    int outputLevel,
    List<FileMetadata> inputs,
    List<FileMetadata> outputLevelInputs,
    double score,
    CompactionReason reason) {

  public Compaction {
    inputs = List.copyOf(inputs);
    outputLevelInputs = List.copyOf(outputLevelInputs);
  }

  public List<FileMetadata> allInputs() {
    List<FileMetadata> all = new ArrayList<>(inputs);
    all.addAll(outputLevelInputs);
    return all;
  }

  public long inputBytes() {
    long sum = 0;
    for (FileMetadata f : allInputs()) {
      sum += f.size();
    }
    return sum;
  }

  /** Smallest key of all inputs. */
  public byte[] smallestKey() {
    byte[] s = null;
    for (FileMetadata f : allInputs()) {
      if (s == null || Keys.compare(f.smallestKey(), s) < 0) {
        s = f.smallestKey();
      }
    }
    return s;
  }

  /** Largest key of all inputs. */
  public byte[] largestKey() {
    byte[] s = null;
    for (FileMetadata f : allInputs()) {
      if (s == null || Keys.compare(f.largestKey(), s) > 0) {
        s = f.largestKey();
      }
    }
    return s;
  }
}
