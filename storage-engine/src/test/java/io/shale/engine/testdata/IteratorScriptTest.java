package io.shale.engine.testdata;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.shale.engine.iterator.Direction;
import io.shale.engine.iterator.InternalIterator;
import io.shale.engine.iterator.MergingIterator;
import io.shale.engine.iterator.VisibleEntryIterator;
import io.shale.engine.key.ValueKind;
import io.shale.engine.memtable.Memtable;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * {@code testdata/iterator}: the merging iterator over several sources (memtables) and the
 * visible-entry iterator above it (snapshots, tombstones, ranges, limits, both directions).
 *
 * <pre>
 * define              one source per input line: key.seq:put=value or key.seq:del entries
 * merge [reverse] [seek=k]
 *                     every internal entry the merge yields: key.seq put=value / key.seq del
 * visible seq=N [reverse] [start=k] [end=k] [limit=n] [keys-only]
 *                     what a reader at sequence N sees: key=value
 * </pre>
 */
class IteratorScriptTest {
  @TestFactory
  Stream<DynamicTest> iteratorScripts() {
    return DataDrivenFile.tests("iterator", Handler::new);
  }

  private static final class Handler implements Function<DataDrivenFile.Case, String> {
    private final List<Memtable> sources = new ArrayList<>();

    @Override
    public String apply(DataDrivenFile.Case c) {
      return switch (c.command()) {
        case "define" -> define(c);
        case "merge" -> merge(c);
        case "visible" -> visible(c);
        default -> throw new IllegalArgumentException("unknown command " + c.command());
      };
    }

    private String define(DataDrivenFile.Case c) {
      sources.clear();
      for (String line : c.input()) {
        Memtable m = new Memtable(sources.size());
        for (String entry : line.trim().split("\\s+")) {
          int dot = entry.lastIndexOf('.', entry.indexOf(':'));
          String key = entry.substring(0, dot);
          long seq = Long.parseLong(entry.substring(dot + 1, entry.indexOf(':')));
          String op = entry.substring(entry.indexOf(':') + 1);
          if (op.equals("del")) {
            m.add(key.getBytes(UTF_8), seq, ValueKind.TOMBSTONE, new byte[0]);
          } else if (op.startsWith("put=")) {
            m.add(key.getBytes(UTF_8), seq, ValueKind.VALUE, op.substring(4).getBytes(UTF_8));
          } else {
            throw new IllegalArgumentException("bad entry " + entry);
          }
        }
        sources.add(m);
      }
      return sources.size() + " sources";
    }

    private InternalIterator merged(Direction d) {
      List<InternalIterator> children = new ArrayList<>();
      for (Memtable m : sources) {
        children.add(m.iterator(d));
      }
      return new MergingIterator(children, d);
    }

    private String merge(DataDrivenFile.Case c) {
      Direction d = c.has("reverse") ? Direction.REVERSE : Direction.FORWARD;
      StringBuilder out = new StringBuilder();
      try (InternalIterator it = merged(d)) {
        String seek = c.arg("seek", null);
        if (seek == null) {
          it.seekToFirst();
        } else {
          it.seek(seek.getBytes(UTF_8));
        }
        for (; it.valid(); it.next()) {
          out.append(new String(it.userKey(), UTF_8))
              .append('.')
              .append(it.sequence())
              .append(
                  it.kind() == ValueKind.TOMBSTONE
                      ? " del"
                      : " put=" + new String(it.value(), UTF_8))
              .append('\n');
        }
      }
      return out.length() == 0 ? "(empty)" : out.toString();
    }

    private String visible(DataDrivenFile.Case c) {
      Direction d = c.has("reverse") ? Direction.REVERSE : Direction.FORWARD;
      byte[] start = bytes(c.arg("start", null));
      byte[] end = bytes(c.arg("end", null));
      long seq = Long.parseLong(c.arg("seq", String.valueOf(Long.MAX_VALUE >> 8)));
      long limit = Long.parseLong(c.arg("limit", "0"));
      StringBuilder out = new StringBuilder();
      try (VisibleEntryIterator it =
          new VisibleEntryIterator(merged(d), d, start, end, seq, limit, c.has("keys-only"))) {
        while (it.next()) {
          out.append(new String(it.key(), UTF_8));
          if (!c.has("keys-only")) {
            out.append('=').append(new String(it.value(), UTF_8));
          }
          out.append('\n');
        }
      }
      return out.length() == 0 ? "(empty)" : out.toString();
    }

    private static byte[] bytes(String s) {
      return s == null ? null : s.getBytes(UTF_8);
    }
  }
}
