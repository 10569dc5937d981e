package io.shale.node.statemachine;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.shale.engine.Engine;
import io.shale.engine.EngineOptions;
import io.shale.engine.WriteBatch;
import java.nio.file.Files;
import java.util.List;
import org.junit.jupiter.api.Test;

class QueryHandlerTest {
  private static final long PAGE_BYTES = 4L << 20;
  private final QueryHandler handler = new QueryHandler(PAGE_BYTES);

  /**
   * Keys compare as unsigned bytes, as the engine orders them: a range starting or ending at a key
   * whose first byte is 0x80 or above (any non-ASCII UTF-8 key) is neither widened to the first key
   * nor taken for empty.
   */
  @Test
  void rangesBoundedByKeysAbove0x7fAreTheEnginesRanges() throws Exception {
    try (Engine e = Engine.open(Files.createTempDirectory("query"), EngineOptions.defaults())) {
      WriteBatch batch = new WriteBatch();
      for (String k : List.of("a", "z", "\u00e9t\u00e9", "\u00fcber")) {
        batch.put(k.getBytes(UTF_8), "v".getBytes(UTF_8));
      }
      e.applyCommitted(batch, 3);
      Reply.Entries from =
          (Reply.Entries)
              handler.answer(e, 3, new Query.Scan("\u00e9".getBytes(UTF_8), null, 10, false, true));
      assertThat(from.entries())
          .extracting(kv -> new String(kv[0], UTF_8))
          .containsExactly("\u00e9t\u00e9", "\u00fcber");
      Reply.Entries upTo =
          (Reply.Entries)
              handler.answer(
                  e,
                  3,
                  new Query.Scan("a".getBytes(UTF_8), "\u00fc".getBytes(UTF_8), 10, false, true));
      assertThat(upTo.entries())
          .extracting(kv -> new String(kv[0], UTF_8))
          .containsExactly("a", "z", "\u00e9t\u00e9");
    }
  }

  @Test
  void getScanAndPagingHideTheNodesRecords() throws Exception {
    try (Engine e = Engine.open(Files.createTempDirectory("query"), EngineOptions.defaults())) {
      WriteBatch batch = new WriteBatch().put(new byte[] {0, 'x'}, "node".getBytes(UTF_8));
      for (int i = 0; i < 5; i++) {
        batch.put(("k" + i).getBytes(UTF_8), ("v" + i).getBytes(UTF_8));
      }
      e.applyCommitted(batch, 7);

      Reply.Value v = (Reply.Value) handler.answer(e, 7, new Query.Get("k3".getBytes(UTF_8)));
      assertThat(v.value()).isEqualTo("v3".getBytes(UTF_8));
      assertThat(v.modIndex()).isEqualTo(7);
      assertThat(((Reply.Value) handler.answer(e, 7, new Query.Get("zz".getBytes(UTF_8)))).value())
          .isNull();

      Reply.Entries page =
          (Reply.Entries) handler.answer(e, 7, new Query.Scan(new byte[0], null, 3, false, false));
      assertThat(page.entries())
          .extracting(kv -> new String(kv[0], UTF_8))
          .containsExactly("k0", "k1", "k2");
      assertThat(page.more()).isTrue();
      Reply.Entries rest =
          (Reply.Entries)
              handler.answer(e, 7, new Query.Scan("k3".getBytes(UTF_8), null, 3, false, true));
      assertThat(rest.entries())
          .extracting(kv -> new String(kv[0], UTF_8))
          .containsExactly("k3", "k4");
      assertThat(rest.entries().get(0)[1]).isEmpty();
      assertThat(rest.more()).isFalse();
    }
  }

  @Test
  void theNodesRecordsNeverUseUpAPagesLimit() throws Exception {
    try (Engine e = Engine.open(Files.createTempDirectory("query"), EngineOptions.defaults())) {
      WriteBatch batch = new WriteBatch();
      for (int i = 0; i < 50; i++) {
        batch.put(new byte[] {0, 'r', (byte) i}, "record".getBytes(UTF_8));
      }
      batch.put("a".getBytes(UTF_8), "1".getBytes(UTF_8));
      batch.put("b".getBytes(UTF_8), "2".getBytes(UTF_8));
      e.applyCommitted(batch, 1);
      Reply.Entries page =
          (Reply.Entries) handler.answer(e, 1, new Query.Scan(new byte[0], null, 10, false, true));
      assertThat(page.entries())
          .extracting(kv -> new String(kv[0], UTF_8))
          .containsExactly("a", "b");
      Reply.Entries reverse =
          (Reply.Entries) handler.answer(e, 1, new Query.Scan(new byte[0], null, 1, true, true));
      assertThat(reverse.entries()).extracting(kv -> new String(kv[0], UTF_8)).containsExactly("b");
      assertThat(reverse.more()).isTrue();
      Reply.Entries onlyRecords =
          (Reply.Entries)
              handler.answer(
                  e, 1, new Query.Scan(new byte[0], new byte[] {0, 's'}, 10, false, true));
      assertThat(onlyRecords.entries()).isEmpty();
      assertThat(onlyRecords.more()).isFalse();
    }
  }

  @Test
  void aPageEndsPastItsByteBudgetWhateverItsLimit() throws Exception {
    try (Engine e = Engine.open(Files.createTempDirectory("query"), EngineOptions.defaults())) {
      byte[] big = new byte[1 << 20];
      WriteBatch batch = new WriteBatch();
      for (int i = 0; i < 10; i++) {
        batch.put(("big" + i).getBytes(UTF_8), big);
      }
      e.applyCommitted(batch, 1);
      Reply.Entries page =
          (Reply.Entries)
              handler.answer(e, 1, new Query.Scan(new byte[0], null, 1000, false, false));
      assertThat(page.more()).isTrue();
      assertThat(page.entries()).hasSize((int) (PAGE_BYTES / big.length));
    }
  }
}
