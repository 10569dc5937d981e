package io.shale.engine.metrics;

import io.shale.engine.io.JsonLinesFile;
import io.shale.engine.version.BlobFileMeta;
import io.shale.engine.version.FileMetadata;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The compaction event log: {@code events.jsonl} in the engine directory, a {@link JsonLinesFile}
 * rotated to {@code events.jsonl.1} past {@code maxBytes}. The log is for people and tools; the
 * engine never reads it back, and a failure to write it never fails the engine. The events and
 * their fields are defined here, by {@link #flush}, {@link #compaction} and {@link #blobGc}.
 * Thread-safe.
 */
public final class EventLog implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(EventLog.class);
  public static final String FILE = "events.jsonl";
  private final JsonLinesFile out;

  public EventLog(Path dir, long maxBytes) {
    this.out = new JsonLinesFile(dir.resolve(FILE), maxBytes, 1);
  }

  /** Append one event; {@code json} is an object body without braces, e.g. {@code "a":1,"b":2}. */
  public void append(String json) {
    try {
      out.append(System.currentTimeMillis(), json);
    } catch (IOException e) {
      // Observability must not take the engine down; the meters still count the event.
      LOG.warn("could not write {}: {}", out.file(), e.toString());
    }
  }

  /**
   * {@code memtables} sealed memtables, the oldest {@code memtableId}, were flushed into {@code
   * outputs} (level 0) and {@code blobOutputs}.
   */
  public void flush(
      long memtableId,
      int memtables,
      long entries,
      long appliedIndex,
      List<FileMetadata> outputs,
      List<BlobFileMeta> blobOutputs,
      long nanos) {
    append(
        "\"event\":\"flush\",\"memtable\":"
            + memtableId
            + ",\"memtables\":"
            + memtables
            + ",\"entries\":"
            + entries
            + ",\"applied_index\":"
            + appliedIndex
            + ",\"outputs\":"
            + filesJson(outputs)
            + ",\"blob_outputs\":"
            + blobsJson(blobOutputs)
            + ",\"duration_ms\":"
            + nanos / 1_000_000);
  }

  /** A compaction (or a trivial move) of {@code inputs} and {@code outputLevelInputs}. */
  public void compaction(
      String reason,
      double score,
      int level,
      int outputLevel,
      boolean trivialMove,
      List<FileMetadata> inputs,
      List<FileMetadata> outputLevelInputs,
      List<FileMetadata> outputs,
      long entriesDropped,
      long nanos) {
    append(
        "\"event\":\"compaction\",\"reason\":"
            + quote(reason)
            + ",\"score\":"
            + String.format(Locale.ROOT, "%.4f", score)
            + ",\"level\":"
            + level
            + ",\"output_level\":"
            + outputLevel
            + ",\"trivial_move\":"
            + trivialMove
            + ",\"inputs\":"
            + filesJson(inputs)
            + ",\"output_level_inputs\":"
            + filesJson(outputLevelInputs)
            + ",\"outputs\":"
            + filesJson(outputs)
            + ",\"entries_dropped\":"
            + entriesDropped
            + ",\"duration_ms\":"
            + nanos / 1_000_000);
  }

  /** Blob GC relocated the live values of {@code file}, rewriting {@code inputs}. */
  public void blobGc(
      BlobFileMeta file,
      long relocatedBytes,
      List<FileMetadata> inputs,
      List<FileMetadata> outputs,
      List<BlobFileMeta> blobOutputs,
      long nanos) {
    append(
        "\"event\":\"blob_gc\",\"reason\":\"blob_gc\",\"blob_file\":"
            + file.number()
            + ",\"garbage_ratio\":"
            + String.format(Locale.ROOT, "%.4f", file.garbageRatio())
            + ",\"dead_bytes\":"
            + file.garbageBytes()
            + ",\"relocated_bytes\":"
            + relocatedBytes
            + ",\"inputs\":"
            + filesJson(inputs)
            + ",\"outputs\":"
            + filesJson(outputs)
            + ",\"blob_outputs\":"
            + blobsJson(blobOutputs)
            + ",\"duration_ms\":"
            + nanos / 1_000_000);
  }

  private static String filesJson(List<FileMetadata> files) {
    return jsonArray(
        files,
        f ->
            "{\"file\":"
                + f.number()
                + ",\"bytes\":"
                + f.size()
                + ",\"entries\":"
                + f.properties().entries()
                + ",\"tombstones\":"
                + f.properties().tombstones()
                + ",\"key_bytes\":"
                + f.properties().rawKeyBytes()
                + ",\"value_bytes\":"
                + f.properties().rawValueBytes()
                + ",\"blob_bytes\":"
                + f.properties().blobBytes()
                + "}");
  }

  private static String blobsJson(List<BlobFileMeta> blobs) {
    return jsonArray(
        blobs,
        m ->
            "{\"blob_file\":"
                + m.number()
                + ",\"bytes\":"
                + m.fileSize()
                + ",\"values\":"
                + m.totalCount()
                + ",\"value_bytes\":"
                + m.totalBytes()
                + "}");
  }

  private static <T> String jsonArray(List<T> items, Function<T, String> object) {
    return items.stream().map(object).collect(Collectors.joining(",", "[", "]"));
  }

  /** Quote a string for JSON. */
  public static String quote(String s) {
    return JsonLinesFile.quote(s);
  }

  @Override
  public void close() throws IOException {
    out.close();
  }
}
