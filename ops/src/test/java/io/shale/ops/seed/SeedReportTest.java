package io.shale.ops.seed;

import static org.assertj.core.api.Assertions.assertThat;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SeedReportTest {
  @TempDir Path dir;

  /** A result whose figures are all derived from {@code k}, with the given key figures. */
  static RunResult result(
      String config,
      double readP99During,
      long compacted,
      double hotTouched,
      long ops,
      long diskWritten) {
    return new RunResult(
        config,
        1000,
        4_000_000,
        2.0,
        true,
        1.0,
        10.0,
        ops,
        ops * 8 / 10,
        3,
        ops * 15 / 100,
        ops / 20,
        20,
        900,
        5000,
        800,
        readP99During,
        1234,
        4000,
        300,
        0.5,
        4,
        compacted,
        123_456,
        7,
        8_000,
        10_000_000,
        diskWritten,
        1_000,
        600,
        300,
        100,
        5_000_000,
        4_000_000,
        hotTouched,
        1.5,
        1.0,
        40_000,
        200 << 20,
        512 << 20,
        500 << 20,
        7_500,
        300,
        64L << 20,
        9_000,
        2,
        150,
        1_500,
        6_000,
        250_000);
  }

  @Test
  void resultsSurviveTheirFile() throws IOException {
    RunResult r = result("after", 42_000.5, 77, 0.75, 12_345, 30_000_000);
    r.write(dir.resolve("r.properties"));
    assertThat(RunResult.read(dir.resolve("r.properties"))).isEqualTo(r);
    assertThat(r.throughput()).isEqualTo(1234.5);
    assertThat(r.writeAmplification()).isEqualTo(3.0);
    assertThat(r.spaceAmplification()).isEqualTo(1.25);
    assertThat(r.compactedPerHour()).isEqualTo(77 * 360.0);
  }

  @Test
  void targetsAreJudgedFromTheRatios() {
    RunResult before = result("before", 180_000, 24_000, 2.0, 10_000, 40_000_000);
    // 3.6x lower during compaction (met), 2x fewer bytes (missed), 0.5x tables (met).
    RunResult after = result("after", 50_000, 12_000, 1.0, 12_000, 20_000_000);
    // after/RocksDB: throughput 1.2x (met), P99 during compaction 1.25x (missed), WA 0.8x (met).
    RunResult rocks = result("rocksdb", 40_000, 10_000, 1.0, 10_000, 25_000_000);
    String md =
        new SeedReport(
                List.of(before, after, rocks),
                new SeedReport.Setup(
                    false, 1000, 4_000_000, "limited", 3, 10, 4, 42, "no burst writer", "abc"))
            .markdown();
    assertThat(md)
        .contains("| Shale before | Shale after | RocksDB | after / before | after / RocksDB |");
    assertThat(md)
        .contains(
            "| Read P99 (during compaction) | 180.00 ms | 50.00 ms | 40.00 ms | 0.28x | 1.25x |");
    assertThat(md)
        .contains(
            "read P99 during compaction at least 3x lower | 0.28x (50.00 ms vs 180.00 ms) | yes");
    assertThat(md).containsPattern("bytes compacted at least 3x fewer \\| 0\\.50x[^|]*\\| no");
    assertThat(md).containsPattern("tombstone-heavy ranges at most half \\| 0\\.50x[^|]*\\| yes");
    assertThat(md).containsPattern("throughput at least 1\\.0x \\| 1\\.20x \\| yes");
    assertThat(md)
        .containsPattern("read P99 during compaction at most 1\\.0x \\| 1\\.25x[^|]*\\| no");
    assertThat(md).containsPattern("write amplification at most 1\\.0x \\| 0\\.80x[^|]*\\| yes");
    assertThat(md).contains("| WriteThrottled errors | 7 | 7 | 7 (stalls instead) |");
    assertThat(md).contains("and no burst writer, seed 42.");
    assertThat(md)
        .contains("| Seconds with no completed client operation | 2 | 2 | 2 | 1.00x | 1.00x |");
    assertThat(md)
        .contains("| JVM GC time in the mixed phase | 150.00 ms | 150.00 ms | 150.00 ms |");
    assertThat(md).contains("| Burst bytes accepted | 64.00 MiB |");
    assertThat(md).containsPattern("burst bytes accepted at least 1\\.0x \\| 1\\.00x \\| yes");
    assertThat(md).contains("| after: no second without a completed client operation | 2 | no |");
    assertThat(md).contains("| after: JVM GC under 2% of the mixed phase | 1.5% | yes |");
  }

  @Test
  void csvHasOneColumnPerConfigurationInTheTableUnits() {
    RunResult after = result("after", 50_000, 1L << 30, 1.0, 12_000, 20_000_000);
    String csv =
        new SeedReport(
                List.of(after),
                new SeedReport.Setup(
                    true, 1000, 4_000_000, "none", 3, 10, 4, 42, "no burst writer", "abc"))
            .csv();
    assertThat(csv.lines().findFirst()).hasValue("metric,unit,after");
    assertThat(csv).contains("\"Read P99 (during compaction)\",ms,50.0000");
    assertThat(csv).contains("\"Bytes compacted per hour\",gib_per_hour,360.0000");
  }

  @Test
  void keysForLoadsJustEnoughKeys() {
    long keys = SeedBench.keysFor(10 << 20, 42);
    long sum = 0;
    for (long n = 0; n < keys - 1; n++) {
      sum += SeedWorkload.KEY_BYTES + SeedWorkload.loadValueSize(n, 42);
    }
    assertThat(sum).isLessThan(10 << 20);
    assertThat(sum + SeedWorkload.KEY_BYTES + SeedWorkload.loadValueSize(keys - 1, 42))
        .isGreaterThanOrEqualTo(10 << 20);
  }

  @Test
  void thePlotHasOnePanelPerConfiguration() throws IOException {
    for (SeedConfig c : SeedConfig.values()) {
      Path d = Files.createDirectories(dir.resolve(c.slug()));
      StringBuilder s =
          new StringBuilder(
              "second,ops,reads,read_p50_us,read_p99_us,write_p99_us,compacting_share,level0_files\n");
      for (int i = 1; i <= 30; i++) {
        s.append(i)
            .append(",100,80,20.0,")
            .append(i % 10 == 0 ? 90_000.0 : 3_000.0)
            .append(",50.0,0.5,2\n");
      }
      Files.writeString(d.resolve("seconds.csv"), s);
      Files.writeString(d.resolve("compactions.csv"), "start_ms,end_ms\n9000,10500\n19000,20200\n");
    }
    Path png = dir.resolve("plot.png");
    LatencyPlot.write(png, dir, List.of(SeedConfig.values()));
    BufferedImage img = ImageIO.read(png.toFile());
    assertThat(img.getWidth()).isEqualTo(1200);
    assertThat(img.getHeight()).isEqualTo(3 * (260 + 30 + 40));
  }

  @Test
  void thePlotMarksTheSecondsInsideBurstWindows() throws IOException {
    Path d = Files.createDirectories(dir.resolve(SeedConfig.AFTER.slug()));
    StringBuilder s =
        new StringBuilder(
            "second,ops,reads,read_p50_us,read_p99_us,write_p99_us,compacting_share,level0_files,"
                + "burst_bytes,in_burst\n");
    for (int i = 1; i <= 30; i++) {
      s.append(i).append(",100,80,20.0,3000.0,50.0,0.0,2,0,").append(i <= 10 ? 1 : 0).append('\n');
    }
    Files.writeString(d.resolve("seconds.csv"), s);
    Files.writeString(d.resolve("compactions.csv"), "start_ms,end_ms\n");
    Path png = dir.resolve("plot.png");
    LatencyPlot.write(png, dir, List.of(SeedConfig.AFTER));
    BufferedImage img = ImageIO.read(png.toFile());
    // The band lies just under the plot (panel top 30 + height 260); 30 s over 1100 pixels from
    // x = 80, so second 5 covers x 227-263 and second 15 covers x 593-630.
    int bandY = 30 + 260 + 3;
    assertThat(img.getRGB(245, bandY) & 0xFFFFFF).isEqualTo(0x3C6EDC);
    assertThat(img.getRGB(610, bandY) & 0xFFFFFF).isEqualTo(0xFFFFFF);
  }
}
