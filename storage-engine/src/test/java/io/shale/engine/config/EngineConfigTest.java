package io.shale.engine.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.shale.engine.EngineOptions;
import io.shale.engine.bloom.BloomPolicy;
import io.shale.engine.compaction.CompactionOptions;
import io.shale.engine.compaction.CompactionScore;
import io.shale.engine.sstable.Compression;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.tomlj.Toml;
import org.tomlj.TomlTable;

class EngineConfigTest {
  /** Relative to the storage-engine module, Maven's working directory for tests. */
  private static final Path EXAMPLE = Path.of("../ops/config/shale.toml");

  @ParameterizedTest
  @ValueSource(
      strings = {"", "\n\n", "# nothing set\n", "[lsm]\n", "[lsm.bloom]\n[lsm.compaction]\n"})
  void emptyConfigGivesDefaults(String toml) {
    assertThat(EngineConfig.parse(toml)).isEqualTo(EngineOptions.defaults());
  }

  @Test
  void everyKeyIsRead() {
    // Every value differs from its default, so a key that is parsed but not passed on fails.
    EngineOptions o =
        EngineConfig.parse(
            """
        [lsm]
        memtable_size = "32MiB"
        block_cache_size = "1.5GiB"
        max_open_files = 5000
        index_and_filter_memory = "64MiB"
        mmap_reads = true
        advise_random_reads = false
        block_size = "16KiB"
        block_restart_interval = 32
        compression = "none"

        [lsm.bloom]
        level_0 = 20
        level_1 = 18
        level_2 = 8
        default = 0

        [lsm.compaction]
        level0_file_num_compaction_trigger = 8
        level_multiplier = 8
        max_bytes_for_level_base = "512MiB"
        level_base_follows_flushes = false
        target_file_size_base = "128MiB"
        num_levels = 5
        threads = 4
        tombstone_weight = 2.5
        age_weight = 1
        age_cap_days = 7.5

        [lsm.compaction.budget]
        rate = "16MiB"
        windows = [ { start = "08:00", end = "20:00", rate = "32MiB" },
                    { start = "22:00", end = "02:00", rate = "unlimited" } ]

        [lsm.blob]
        enabled = false
        min_value_size_bytes = 16384
        gc_threshold_ratio = 0.25
        file_size = "64MiB"
        scan_readahead_size = "1MiB"
        advise_random_reads = true

        [lsm.write_pressure]
        enabled = false
        level0_slowdown_writes_trigger = 10
        level0_stop_writes_trigger = 12
        soft_pending_compaction_bytes_limit = "1GiB"
        hard_pending_compaction_bytes_limit = "2GiB"
        max_immutable_memtables = 3
        max_delay = "250ms"
        """);

    assertThat(o.memtableSizeBytes()).isEqualTo(32L << 20);
    assertThat(o.maxImmutableMemtables()).isEqualTo(3);
    assertThat(o.blockCacheBytes()).isEqualTo(1536L << 20);
    assertThat(o.maxOpenFiles()).isEqualTo(5000);
    assertThat(o.indexAndFilterMemoryBytes()).isEqualTo(64L << 20);
    assertThat(o.table().blockSize()).isEqualTo(16 << 10);
    assertThat(o.table().restartInterval()).isEqualTo(32);
    assertThat(o.table().compression()).isEqualTo(Compression.NONE);

    assertThat(o.bloom().level0()).isEqualTo(20);
    assertThat(o.bloom().level1()).isEqualTo(18);
    assertThat(o.bloom().level2()).isEqualTo(8);
    assertThat(o.bloom().deeper()).isEqualTo(0);

    CompactionOptions c = o.compaction();
    assertThat(c.level0FileNumCompactionTrigger()).isEqualTo(8);
    assertThat(c.levelMultiplier()).isEqualTo(8);
    assertThat(c.maxBytesForLevelBase()).isEqualTo(512L << 20);
    assertThat(c.levelBaseFollowsFlushes()).isFalse();
    assertThat(c.targetFileSizeBytes()).isEqualTo(128L << 20);
    assertThat(c.numLevels()).isEqualTo(5);
    assertThat(c.threads()).isEqualTo(4);
    assertThat(c.score().tombstoneWeight()).isEqualTo(2.5);
    assertThat(c.score().ageWeight()).isEqualTo(1.0);
    assertThat(c.score().ageCapDays()).isEqualTo(7.5);
    assertThat(o.mmapReads()).isTrue();
    assertThat(o.adviseRandomReads()).isFalse();

    assertThat(o.budget().bytesPerSecond()).isEqualTo(16L << 20);
    assertThat(o.budget().windows()).hasSize(2);
    assertThat(o.budget().limitAt(java.time.LocalTime.of(9, 30))).isEqualTo(32L << 20);
    assertThat(o.budget().limitAt(java.time.LocalTime.of(23, 0))).isZero();
    assertThat(o.budget().limitAt(java.time.LocalTime.of(1, 0))).isZero();
    assertThat(o.budget().limitAt(java.time.LocalTime.of(21, 0))).isEqualTo(16L << 20);

    assertThat(o.blob().enabled()).isFalse();
    assertThat(o.blob().minValueSizeBytes()).isEqualTo(16384);
    assertThat(o.blob().gcThresholdRatio()).isEqualTo(0.25);
    assertThat(o.blob().fileSizeBytes()).isEqualTo(64L << 20);
    assertThat(o.blob().scanReadaheadBytes()).isEqualTo(1 << 20);
    assertThat(o.blob().adviseRandomReads()).isTrue();

    var w = o.writePressure();
    assertThat(w.enabled()).isFalse();
    assertThat(w.level0SlowdownWritesTrigger()).isEqualTo(10);
    assertThat(w.level0StopWritesTrigger()).isEqualTo(12);
    assertThat(w.softPendingCompactionBytesLimit()).isEqualTo(1L << 30);
    assertThat(w.hardPendingCompactionBytesLimit()).isEqualTo(2L << 30);
    assertThat(w.maxDelay()).isEqualTo(java.time.Duration.ofMillis(250));
  }

  @Test
  void unsetKeysKeepTheirDefaults() {
    EngineOptions o =
        EngineConfig.parse(
            """
        [lsm.bloom]
        level_0 = 20
        [lsm.compaction]
        tombstone_weight = 0
        """);

    EngineOptions d = EngineOptions.defaults();
    assertThat(o)
        .isEqualTo(
            d.withBloom(new BloomPolicy(20, 14, 12, 10))
                .withCompaction(d.compaction().withScore(new CompactionScore(0, 0.5, 2.0))));
  }

  @ParameterizedTest
  @CsvSource({
    "'memtable_size = 67108864', 67108864",
    "'memtable_size = \"64MiB\"', 67108864",
    "'memtable_size = \"1.5GiB\"', 1610612736",
    "'memtable_size = \"4 GiB\"', 4294967296",
    "'memtable_size = \"65536\"', 65536",
  })
  void sizesAcceptIntegersAndStrings(String line, long bytes) {
    assertThat(EngineConfig.parse("[lsm]\n" + line + "\n").memtableSizeBytes()).isEqualTo(bytes);
  }

  @Test
  void dottedKeysAndInlineTablesAreTheSameKeys() {
    EngineOptions expected =
        EngineOptions.defaults().withMaxOpenFiles(64).withBloom(new BloomPolicy(16, 14, 12, 4));

    assertThat(EngineConfig.parse("lsm.max_open_files = 64\nlsm.bloom.default = 4\n"))
        .isEqualTo(expected);
    assertThat(EngineConfig.parse("[lsm]\nmax_open_files = 64\nbloom = { default = 4 }\n"))
        .isEqualTo(expected);
  }

  @Test
  void compressionNamesAreCaseInsensitive() {
    assertThat(EngineConfig.parse("[lsm]\ncompression = \"LZ4\"\n").table().compression())
        .isEqualTo(Compression.LZ4);
  }

  @Test
  void otherTopLevelTablesAreIgnored() {
    EngineOptions o =
        EngineConfig.parse(
            """
        cluster_name = "prod"

        [node]
        id = 3
        memtable_size = "not ours to check"

        [raft]
        election_timeout = "300ms"
        [raft.log]
        segment_size = "8MiB"

        [lsm]
        max_open_files = 2000
        """);

    assertThat(o).isEqualTo(EngineOptions.defaults().withMaxOpenFiles(2000));
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
      lsm.memtable_sise = 1           | known keys in [lsm]: memtable_size,
      lsm.bloom.level_3 = 1           | known keys in [lsm.bloom]: level_0,
      lsm.compaction.thread = 2       | known keys in [lsm.compaction]: level0_file_num_
      """)
  void unknownKeysAreRejected(String assignment, String known) {
    String key = assignment.substring(0, assignment.indexOf(" ="));
    assertThatThrownBy(() -> EngineConfig.parse(assignment))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("unknown configuration key " + key + " (")
        .hasMessageContaining(known);
  }

  @Test
  void unknownKeyMessageListsTheKnownKeys() {
    assertThatThrownBy(() -> EngineConfig.parse("[lsm.bloom]\nlevel_0 = 16\nlevel_9 = 8\n"))
        .hasMessage(
            "unknown configuration key lsm.bloom.level_9"
                + " (known keys in [lsm.bloom]: level_0, level_1, level_2, default)");
  }

  @Test
  void firstUnknownKeyInTheFileIsReported() {
    assertThatThrownBy(() -> EngineConfig.parse("[lsm]\nzzz = 1\naaa = 2\n"))
        .hasMessageStartingWith("unknown configuration key lsm.zzz ");
  }

  @Test
  void unknownKeysAreReportedBeforeBadValues() {
    assertThatThrownBy(() -> EngineConfig.parse("[lsm.bloom]\nlevel_0 = 99\nlevel_9 = 8\n"))
        .hasMessageStartingWith("unknown configuration key lsm.bloom.level_9 ");
  }

  @Test
  void oddlySpelledUnknownKeysAreQuotedInTheMessage() {
    assertThatThrownBy(() -> EngineConfig.parse("[lsm]\n\"block size\" = 4096\n"))
        .hasMessageStartingWith("unknown configuration key lsm.\"block size\" ");
  }

  @ParameterizedTest
  @ValueSource(strings = {"blobs", "pressure"})
  void unknownTablesAreRejectedListingTheKnownOnes(String table) {
    assertThatThrownBy(() -> EngineConfig.parse("[lsm." + table + "]\nenabled = true\n"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "unknown configuration table [lsm."
                + table
                + "]"
                + " (known tables in [lsm]: [lsm.bloom], [lsm.compaction], [lsm.blob],"
                + " [lsm.write_pressure])");
  }

  @Test
  void compactionHasOnlyTheBudgetSubTable() {
    assertThatThrownBy(() -> EngineConfig.parse("[lsm.compaction.limits]\nrate = \"100MiB\"\n"))
        .hasMessage(
            "unknown configuration table [lsm.compaction.limits]"
                + " (known tables in [lsm.compaction]: [lsm.compaction.budget])");
  }

  @Test
  void budgetWindowsAreChecked() {
    assertThatThrownBy(
            () ->
                EngineConfig.parse(
                    "[lsm.compaction.budget]\nwindows = [{start = \"8am\", end = \"20:00\", rate = 1}]\n"))
        .hasMessageContaining("lsm.compaction.budget.windows[0].start");
    assertThatThrownBy(
            () ->
                EngineConfig.parse(
                    "[lsm.compaction.budget]\nwindows = [{start = \"08:00\", end = \"20:00\", speed = 1}]\n"))
        .hasMessageContaining("unknown configuration key lsm.compaction.budget.windows[0].speed");
    assertThatThrownBy(() -> EngineConfig.parse("[lsm.write_pressure]\nmax_delay = \"soon\"\n"))
        .hasMessageContaining("lsm.write_pressure.max_delay");
  }

  @Test
  void emptyUnknownTableIsStillRejected() {
    assertThatThrownBy(() -> EngineConfig.parse("[lsm.blobs]\n"))
        .hasMessageStartingWith("unknown configuration table [lsm.blobs] ");
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '`',
      textBlock =
          """
      lsm.bloom.level_0 = "sixteen"            | an integer, got string "sixteen"
      lsm.max_open_files = 1.5                 | an integer, got float 1.5
      lsm.compaction.threads = true            | an integer, got boolean true
      lsm.write_pressure.max_immutable_memtables = [2] | an integer, got an array
      lsm.compaction.tombstone_weight = "3"    | a number, got string "3"
      lsm.compaction.age_cap_days = 1979-05-27 | a number, got date/time 1979-05-27
      lsm.compression = "zstd"                 | one of "none", "lz4", got string "zstd"
      lsm.compression = 1                      | one of "none", "lz4", got integer 1
      lsm = 5                                  | a table, got integer 5
      lsm.bloom = 16                           | a table, got integer 16
      """)
  void wrongTypesAreRejected(String assignment, String expected) {
    String key = assignment.substring(0, assignment.indexOf(" ="));
    assertThatThrownBy(() -> EngineConfig.parse(assignment))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(key + " must be " + expected);
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '`',
      textBlock =
          """
      lsm.memtable_size = true       | lsm.memtable_size    | boolean true
      lsm.block_size = 4096.0        | lsm.block_size       | float 4096.0
      lsm.block_cache_size = []      | lsm.block_cache_size | an array
      lsm.memtable_size.bytes = 1    | lsm.memtable_size    | a table
      """)
  void sizesOfTheWrongTypeAreRejected(String assignment, String key, String got) {
    assertThatThrownBy(() -> EngineConfig.parse(assignment))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            key + " must be a size (integer bytes, or a string such as \"64MiB\"), got " + got);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "lsm.bloom.level_0 = 99",
        "lsm.bloom.default = -1",
        "lsm.compaction.threads = 0",
        "lsm.compaction.num_levels = 1",
        "lsm.compaction.max_bytes_for_level_base = \"1KiB\"",
        "lsm.compaction.tombstone_weight = -1",
        "lsm.compaction.age_weight = 100.5",
        "lsm.compaction.age_cap_days = nan",
        "lsm.compaction.age_cap_days = inf",
        "lsm.memtable_size = \"1KiB\"",
        "lsm.memtable_size = \"5GiB\"",
        "lsm.memtable_size = \"12 parsecs\"",
        "lsm.block_cache_size = -1",
        "lsm.block_size = \"128B\"",
        "lsm.block_size = \"3GiB\"",
        "lsm.block_restart_interval = 0",
        "lsm.write_pressure.max_immutable_memtables = 65",
        "lsm.write_pressure.level0_stop_writes_trigger = 10",
        "lsm.blob.gc_threshold_ratio = 0",
        "lsm.blob.min_value_size_bytes = 0",
        "lsm.max_open_files = 15",
        "lsm.index_and_filter_memory = \"512KiB\"",
      })
  void outOfRangeValuesAreRejectedNamingTheKey(String assignment) {
    String key = assignment.substring(0, assignment.indexOf(" ="));
    assertThatThrownBy(() -> EngineConfig.parse(assignment))
        .isInstanceOf(IllegalArgumentException.class)
        // The key, not a longer one sharing its prefix, then the reason.
        .hasMessageMatching(Pattern.quote(key) + ":? \\S.*");
  }

  @ParameterizedTest
  @CsvSource({
    // 2^32 + 16 would wrap to 16, a valid value, if it were truncated to an int.
    "max_open_files, 4294967312",
    "block_restart_interval, 4294967298",
    "max_open_files, -4294967296",
  })
  void integersBeyondIntRangeAreRejectedNotTruncated(String key, long value) {
    assertThatThrownBy(() -> EngineConfig.parse("[lsm]\n" + key + " = " + value + "\n"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("lsm." + key + " must fit in a 32-bit integer, got " + value);
  }

  @Test
  void bloomBitsBeyondIntRangeAreRejectedNotTruncated() {
    assertThatThrownBy(() -> EngineConfig.parse("[lsm.bloom]\nlevel_1 = 4294967312\n"))
        .hasMessageStartingWith("lsm.bloom.level_1 must fit in a 32-bit integer");
  }

  @Test
  void syntaxErrorsGiveLineAndColumn() {
    assertThatThrownBy(() -> EngineConfig.parse("[lsm]\nmax_open_files = 64\nthreads = = 3\n"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("invalid TOML at line 3, column ");
  }

  @Test
  void duplicateKeysAreSyntaxErrors() {
    String toml = "[lsm]\nthreads = 1\n\nmax_open_files = 64\nmax_open_files = 65\n";
    assertThatThrownBy(() -> EngineConfig.parse(toml))
        .hasMessageStartingWith("invalid TOML at line 5, column 1");
  }

  @Test
  void integersBeyondLongRangeAreSyntaxErrors() {
    assertThatThrownBy(() -> EngineConfig.parse("[lsm]\nmemtable_size = 99999999999999999999\n"))
        .hasMessageStartingWith("invalid TOML at line 2, column ");
  }

  @Test
  void loadReadsAFile(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("node.toml");
    Files.writeString(file, "[node]\nid = 1\n[lsm.compaction]\nthreads = 2\n");

    assertThat(EngineConfig.load(file).compaction().threads()).isEqualTo(2);
  }

  @Test
  void loadErrorsNameTheFileAndTheKey(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("node.toml");
    Files.writeString(file, "[lsm.compaction]\nthreads = 0\n");

    assertThatThrownBy(() -> EngineConfig.load(file))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(file + ": lsm.compaction.threads ");
  }

  @Test
  void loadOfAMissingFileNamesTheFile(@TempDir Path dir) {
    Path file = dir.resolve("absent.toml");

    assertThatThrownBy(() -> EngineConfig.load(file))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(file + ": cannot read configuration");
  }

  @Test
  void exampleConfigIsExactlyTheDefaults() {
    assertThat(EngineConfig.load(EXAMPLE)).isEqualTo(EngineOptions.defaults());
  }

  @Test
  void exampleConfigSetsEveryKeyAndNothingElse() throws Exception {
    TomlTable example = Toml.parse(EXAMPLE);

    List<String> keys = new ArrayList<>(example.dottedKeySet());
    assertThat(keys)
        .containsExactlyInAnyOrder(
            "lsm.memtable_size",
            "lsm.block_cache_size",
            "lsm.max_open_files",
            "lsm.index_and_filter_memory",
            "lsm.mmap_reads",
            "lsm.advise_random_reads",
            "lsm.block_size",
            "lsm.block_restart_interval",
            "lsm.compression",
            "lsm.bloom.level_0",
            "lsm.bloom.level_1",
            "lsm.bloom.level_2",
            "lsm.bloom.default",
            "lsm.compaction.level0_file_num_compaction_trigger",
            "lsm.compaction.level_multiplier",
            "lsm.compaction.max_bytes_for_level_base",
            "lsm.compaction.level_base_follows_flushes",
            "lsm.compaction.target_file_size_base",
            "lsm.compaction.num_levels",
            "lsm.compaction.threads",
            "lsm.compaction.tombstone_weight",
            "lsm.compaction.age_weight",
            "lsm.compaction.age_cap_days",
            "lsm.compaction.budget.rate",
            "lsm.compaction.budget.windows",
            "lsm.blob.enabled",
            "lsm.blob.min_value_size_bytes",
            "lsm.blob.gc_threshold_ratio",
            "lsm.blob.file_size",
            "lsm.blob.scan_readahead_size",
            "lsm.blob.advise_random_reads",
            "lsm.write_pressure.enabled",
            "lsm.write_pressure.level0_slowdown_writes_trigger",
            "lsm.write_pressure.level0_stop_writes_trigger",
            "lsm.write_pressure.soft_pending_compaction_bytes_limit",
            "lsm.write_pressure.hard_pending_compaction_bytes_limit",
            "lsm.write_pressure.max_immutable_memtables",
            "lsm.write_pressure.max_delay",
            "lsm.write_pressure.delayed_write_rate");
  }
}
