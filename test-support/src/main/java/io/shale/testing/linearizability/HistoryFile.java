package io.shale.testing.linearizability;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * A history saved for study when a check fails: the verdict's explanation first, then every
 * operation of the failing key in call order, one per line, then the rest of the history.
 */
public final class HistoryFile {
  private HistoryFile() {}

  public static Path write(Path file, List<Operation> history, LinearizabilityChecker.Result result)
      throws IOException {
    List<String> lines = new ArrayList<>();
    lines.add(
        "# "
            + (result.linearizable() ? "linearizable" : "NOT linearizable")
            + ", "
            + history.size()
            + " operations");
    result.explanation().lines().forEach(l -> lines.add("# " + l));
    lines.add("# operations of key " + result.key() + ", in call order:");
    history.stream()
        .filter(o -> o.key().equals(result.key()))
        .sorted(Comparator.comparingLong(Operation::called))
        .forEach(o -> lines.add(o.describe()));
    lines.add("# every other operation:");
    history.stream()
        .filter(o -> !o.key().equals(result.key()))
        .sorted(Comparator.comparingLong(Operation::called))
        .forEach(o -> lines.add(o.describe()));
    Files.createDirectories(file.toAbsolutePath().getParent());
    Files.write(file, lines);
    return file;
  }
}
