package io.shale.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.shale.engine.io.Checksums;
import io.shale.engine.io.Varints;
import io.shale.node.server.ClusterIdentity;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * What a node does with a data directory another version wrote: one from before the cluster
 * identity file starts and records it; one whose engine manifest has a format version this node
 * does not know is refused at start, naming the file, and nothing in it is changed.
 */
class UpgradeTest extends ThreeNodeClusterTest {
  @Test
  void aDirectoryFromBeforeTheIdentityFileStartsAndRecordsIt() throws Exception {
    client.put("k", "before");
    cluster.stop("n1");
    Path n1 = dir.resolve("n1");
    Files.delete(n1.resolve("CLUSTER"));
    cluster.start("n1");
    assertThat(ClusterIdentity.read(n1)).isEqualTo("test-cluster");
    client.put("k", "after");
    await(
        () -> cluster.node("n1").stateMachine().getLastAppliedTermIndex().getIndex() > 0,
        Duration.ofSeconds(30),
        "n1 applies again");
    assertThat(client.get("k").valueUtf8()).isEqualTo("after");
  }

  @Test
  void anEngineManifestOfAnUnknownVersionIsRefusedNamingTheFile() throws Exception {
    client.put("k", "v");
    cluster.stop("n1");
    Path engine = dir.resolve("n1").resolve("engine");
    Path manifest;
    try (Stream<Path> s = Files.list(engine)) {
      manifest =
          s.filter(p -> p.getFileName().toString().startsWith("MANIFEST-"))
              .max(java.util.Comparator.naturalOrder())
              .orElseThrow();
    }
    byte[] bytes = Files.readAllBytes(manifest);
    // A well-formed header of version 2: the checksum agrees, only the version is new.
    Varints.writeFixed32(bytes, 8, 2);
    Varints.writeFixed32(bytes, 12, Checksums.crc32c(bytes, 0, 12));
    Files.write(manifest, bytes);
    assertThatThrownBy(() -> cluster.start("n1"))
        .hasStackTraceContaining("unsupported format version 2 (expected 1)")
        .hasStackTraceContaining(manifest.getFileName().toString());
    assertThat(Files.readAllBytes(manifest)).isEqualTo(bytes);
  }
}
