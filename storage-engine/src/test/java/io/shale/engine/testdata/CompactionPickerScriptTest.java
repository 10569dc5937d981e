package io.shale.engine.testdata;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.shale.engine.compaction.Compaction;
import io.shale.engine.compaction.CompactionOptions;
import io.shale.engine.compaction.CompactionPicker;
import io.shale.engine.compaction.CompactionScore;
import io.shale.engine.config.ByteSize;
import io.shale.engine.sstable.TableProperties;
import io.shale.engine.version.FileMetadata;
import io.shale.engine.version.Version;
import io.shale.engine.version.VersionEdit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * {@code testdata/compaction}: a level layout in text, and what the picker scores and picks.
 * Options: level-0 trigger 4, multiplier 10, level-1 target 10 MiB, files of 1 MiB, 7 levels, the
 * seed's score.
 *
 * <pre>
 * version      input lines: L&lt;level&gt; #&lt;n&gt; &lt;lo&gt;..&lt;hi&gt; size=&lt;bytes|1MiB&gt; [tombstones=&lt;ratio&gt;] [age=&lt;days&gt;]
 * candidates   every eligible candidate, highest score first
 * pick [busy=n,n]
 *              the compaction picked (files in busy are taken by running jobs), or "none"
 * </pre>
 */
class CompactionPickerScriptTest {
  private static final long NOW = 1_000L * 86_400_000L;
  private static final CompactionOptions OPTIONS =
      new CompactionOptions(4, 10, 10L << 20, false, 1L << 20, 7, 1, CompactionScore.SEED);

  @TestFactory
  Stream<DynamicTest> pickerScripts() {
    return DataDrivenFile.tests("compaction", Handler::new);
  }

  private static final class Handler implements Function<DataDrivenFile.Case, String> {
    private final CompactionPicker picker = new CompactionPicker(OPTIONS);
    private Version version = Version.empty(OPTIONS.numLevels());

    @Override
    public String apply(DataDrivenFile.Case c) {
      return switch (c.command()) {
        case "version" -> define(c.input());
        case "candidates" -> candidates();
        case "pick" -> pick(c);
        default -> throw new IllegalArgumentException("unknown command " + c.command());
      };
    }

    private String define(List<String> lines) {
      List<VersionEdit.Added> added = new ArrayList<>();
      for (String line : lines) {
        String[] w = line.trim().split("\\s+");
        int level = Integer.parseInt(w[0].substring(1));
        long number = Long.parseLong(w[1].substring(1));
        String[] keys = w[2].split("\\.\\.");
        long size = 0;
        double tombstones = 0;
        double age = 0;
        for (int i = 3; i < w.length; i++) {
          String[] kv = w[i].split("=");
          switch (kv[0]) {
            case "size" -> size = ByteSize.parse("size", kv[1]);
            case "tombstones" -> tombstones = Double.parseDouble(kv[1]);
            case "age" -> age = Double.parseDouble(kv[1].replace("d", ""));
            default -> throw new IllegalArgumentException("unknown field " + w[i]);
          }
        }
        long entries = 1000;
        TableProperties p =
            new TableProperties(
                entries,
                (long) (entries * tombstones),
                0,
                0,
                1,
                0,
                10,
                keys[0].getBytes(UTF_8),
                keys[1].getBytes(UTF_8),
                1,
                1,
                NOW - (long) (age * 86_400_000L),
                level);
        added.add(new VersionEdit.Added(level, new FileMetadata(number, size, p)));
      }
      version = Version.empty(OPTIONS.numLevels()).apply(VersionEdit.of(added, List.of()));
      StringBuilder out = new StringBuilder();
      for (int l = 0; l < version.numLevels(); l++) {
        if (!version.files(l).isEmpty()) {
          out.append(
              String.format(
                  Locale.ROOT,
                  "L%d: %d files, pressure %.2f%n",
                  l,
                  version.files(l).size(),
                  picker.sizePressure(version, l)));
        }
      }
      return out.length() == 0 ? "(empty)" : out.toString();
    }

    private String candidates() {
      StringBuilder out = new StringBuilder();
      for (CompactionPicker.Candidate c : picker.candidates(version, NOW)) {
        out.append(
            String.format(
                Locale.ROOT,
                "L%d %s score=%.3f reason=%s%n",
                c.level(),
                c.file() == null ? "all" : "#" + c.file().number(),
                c.score(),
                c.reason().name().toLowerCase(Locale.ROOT)));
      }
      return out.length() == 0 ? "(none)" : out.toString();
    }

    private String pick(DataDrivenFile.Case c) {
      Set<Long> busy = new HashSet<>();
      String b = c.arg("busy", "");
      for (String n : b.isEmpty() ? new String[0] : b.split(",")) {
        busy.add(Long.parseLong(n));
      }
      Compaction picked = picker.pick(version, busy, List.of(), NOW);
      if (picked == null) {
        return "none";
      }
      return String.format(
          Locale.ROOT,
          "L%d -> L%d reason=%s inputs=%s output-level-inputs=%s",
          picked.level(),
          picked.outputLevel(),
          picked.reason().name().toLowerCase(Locale.ROOT),
          numbers(picked.inputs()),
          numbers(picked.outputLevelInputs()));
    }

    private static String numbers(List<FileMetadata> files) {
      return files.stream().map(f -> "#" + f.number()).toList().toString();
    }
  }
}
