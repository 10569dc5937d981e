package io.shale.node.statemachine;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.shale.engine.Engine;
import io.shale.engine.EngineOptions;
import java.io.IOException;
import java.nio.file.Files;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * The applier on a real engine, without Ratis, as the state machine drives it: {@link #commit}
 * builds an entry's batch and applies it at the next index. A base for the applier's tests.
 */
abstract class ApplierFixture {
  protected final CommandApplier applier = new CommandApplier();
  protected Engine engine;

  /** The index of the last entry committed. */
  protected long index;

  @BeforeEach
  void openEngine() throws IOException {
    engine = Engine.open(Files.createTempDirectory("applier"), EngineOptions.defaults());
  }

  @AfterEach
  void closeEngine() throws IOException {
    engine.close();
  }

  protected static byte[] b(String s) {
    return s.getBytes(UTF_8);
  }

  /** Applies {@code c} as the next entry and returns its decoded reply. */
  protected Reply commit(Command c) {
    index++;
    CommandApplier.Applied a = applier.apply(engine, c, index);
    if (!a.batch().isEmpty()) {
      engine.applyCommitted(a.batch(), index);
    }
    return Reply.decode(a.reply());
  }
}
