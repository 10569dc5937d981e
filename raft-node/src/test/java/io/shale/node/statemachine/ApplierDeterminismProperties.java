package io.shale.node.statemachine;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.shale.engine.Engine;
import io.shale.engine.EngineOptions;
import io.shale.engine.ScanIterator;
import io.shale.engine.ScanOptions;
import io.shale.node.auth.AuthState;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

/**
 * Two replicas applying the same entries from the same state end in the same state with the same
 * replies, whether or not one knows its recent request ids (and skips lookups) and the other looks
 * every id up; applying every entry a second time (a retry of an identified write) changes nothing;
 * an id reused for another command is rejected and changes nothing either.
 */
class ApplierDeterminismProperties {
  @Property(tries = 40)
  void replicasAgreeAndRetriesApplyOnce(@ForAll("histories") List<Command> history)
      throws Exception {
    Path a = Files.createTempDirectory("replica-a");
    Path b = Files.createTempDirectory("replica-b");
    try (Engine ea = Engine.open(a, EngineOptions.defaults());
        Engine eb = Engine.open(b, EngineOptions.defaults())) {
      CommandApplier filtered = new CommandApplier();
      filtered.startFrom(ea);
      CommandApplier lookingUp = new CommandApplier();
      long index = 0;
      for (Command c : history) {
        index++;
        byte[] ra = commit(filtered, ea, c, index);
        byte[] rb = commit(lookingUp, eb, c, index);
        assertThat(ra).isEqualTo(rb);
        if (c instanceof Command.Identified) {
          List<String> before = dump(ea);
          index++;
          byte[] retry = commit(filtered, ea, c, index);
          assertThat(commit(lookingUp, eb, c, index)).isEqualTo(retry);
          if (Reply.decode(ra) instanceof Reply.Rejected) {
            // The id was used earlier for another command: refused again, never applied.
            assertThat(Reply.decode(retry)).isInstanceOf(Reply.Rejected.class);
          } else {
            assertThat(retry).as("a retry gets the first reply").isEqualTo(ra);
          }
          assertThat(dump(ea)).as("a retry changes nothing").isEqualTo(before);
        }
      }
      assertThat(dump(ea)).isEqualTo(dump(eb));
      assertThat(AuthState.load(ea).users()).isEqualTo(AuthState.load(eb).users());
      assertThat(AuthState.load(ea).roles()).isEqualTo(AuthState.load(eb).roles());
    }
  }

  private static byte[] commit(CommandApplier applier, Engine e, Command c, long index) {
    CommandApplier.Applied applied = applier.apply(e, c, index);
    if (!applied.batch().isEmpty()) {
      e.applyCommitted(applied.batch(), index);
    }
    return applied.reply();
  }

  private static List<String> dump(Engine e) {
    List<String> out = new ArrayList<>();
    try (ScanIterator it = e.scan(new ScanOptions(null, null, Long.MAX_VALUE, false, false))) {
      while (it.next()) {
        out.add(new String(it.key(), UTF_8) + "=" + Arrays.toString(it.value()));
      }
    }
    return out;
  }

  @Provide
  Arbitrary<List<Command>> histories() {
    return Arbitraries.frequencyOf(
            Tuple.of(3, CommandArbitraries.plain()),
            Tuple.of(1, CommandArbitraries.identified()),
            Tuple.of(1, CommandArbitraries.identifiedAmong(3)),
            Tuple.of(1, CommandArbitraries.auth()))
        .list()
        .ofMaxSize(25);
  }
}
