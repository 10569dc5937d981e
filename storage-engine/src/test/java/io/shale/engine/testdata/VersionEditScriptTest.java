package io.shale.engine.testdata;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.shale.engine.sstable.TableProperties;
import io.shale.engine.version.BlobFileMeta;
import io.shale.engine.version.FileMetadata;
import io.shale.engine.version.VersionEdit;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * {@code testdata/version}: version edits described in text, encoded, decoded and printed back, so
 * a script shows exactly what survives the manifest; and damaged encodings.
 *
 * <pre>
 * edit                  input lines: add L&lt;level&gt; #&lt;n&gt; size=&lt;bytes&gt; keys=&lt;lo&gt;..&lt;hi&gt; entries=&lt;n&gt; tombstones=&lt;n&gt;
 *                       | remove L&lt;level&gt; #&lt;n&gt; | applied &lt;i&gt; | next-file &lt;n&gt;
 *                       | blob-add #&lt;n&gt; size=&lt;bytes&gt; values=&lt;n&gt; value-bytes=&lt;n&gt;
 *                       | blob-garbage #&lt;n&gt; bytes=&lt;n&gt; count=&lt;n&gt; | blob-remove #&lt;n&gt;
 *                       prints the decoded edit and the encoded size
 * decode hex=&lt;bytes&gt;     decodes raw bytes: the edit, or the error
 * </pre>
 */
class VersionEditScriptTest {
  @TestFactory
  Stream<DynamicTest> versionEditScripts() {
    return DataDrivenFile.tests("version", () -> VersionEditScriptTest::run);
  }

  private static String run(DataDrivenFile.Case c) {
    return switch (c.command()) {
      case "edit" -> {
        byte[] encoded = parse(c.input()).encode();
        yield print(VersionEdit.decode(encoded)) + "encoded " + encoded.length + " bytes";
      }
      case "decode" -> {
        try {
          yield print(VersionEdit.decode(HexFormat.of().parseHex(c.arg("hex", ""))));
        } catch (RuntimeException e) {
          yield "error: " + e.getMessage();
        }
      }
      default -> throw new IllegalArgumentException("unknown command " + c.command());
    };
  }

  private static long num(String word) {
    return Long.parseLong(word.replace("#", "").replace("L", ""));
  }

  private static String field(String[] words, String name, String fallback) {
    for (String w : words) {
      if (w.startsWith(name + "=")) {
        return w.substring(name.length() + 1);
      }
    }
    return fallback;
  }

  private static VersionEdit parse(List<String> lines) {
    List<VersionEdit.Added> added = new ArrayList<>();
    List<VersionEdit.Removed> removed = new ArrayList<>();
    List<BlobFileMeta> blobs = new ArrayList<>();
    List<VersionEdit.BlobGarbage> garbage = new ArrayList<>();
    List<Long> blobsRemoved = new ArrayList<>();
    long applied = -1;
    long next = -1;
    for (String line : lines) {
      String[] w = line.trim().split("\\s+");
      switch (w[0]) {
        case "add" -> {
          String[] keys = field(w, "keys", "a..z").split("\\.\\.");
          long entries = Long.parseLong(field(w, "entries", "1"));
          TableProperties p =
              new TableProperties(
                  entries,
                  Long.parseLong(field(w, "tombstones", "0")),
                  0,
                  0,
                  1,
                  0,
                  10,
                  keys[0].getBytes(UTF_8),
                  keys[1].getBytes(UTF_8),
                  1,
                  1,
                  0,
                  (int) num(w[1]));
          added.add(
              new VersionEdit.Added(
                  (int) num(w[1]),
                  new FileMetadata(num(w[2]), Long.parseLong(field(w, "size", "0")), p)));
        }
        case "remove" -> removed.add(new VersionEdit.Removed((int) num(w[1]), num(w[2])));
        case "applied" -> applied = Long.parseLong(w[1]);
        case "next-file" -> next = Long.parseLong(w[1]);
        case "blob-add" ->
            blobs.add(
                new BlobFileMeta(
                    num(w[1]),
                    Long.parseLong(field(w, "size", "0")),
                    Long.parseLong(field(w, "value-bytes", "0")),
                    Long.parseLong(field(w, "values", "0")),
                    0,
                    0));
        case "blob-garbage" ->
            garbage.add(
                new VersionEdit.BlobGarbage(
                    num(w[1]),
                    Long.parseLong(field(w, "bytes", "0")),
                    Long.parseLong(field(w, "count", "0"))));
        case "blob-remove" -> blobsRemoved.add(num(w[1]));
        default -> throw new IllegalArgumentException("unknown edit line " + line);
      }
    }
    return new VersionEdit(added, removed, applied, next).withBlobs(blobs, garbage, blobsRemoved);
  }

  private static String print(VersionEdit e) {
    StringBuilder out = new StringBuilder();
    for (VersionEdit.Added a : e.added()) {
      FileMetadata f = a.file();
      out.append("add L")
          .append(a.level())
          .append(" #")
          .append(f.number())
          .append(" size=")
          .append(f.size())
          .append(" keys=")
          .append(new String(f.smallestKey(), UTF_8))
          .append("..")
          .append(new String(f.largestKey(), UTF_8))
          .append(" entries=")
          .append(f.properties().entries())
          .append(" tombstones=")
          .append(f.properties().tombstones())
          .append('\n');
    }
    for (VersionEdit.Removed r : e.removed()) {
      out.append("remove L").append(r.level()).append(" #").append(r.number()).append('\n');
    }
    for (BlobFileMeta b : e.blobsAdded()) {
      out.append("blob-add #")
          .append(b.number())
          .append(" size=")
          .append(b.fileSize())
          .append(" values=")
          .append(b.totalCount())
          .append(" value-bytes=")
          .append(b.totalBytes())
          .append('\n');
    }
    for (VersionEdit.BlobGarbage g : e.blobGarbage()) {
      out.append("blob-garbage #")
          .append(g.number())
          .append(" bytes=")
          .append(g.bytes())
          .append(" count=")
          .append(g.count())
          .append('\n');
    }
    for (long n : e.blobsRemoved()) {
      out.append("blob-remove #").append(n).append('\n');
    }
    if (e.persistedAppliedIndex() >= 0) {
      out.append("applied ").append(e.persistedAppliedIndex()).append('\n');
    }
    if (e.nextFileNumber() >= 0) {
      out.append("next-file ").append(e.nextFileNumber()).append('\n');
    }
    return out.length() == 0 ? "(empty)\n" : out.toString();
  }
}
