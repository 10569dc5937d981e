import io.shale.testing.ShaleCluster;

/**
 * A test on Java 17 that asks for an embedded cluster (SdkOnJava17IT): it must be told that the
 * nodes need Java 25, not fail on a class file version.
 */
public class Java17ClusterAttempt {
  public static void main(String[] args) {
    try {
      ShaleCluster.builder();
      System.out.println("built");
    } catch (UnsupportedOperationException e) {
      System.out.println("refused: " + e.getMessage());
    }
  }
}
