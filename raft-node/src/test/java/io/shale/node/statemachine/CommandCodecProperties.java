package io.shale.node.statemachine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/**
 * Whatever bytes reach the Raft log, decoding either yields a valid command or refuses the entry
 * with an {@link IllegalArgumentException}: never another exception, never a reserved or oversized
 * key, never unbounded work.
 */
class CommandCodecProperties {
  @Property(tries = 2000)
  void arbitraryBytesDecodeOrAreRefusedByName(@ForAll @Size(max = 64) byte[] body) {
    byte[] entry =
        ByteBuffer.allocate(2 + body.length).put((byte) 0x53).put((byte) 1).put(body).array();
    try {
      Command c = CommandCodec.decode(entry);
      assertThat(c).isNotNull();
    } catch (IllegalArgumentException refused) {
      assertThat(refused.getMessage()).isNotBlank();
    }
  }

  @Property(tries = 500)
  void mutatedEntriesDecodeOrAreRefusedByName(
      @ForAll @IntRange(min = 0, max = 40) int at, @ForAll byte value) {
    byte[] entry =
        CommandCodec.encode(
            new Command.Identified(
                "id".getBytes(),
                new Command.Batch(
                    List.of(
                        new Command.Op("key".getBytes(), "value".getBytes()),
                        new Command.Op("k2".getBytes(), null)))));
    entry[at % entry.length] = value;
    try {
      Command c = CommandCodec.decode(entry);
      Command inner = c instanceof Command.Identified id ? id.command() : c;
      if (inner instanceof Command.Batch b) {
        for (Command.Op op : b.ops()) {
          assertThat(op.key()).isNotEmpty();
          assertThat(op.key()[0]).isNotZero();
        }
      }
    } catch (IllegalArgumentException refused) {
      assertThat(refused.getMessage()).isNotBlank();
    }
  }

  /**
   * An entry decodes to a command that encodes back to the same bytes, so a request-identified
   * command's hash, which the decoder takes from the entry's bytes, is the hash of its encoding.
   */
  @Property(tries = 1000)
  void entriesRoundTripAndIdentifiedHashesMatchTheirEncoding(
      @ForAll("anyCommand") Command command) {
    byte[] entry = CommandCodec.encode(command);
    Command decoded = CommandCodec.decode(entry);
    assertThat(CommandCodec.encode(decoded)).isEqualTo(entry);
    List<Command> parts = decoded instanceof Command.Group g ? g.commands() : List.of(decoded);
    for (Command c : parts) {
      if (c instanceof Command.Identified id) {
        assertThat(id.commandHash()).isEqualTo(RequestRecords.hash(id.command()));
      }
    }
  }

  /**
   * Whatever one byte of an identified entry is changed to, the decoder either refuses the entry or
   * accepts exactly what encodes back to it (decoding is strict), with the hash of that.
   */
  @Property(tries = 2000)
  void mutatedIdentifiedEntriesDecodeStrictly(
      @ForAll("identifiedCommand") Command command,
      @ForAll @IntRange(min = 0, max = 200) int at,
      @ForAll byte value) {
    byte[] entry = CommandCodec.encode(command);
    entry[at % entry.length] = value;
    Command decoded;
    try {
      decoded = CommandCodec.decode(entry);
    } catch (IllegalArgumentException refused) {
      return;
    }
    if (decoded instanceof Command.Identified id && id.commandHash() != null) {
      assertThat(CommandCodec.encode(decoded)).isEqualTo(entry);
      assertThat(id.commandHash()).isEqualTo(RequestRecords.hash(id.command()));
    }
  }

  @Provide
  Arbitrary<Command> anyCommand() {
    return Arbitraries.oneOf(
        CommandArbitraries.plain(),
        CommandArbitraries.identified(),
        CommandArbitraries.group(),
        CommandArbitraries.auth());
  }

  @Provide
  Arbitrary<Command> identifiedCommand() {
    return CommandArbitraries.identified();
  }

  @Test
  void aDecodedEntryIsReadInPlaceFromAReadOnlyBuffer() {
    Command.Identified c =
        new Command.Identified(
            "r".getBytes(),
            new Command.Batch(List.of(new Command.Op("k".getBytes(), "v".getBytes()))));
    byte[] entry = CommandCodec.encode(c);
    ByteBuffer framed = ByteBuffer.allocate(entry.length + 8).position(4);
    framed.put(entry).position(4).limit(4 + entry.length);
    Command.Identified d = (Command.Identified) CommandCodec.decode(framed.asReadOnlyBuffer());
    assertThat(d.commandHash()).isEqualTo(RequestRecords.hash(c.command()));
    assertThat(((Command.Batch) d.command()).ops().get(0).value()).isEqualTo("v".getBytes());
  }

  @Test
  void nonCanonicalFlagsAreRefused() {
    byte[] range = CommandCodec.encode(new Command.DeleteRange("a".getBytes(), null, 10));
    range[range.length - 1] = 7; // the has-end flag
    assertThatThrownBy(() -> CommandCodec.decode(range)).hasMessageContaining("end flag 7");
    byte[] cas =
        CommandCodec.encode(
            new Command.CompareAndSet("k".getBytes(), null, new Command.Op("k".getBytes(), null)));
    cas[3 + 4 + 1] = 9; // the expectation byte
    assertThatThrownBy(() -> CommandCodec.decode(cas)).hasMessageContaining("expectation 9");
    byte[] casIndex =
        CommandCodec.encode(
            new Command.CompareAndSet(
                "k".getBytes(), null, 5, new Command.Op("k".getBytes(), null)));
    ByteBuffer.wrap(casIndex).putLong(3 + 4 + 1 + 1, -2);
    assertThatThrownBy(() -> CommandCodec.decode(casIndex))
        .hasMessageContaining("negative modification index");
  }

  /** A raw entry (from any Raft client) writing a reserved key is refused when decoded. */
  @Test
  void reservedAndOversizedKeysInARawEntryAreRefused() {
    byte[] reserved = rawBatchPut(new byte[] {0, 't', 'e', 'r', 'm'});
    assertThatThrownBy(() -> CommandCodec.decode(reserved)).hasMessageContaining("reserved");
    byte[] huge = rawBatchPut(new byte[CommandCodec.MAX_KEY_BYTES + 1]);
    huge[7 + 1 + 4] = 'x';
    assertThatThrownBy(() -> CommandCodec.decode(huge)).hasMessageContaining("exceeds the limit");
  }

  /** Groups nested a million deep are refused at the first level, without recursing. */
  @Test
  void nestedGroupsAreRefusedWithoutRecursion() {
    byte[] inner =
        CommandCodec.encode(new Command.Batch(List.of(new Command.Op("k".getBytes(), null))));
    for (int depth = 0; depth < 1000; depth++) {
      inner =
          ByteBuffer.allocate(3 + 4 + 4 + inner.length)
              .put((byte) 0x53)
              .put((byte) 1)
              .put(CommandCodec.GROUP)
              .putInt(1)
              .putInt(inner.length)
              .put(inner)
              .array();
    }
    byte[] nested = inner;
    assertThatThrownBy(() -> CommandCodec.decode(nested))
        .hasMessageContaining("may not hold a group");
  }

  @Test
  void countsBeyondTheHardCapsAreRefused() {
    assertThatThrownBy(
            () ->
                CommandCodec.decode(
                    ByteBuffer.allocate(3 + 4 + 4 * (CommandCodec.MAX_BATCH_OPS + 1) * 3)
                        .put((byte) 0x53)
                        .put((byte) 1)
                        .put(CommandCodec.BATCH)
                        .putInt(CommandCodec.MAX_BATCH_OPS + 1)
                        .array()))
        .isInstanceOf(IllegalArgumentException.class);
    byte[] range = CommandCodec.encode(new Command.DeleteRange("a".getBytes(), null, 10));
    ByteBuffer.wrap(range).putInt(3, CommandCodec.MAX_DELETE_RANGE_KEYS + 1);
    assertThatThrownBy(() -> CommandCodec.decode(range)).hasMessageContaining("keys per entry");
  }

  private static byte[] rawBatchPut(byte[] key) {
    return ByteBuffer.allocate(3 + 4 + 1 + 4 + key.length + 4 + 1)
        .put((byte) 0x53)
        .put((byte) 1)
        .put(CommandCodec.BATCH)
        .putInt(1)
        .put((byte) 1)
        .putInt(key.length)
        .put(key)
        .putInt(1)
        .put((byte) 'v')
        .array();
  }
}
