package io.shale.ops.seed;

import io.shale.engine.config.ByteSize;
import java.util.ArrayList;
import java.util.List;

/**
 * One cell of the seed benchmark's matrix ({@code seed-bench --matrix}): how many client threads,
 * how much memory each engine's process may use (the data set is {@code --data-ratio} times that)
 * and how writes arrive. The mix, value sizes and key distribution are the seed's in every cell.
 *
 * @param threads client threads in a closed loop
 * @param memory each engine's memory limit, page cache included
 * @param writes steady, or bursts capped at 25 MiB/s, or bursts at full speed
 */
record MatrixCell(int threads, long memory, Writes writes) {
  private static final long MIB = 1L << 20;

  /** How writes arrive besides the mix's own. */
  enum Writes {
    /** The mix's writes only. */
    STEADY("steady", BurstSettings.NONE),
    /** A burst writer for 20 s of every 60 s, paced at 25 MiB/s: equal work for both engines. */
    CAPPED("capped", new BurstSettings(60, 20, 25 * MIB)),
    /** The same bursts at full speed: each engine takes what it can (space must stay bounded). */
    UNCAPPED("uncapped", new BurstSettings(60, 20, 0));

    final String slug;
    final BurstSettings burst;

    Writes(String slug, BurstSettings burst) {
      this.slug = slug;
      this.burst = burst;
    }
  }

  /** The whole matrix: threads {1, 16} x memory {512 MiB, 2 GiB} x all three write modes. */
  static List<MatrixCell> all() {
    List<MatrixCell> cells = new ArrayList<>();
    for (int threads : new int[] {1, 16}) {
      for (long memory : new long[] {512 * MIB, 2048 * MIB}) {
        for (Writes w : Writes.values()) {
          cells.add(new MatrixCell(threads, memory, w));
        }
      }
    }
    return cells;
  }

  /**
   * Cells by name ("t16-512MiB-capped,t1-2GiB-steady"), or every cell for "all"; an unknown name is
   * refused with the list of known ones.
   */
  static List<MatrixCell> parse(String list) {
    if (list.equals("all")) {
      return all();
    }
    List<MatrixCell> cells = new ArrayList<>();
    for (String name : list.split(",")) {
      MatrixCell found =
          all().stream().filter(c -> c.name().equals(name.trim())).findFirst().orElse(null);
      if (found == null) {
        throw new IllegalArgumentException(
            "unknown cell '"
                + name.trim()
                + "' (known: "
                + String.join(", ", all().stream().map(MatrixCell::name).toList())
                + ")");
      }
      cells.add(found);
    }
    return cells;
  }

  /** The cell's name, e.g. {@code t16-2GiB-uncapped}: its directory and its row in the tables. */
  String name() {
    return "t" + threads + "-" + ByteSize.format(memory) + "-" + writes.slug;
  }

  /**
   * Each engine's Java heap, equal for both: 128 MiB in 512 MiB (the benchmark's default), 3/8 of
   * larger limits (768 MiB in 2 GiB), leaving the rest to the page cache and native memory.
   */
  long heap() {
    return memory <= 512 * MIB ? 128 * MIB : memory / 8 * 3;
  }

  BurstSettings burst() {
    return writes.burst;
  }
}
