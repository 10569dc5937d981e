package io.shale.client.backup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * The manifest codec: what is written reads back equal, any flipped byte of it is refused naming
 * the file, and a file's checksums do not depend on how its bytes arrive.
 */
class BackupManifestTest {
  @Property(tries = 200)
  void aWrittenManifestReadsBackEqual(@ForAll("manifests") BackupManifest m) throws IOException {
    Path dir = Files.createTempDirectory("manifest");
    m.write(dir);
    BackupManifest read = BackupManifest.read(dir);
    assertThat(read.cluster()).isEqualTo(m.cluster());
    assertThat(read.node()).isEqualTo(m.node());
    assertThat(read.term()).isEqualTo(m.term());
    assertThat(read.index()).isEqualTo(m.index());
    assertThat(read.created()).isEqualTo(m.created());
    assertThat(read.files()).hasSameSizeAs(m.files());
    for (int i = 0; i < m.files().size(); i++) {
      BackupManifest.FileInfo a = m.files().get(i);
      BackupManifest.FileInfo b = read.files().get(i);
      assertThat(b.name()).isEqualTo(a.name());
      assertThat(b.size()).isEqualTo(a.size());
      assertThat(b.sha256()).isEqualTo(a.sha256());
      assertThat(b.blockCrcs()).isEqualTo(a.blockCrcs());
    }
  }

  @Property(tries = 200)
  void anyFlippedByteOfTheManifestIsRefused(
      @ForAll("manifests") BackupManifest m, @ForAll @IntRange(min = 0, max = 100_000) int at)
      throws IOException {
    Path dir = Files.createTempDirectory("manifest");
    m.write(dir);
    Path file = dir.resolve(BackupManifest.FILE);
    byte[] bytes = Files.readAllBytes(file);
    bytes[at % bytes.length] ^= 0x20;
    Files.write(file, bytes);
    assertThatThrownBy(() -> BackupManifest.read(dir))
        .isInstanceOf(IOException.class)
        .hasMessageContaining(file.toString());
  }

  @Property(tries = 100)
  void checksumsDoNotDependOnHowTheBytesArrive(
      @ForAll @Size(max = 200_000) byte[] data,
      @ForAll @IntRange(min = 1, max = 70_000) int chunk) {
    BackupFiles whole = new BackupFiles();
    whole.update(ByteBuffer.wrap(data));
    BackupFiles pieces = new BackupFiles();
    for (int off = 0; off < data.length; off += chunk) {
      pieces.update(ByteBuffer.wrap(data, off, Math.min(chunk, data.length - off)));
    }
    BackupManifest.FileInfo a = whole.finish("f");
    BackupManifest.FileInfo b = pieces.finish("f");
    assertThat(b.size()).isEqualTo(data.length);
    assertThat(b.sha256()).isEqualTo(a.sha256());
    assertThat(b.blockCrcs())
        .isEqualTo(a.blockCrcs())
        .hasSize((data.length + BackupManifest.BLOCK_BYTES - 1) / BackupManifest.BLOCK_BYTES);
  }

  @Provide
  Arbitrary<BackupManifest> manifests() {
    Arbitrary<String> names =
        Arbitraries.strings().withCharRange('a', 'z').numeric().ofMinLength(1).ofMaxLength(12);
    Arbitrary<BackupManifest.FileInfo> files =
        Combinators.combine(
                names,
                Arbitraries.longs().between(0, 1L << 34),
                Arbitraries.bytes().array(byte[].class).ofSize(32),
                Arbitraries.integers().array(int[].class).ofMaxSize(20))
            .as(BackupManifest.FileInfo::new);
    return Combinators.combine(
            names,
            names,
            Arbitraries.longs().between(0, Long.MAX_VALUE),
            Arbitraries.longs().between(0, Long.MAX_VALUE),
            Arbitraries.longs().between(0, 4_000_000_000L),
            files.list().ofMaxSize(10))
        .as(
            (cluster, node, term, index, seconds, list) ->
                new BackupManifest(
                    cluster,
                    node,
                    term,
                    index,
                    Instant.ofEpochSecond(seconds),
                    new ArrayList<>(list)));
  }
}
