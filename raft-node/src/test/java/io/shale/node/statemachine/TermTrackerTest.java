package io.shale.node.statemachine;

import static org.assertj.core.api.Assertions.assertThat;

import io.shale.engine.Engine;
import io.shale.engine.EngineOptions;
import io.shale.engine.WriteBatch;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class TermTrackerTest {
  @Test
  void theFirstEntryOfATermRecordsItAndTheTermSurvivesAReopen() throws Exception {
    Path dir = Files.createTempDirectory("terms");
    TermTracker terms = new TermTracker();
    try (Engine e = Engine.open(dir, EngineOptions.defaults())) {
      assertThat(terms.recover(e)).isEqualTo(-1);
      long index = 0;
      for (long term : new long[] {1, 1, 1, 3, 3, 4}) {
        index++;
        WriteBatch batch = new WriteBatch().put(new byte[] {'k'}, new byte[] {(byte) index});
        terms.onApply(term, index, batch);
        assertThat(batch.size()).isEqualTo(index == 1 || index == 4 || index == 6 ? 2 : 1);
        e.applyCommitted(batch, index);
      }
      assertThat(terms.termOf(2)).isEqualTo(1);
      assertThat(terms.termOf(4)).isEqualTo(3);
      assertThat(terms.termOf(5)).isEqualTo(3);
      assertThat(terms.termOf(6)).isEqualTo(4);
      e.flush();
    }
    TermTracker reopened = new TermTracker();
    try (Engine e = Engine.open(dir, EngineOptions.defaults())) {
      assertThat(reopened.recover(e)).isEqualTo(4);
      assertThat(reopened.termOf(6)).isEqualTo(4);
      WriteBatch sameTerm = new WriteBatch();
      reopened.onApply(4, 7, sameTerm);
      assertThat(sameTerm.isEmpty()).isTrue();
    }
  }
}
