package io.shale.node.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The data directory's cluster name: recorded at the first start (a directory from before the file
 * existed gets it then), accepted under the same name, refused under another, and a damaged or
 * unknown file refused naming it.
 */
class ClusterIdentityTest {
  @TempDir Path dir;

  @Test
  void theFirstStartRecordsTheNameAndLaterStartsMustMatchIt() throws IOException {
    assertThat(ClusterIdentity.read(dir)).isNull();
    ClusterIdentity.claim(dir, "prod");
    assertThat(ClusterIdentity.read(dir)).isEqualTo("prod");
    ClusterIdentity.claim(dir, "prod");
    assertThatThrownBy(() -> ClusterIdentity.claim(dir, "staging"))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("belongs to cluster \"prod\"")
        .hasMessageContaining("node.cluster is \"staging\"");
  }

  @Test
  void aDamagedOrUnknownFileIsRefusedNamingIt() throws IOException {
    ClusterIdentity.write(dir, "prod");
    Path file = dir.resolve("CLUSTER");
    String good = Files.readString(file);
    Files.writeString(file, good.replace("prod", "prxd"));
    assertThatThrownBy(() -> ClusterIdentity.read(dir))
        .isInstanceOf(IOException.class)
        .hasMessageContaining(file.toString());
    Files.writeString(file, good.replace("identity 1", "identity 2"));
    assertThatThrownBy(() -> ClusterIdentity.claim(dir, "prod"))
        .hasMessageContaining("unknown version");
  }
}
