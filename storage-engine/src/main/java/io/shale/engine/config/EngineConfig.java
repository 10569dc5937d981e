package io.shale.engine.config;

import io.shale.engine.EngineOptions;
import io.shale.engine.blob.BlobOptions;
import io.shale.engine.bloom.BloomPolicy;
import io.shale.engine.compaction.CompactionOptions;
import io.shale.engine.compaction.CompactionScore;
import io.shale.engine.pressure.IoBudgetOptions;
import io.shale.engine.pressure.WritePressureOptions;
import io.shale.engine.sstable.Compression;
import io.shale.engine.sstable.TableWriteOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.tomlj.Toml;
import org.tomlj.TomlArray;
import org.tomlj.TomlParseError;
import org.tomlj.TomlParseResult;
import org.tomlj.TomlTable;

/**
 * Reads the {@code [lsm]} part of a node's TOML file into {@link EngineOptions}. Keys the file
 * leaves out keep their {@link EngineOptions#defaults()} value.
 *
 * <p>The file is shared with the server, so top-level tables other than {@code [lsm]} are left
 * alone. Inside {@code [lsm]} every key must be known: a misspelled key would otherwise be ignored
 * and the engine would quietly run with a default its operator thinks they changed.
 *
 * <p>Every problem is an {@link IllegalArgumentException} whose message names the full dotted key
 * (or the line and column, for TOML syntax errors), so it can be shown to the operator as is.
 */
public final class EngineConfig {
  private static final List<String> LSM_KEYS =
      List.of(
          "memtable_size",
          "block_cache_size",
          "max_open_files",
          "index_and_filter_memory",
          "mmap_reads",
          "advise_random_reads",
          "block_size",
          "block_restart_interval",
          "compression");
  private static final List<String> LSM_TABLES =
      List.of("bloom", "compaction", "blob", "write_pressure");
  private static final List<String> BLOB_KEYS =
      List.of(
          "enabled",
          "min_value_size_bytes",
          "gc_threshold_ratio",
          "file_size",
          "scan_readahead_size",
          "advise_random_reads");
  private static final List<String> WRITE_PRESSURE_KEYS =
      List.of(
          "enabled",
          "level0_slowdown_writes_trigger",
          "level0_stop_writes_trigger",
          "soft_pending_compaction_bytes_limit",
          "hard_pending_compaction_bytes_limit",
          "max_immutable_memtables",
          "max_delay",
          "delayed_write_rate");
  private static final List<String> BUDGET_KEYS = List.of("rate", "windows");
  private static final List<String> BLOOM_KEYS =
      List.of("level_0", "level_1", "level_2", "default");
  private static final List<String> COMPACTION_KEYS =
      List.of(
          "level0_file_num_compaction_trigger",
          "level_multiplier",
          "max_bytes_for_level_base",
          "level_base_follows_flushes",
          "target_file_size_base",
          "num_levels",
          "threads",
          "tombstone_weight",
          "age_weight",
          "age_cap_days");
  private static final int MAX_REPORTED_SYNTAX_ERRORS = 5;

  private EngineConfig() {}

  /**
   * Reads and parses {@code file}. One exception type covers both "cannot read" and "bad contents"
   * because a caller at startup handles them the same way: print and refuse to start.
   *
   * @throws IllegalArgumentException if the file cannot be read or is not a valid configuration;
   *     the message starts with the file's path
   */
  public static EngineOptions load(Path file) {
    String text;
    try {
      text = Files.readString(file);
    } catch (IOException e) {
      throw new IllegalArgumentException(file + ": cannot read configuration: " + e, e);
    }
    try {
      return parse(text);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
    }
  }

  /**
   * Parses TOML text.
   *
   * @throws IllegalArgumentException on a syntax error, an unknown key or table inside {@code
   *     [lsm]}, a value of the wrong type, or a value out of range
   */
  public static EngineOptions parse(String tomlText) {
    return parse(tomlText, EngineOptions.defaults());
  }

  /**
   * Parses TOML text; a key it leaves out keeps its value in {@code d} (a host that embeds the
   * engine, such as a node sharing its heap with Raft, may default some keys otherwise).
   *
   * @throws IllegalArgumentException as {@link #parse(String)}
   */
  public static EngineOptions parse(String tomlText, EngineOptions d) {
    TomlParseResult toml = Toml.parse(tomlText);
    if (toml.hasErrors()) {
      throw syntaxError(toml.errors());
    }
    // Unknown keys are checked in every table before any value is read: a misspelled key is
    // the more likely root cause than whatever else looks wrong.
    Section lsm = new Section(List.of("lsm"), table(toml, List.of(), "lsm"), LSM_KEYS, LSM_TABLES);
    Section bloom = lsm.child("bloom", BLOOM_KEYS, List.of());
    Section compaction = lsm.child("compaction", COMPACTION_KEYS, List.of("budget"));
    Section blob = lsm.child("blob", BLOB_KEYS, List.of());
    Section pressure = lsm.child("write_pressure", WRITE_PRESSURE_KEYS, List.of());
    Section budget = compaction.child("budget", BUDGET_KEYS, List.of());

    TableWriteOptions table =
        new TableWriteOptions(
            lsm.intSize("block_size", d.table().blockSize()),
            lsm.integer("block_restart_interval", d.table().restartInterval()),
            lsm.compression("compression", d.table().compression()));
    BloomPolicy b = d.bloom();
    BloomPolicy bloomPolicy =
        new BloomPolicy(
            bloom.integer("level_0", b.level0()),
            bloom.integer("level_1", b.level1()),
            bloom.integer("level_2", b.level2()),
            bloom.integer("default", b.deeper()));
    CompactionOptions c = d.compaction();
    CompactionScore s = c.score();
    CompactionOptions compactionOptions =
        new CompactionOptions(
            compaction.integer(
                "level0_file_num_compaction_trigger", c.level0FileNumCompactionTrigger()),
            compaction.integer("level_multiplier", c.levelMultiplier()),
            compaction.size("max_bytes_for_level_base", c.maxBytesForLevelBase()),
            compaction.bool("level_base_follows_flushes", c.levelBaseFollowsFlushes()),
            compaction.size("target_file_size_base", c.targetFileSizeBytes()),
            compaction.integer("num_levels", c.numLevels()),
            compaction.integer("threads", c.threads()),
            new CompactionScore(
                compaction.number("tombstone_weight", s.tombstoneWeight()),
                compaction.number("age_weight", s.ageWeight()),
                compaction.number("age_cap_days", s.ageCapDays())));
    BlobOptions bl = d.blob();
    BlobOptions blobOptions =
        new BlobOptions(
            blob.bool("enabled", bl.enabled()),
            blob.integer("min_value_size_bytes", bl.minValueSizeBytes()),
            blob.number("gc_threshold_ratio", bl.gcThresholdRatio()),
            blob.size("file_size", bl.fileSizeBytes()),
            blob.intSize("scan_readahead_size", bl.scanReadaheadBytes()),
            blob.bool("advise_random_reads", bl.adviseRandomReads()));
    WritePressureOptions w = d.writePressure();
    WritePressureOptions pressureOptions =
        new WritePressureOptions(
            pressure.bool("enabled", w.enabled()),
            pressure.integer("level0_slowdown_writes_trigger", w.level0SlowdownWritesTrigger()),
            pressure.integer("level0_stop_writes_trigger", w.level0StopWritesTrigger()),
            pressure.size(
                "soft_pending_compaction_bytes_limit", w.softPendingCompactionBytesLimit()),
            pressure.size(
                "hard_pending_compaction_bytes_limit", w.hardPendingCompactionBytesLimit()),
            pressure.integer("max_immutable_memtables", w.maxImmutableMemtables()),
            pressure.duration("max_delay", w.maxDelay()),
            pressure.size("delayed_write_rate", w.delayedWriteRate()));
    IoBudgetOptions budgetOptions =
        new IoBudgetOptions(
            budget.rate("rate", d.budget().bytesPerSecond()), budget.windows("windows"));
    return new EngineOptions(
        lsm.size("memtable_size", d.memtableSizeBytes()),
        lsm.size("block_cache_size", d.blockCacheBytes()),
        lsm.integer("max_open_files", d.maxOpenFiles()),
        lsm.size("index_and_filter_memory", d.indexAndFilterMemoryBytes()),
        lsm.bool("mmap_reads", d.mmapReads()),
        lsm.bool("advise_random_reads", d.adviseRandomReads()),
        table,
        bloomPolicy,
        compactionOptions,
        blobOptions,
        pressureOptions,
        budgetOptions);
  }

  private static IllegalArgumentException syntaxError(List<TomlParseError> errors) {
    String shown =
        errors.stream()
            .limit(MAX_REPORTED_SYNTAX_ERRORS)
            .map(e -> e.position() + ": " + e.getMessage())
            .collect(Collectors.joining("; "));
    int hidden = errors.size() - MAX_REPORTED_SYNTAX_ERRORS;
    return new IllegalArgumentException(
        "invalid TOML at " + shown + (hidden > 0 ? " (and " + hidden + " more errors)" : ""));
  }

  /** The table at {@code parent.name}, or null if absent. */
  private static TomlTable table(TomlTable parent, List<String> parentPath, String name) {
    Object value = parent.get(List.of(name));
    if (value == null || value instanceof TomlTable) {
      return (TomlTable) value;
    }
    throw new IllegalArgumentException(
        dotted(parentPath, name) + " must be a table, got " + describe(value));
  }

  private static String dotted(List<String> path, String key) {
    List<String> full = new ArrayList<>(path);
    full.add(key);
    return Toml.joinKeyPath(full);
  }

  private static String describe(Object value) {
    if (value instanceof String text) {
      return "string \"" + Toml.tomlEscape(text) + "\"";
    }
    if (value instanceof Long) {
      return "integer " + value;
    }
    if (value instanceof Double) {
      return "float " + value;
    }
    if (value instanceof Boolean) {
      return "boolean " + value;
    }
    if (value instanceof TomlArray) {
      return "an array";
    }
    if (value instanceof TomlTable) {
      return "a table";
    }
    return "date/time " + value;
  }

  /** One table under {@code [lsm]}, possibly absent from the file, read with typed getters. */
  private static final class Section {
    private final List<String> path;
    private final TomlTable table;
    private final List<String> keys;

    Section(List<String> path, TomlTable table, List<String> keys, List<String> tables) {
      this.path = path;
      this.table = table;
      this.keys = keys;
      if (table != null) {
        rejectUnknown(tables);
      }
    }

    /** A sub-table with its known keys and known sub-tables. */
    Section child(String name, List<String> childKeys, List<String> childTables) {
      List<String> childPath = new ArrayList<>(path);
      childPath.add(name);
      TomlTable child = table == null ? null : table(table, path, name);
      return new Section(List.copyOf(childPath), child, childKeys, childTables);
    }

    private void rejectUnknown(List<String> tables) {
      String here = "[" + Toml.joinKeyPath(path) + "]";
      for (String key : table.keySet()) {
        if (keys.contains(key) || tables.contains(key)) {
          continue;
        }
        if (table.get(List.of(key)) instanceof TomlTable) {
          String known =
              tables.isEmpty()
                  ? "none"
                  : tables.stream()
                      .map(t -> "[" + dotted(path, t) + "]")
                      .collect(Collectors.joining(", "));
          throw new IllegalArgumentException(
              "unknown configuration table ["
                  + dotted(path, key)
                  + "] (known tables in "
                  + here
                  + ": "
                  + known
                  + ")");
        }
        throw new IllegalArgumentException(
            "unknown configuration key "
                + dotted(path, key)
                + " (known keys in "
                + here
                + ": "
                + String.join(", ", keys)
                + ")");
      }
    }

    int integer(String key, int fallback) {
      Object value = get(key);
      if (value == null) {
        return fallback;
      }
      if (!(value instanceof Long n)) {
        throw typeError(key, "an integer", value);
      }
      return toInt(key, n);
    }

    long size(String key, long fallback) {
      Object value = get(key);
      if (value == null) {
        return fallback;
      }
      if (value instanceof String text) {
        return ByteSize.parse(name(key), text);
      }
      if (!(value instanceof Long n)) {
        throw typeError(key, "a size (integer bytes, or a string such as \"64MiB\")", value);
      }
      if (n < 0) {
        throw new IllegalArgumentException(name(key) + " must not be negative, got " + n);
      }
      return n;
    }

    /** A size held in an int by the records (block sizes). */
    int intSize(String key, int fallback) {
      long n = size(key, fallback);
      if (n > Integer.MAX_VALUE) {
        throw new IllegalArgumentException(
            name(key) + " must be below 2GiB, got " + ByteSize.format(n));
      }
      return (int) n;
    }

    /** A float; an integer is accepted too, since "3" for a weight of 3.0 is not a mistake. */
    double number(String key, double fallback) {
      Object value = get(key);
      if (value == null) {
        return fallback;
      }
      if (value instanceof Long n) {
        return n;
      }
      if (!(value instanceof Double d)) {
        throw typeError(key, "a number", value);
      }
      // NaN passes every range check (all comparisons are false), so it is stopped here.
      if (!Double.isFinite(d)) {
        throw new IllegalArgumentException(name(key) + " must be a finite number, got " + d);
      }
      return d;
    }

    /** A duration: "100ms", "2s", "1.5s", "0s". */
    Duration duration(String key, Duration fallback) {
      Object value = get(key);
      if (value == null) {
        return fallback;
      }
      if (value instanceof String text) {
        java.util.regex.Matcher m =
            java.util.regex.Pattern.compile("\\s*(\\d+(?:\\.\\d+)?)\\s*(ms|s)\\s*").matcher(text);
        if (m.matches()) {
          double n = Double.parseDouble(m.group(1));
          return Duration.ofNanos((long) (n * (m.group(2).equals("ms") ? 1e6 : 1e9)));
        }
      }
      throw typeError(key, "a duration such as \"100ms\" or \"2s\"", value);
    }

    /** Bytes per second: a size ("32MiB", meaning per second), 0 or "unlimited". */
    long rate(String key, long fallback) {
      Object value = get(key);
      if ("unlimited".equals(value)) {
        return 0;
      }
      return size(key, fallback);
    }

    /** {@code windows = [{start = "08:00", end = "20:00", rate = "32MiB"}, ...]}. */
    List<IoBudgetOptions.Window> windows(String key) {
      Object value = get(key);
      if (value == null) {
        return List.of();
      }
      if (!(value instanceof TomlArray array)) {
        throw typeError(key, "an array of {start, end, rate} tables", value);
      }
      List<IoBudgetOptions.Window> out = new ArrayList<>();
      for (int i = 0; i < array.size(); i++) {
        Object item = array.get(i);
        String where = name(key) + "[" + i + "]";
        if (!(item instanceof TomlTable t)) {
          throw new IllegalArgumentException(
              where + " must be a table {start, end, rate}, got " + describe(item));
        }
        for (String k : t.keySet()) {
          if (!List.of("start", "end", "rate").contains(k)) {
            throw new IllegalArgumentException(
                "unknown configuration key " + where + "." + k + " (known keys: start, end, rate)");
          }
        }
        out.add(
            new IoBudgetOptions.Window(
                timeOfDay(where + ".start", t.get("start")),
                timeOfDay(where + ".end", t.get("end")),
                windowRate(where + ".rate", t.get("rate"))));
      }
      return out;
    }

    private static java.time.LocalTime timeOfDay(String name, Object value) {
      if (value instanceof java.time.LocalTime t) {
        return t;
      }
      if (value instanceof String text) {
        try {
          return java.time.LocalTime.parse(text.trim());
        } catch (java.time.format.DateTimeParseException e) {
          // reported below
        }
      }
      throw new IllegalArgumentException(
          name
              + " must be a time of day such as \"08:00\", got "
              + (value == null ? "nothing" : describe(value)));
    }

    private static long windowRate(String name, Object value) {
      if (value == null || "unlimited".equals(value)) {
        return 0;
      }
      if (value instanceof String text) {
        return ByteSize.parse(name, text);
      }
      if (value instanceof Long n && n >= 0) {
        return n;
      }
      throw new IllegalArgumentException(
          name
              + " must be a size per second such as \"32MiB\" or "
              + "\"unlimited\", got "
              + describe(value));
    }

    boolean bool(String key, boolean fallback) {
      Object value = get(key);
      if (value == null) {
        return fallback;
      }
      if (!(value instanceof Boolean b)) {
        throw typeError(key, "true or false", value);
      }
      return b;
    }

    Compression compression(String key, Compression fallback) {
      Object value = get(key);
      if (value == null) {
        return fallback;
      }
      Compression c = value instanceof String text ? Compression.fromName(text) : null;
      if (c == null) {
        throw typeError(key, "one of \"none\", \"lz4\"", value);
      }
      return c;
    }

    private Object get(String key) {
      if (!keys.contains(key)) {
        throw new IllegalStateException(name(key) + " is read but not listed as a known key");
      }
      return table == null ? null : table.get(List.of(key));
    }

    private int toInt(String key, long n) {
      if (n < Integer.MIN_VALUE || n > Integer.MAX_VALUE) {
        throw new IllegalArgumentException(name(key) + " must fit in a 32-bit integer, got " + n);
      }
      return (int) n;
    }

    private String name(String key) {
      return dotted(path, key);
    }

    private IllegalArgumentException typeError(String key, String expected, Object value) {
      return new IllegalArgumentException(
          name(key) + " must be " + expected + ", got " + describe(value));
    }
  }
}
