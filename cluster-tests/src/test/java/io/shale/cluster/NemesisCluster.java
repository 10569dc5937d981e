package io.shale.cluster;

import io.shale.client.ShaleClient;

/**
 * The nemesis suite's cluster and its client, replaced by a fresh cluster of the same size after a
 * run that failed.
 *
 * <p>Why: a failed run leaves the cluster as the failure left it (a member never added back, a
 * removed peer still sent to, a node whose group stopped), and every run after it then fails on
 * that cluster instead of on its own faults: run 448 after 447, and runs 1013-1025 after 1012, were
 * all lost that way. The failed run keeps its own evidence (its history or the nodes' logs, saved
 * before the replacement); the runs after it start from a cluster that is whole.
 *
 * <p>Not thread-safe: the suite's runs are sequential.
 */
final class NemesisCluster implements AutoCloseable {
  private final int size;
  private DockerCluster cluster;
  private ShaleClient client;
  private int replaced;

  private NemesisCluster(int size) {
    this.size = size;
  }

  /** A formed {@code size}-node cluster (see {@link NemesisRun#cluster}) and its client. */
  static NemesisCluster start(int size) throws Exception {
    NemesisCluster suite = new NemesisCluster(size);
    suite.startFresh();
    return suite;
  }

  private void startFresh() throws Exception {
    cluster = NemesisRun.cluster(size);
    client = NemesisRun.start(cluster);
  }

  /** The cluster the next run uses: not the same object after {@link #replace}. */
  DockerCluster cluster() {
    requireOne();
    return cluster;
  }

  /** The client of {@link #cluster()}. */
  ShaleClient client() {
    requireOne();
    return client;
  }

  private void requireOne() {
    if (cluster == null || client == null) {
      throw new IllegalStateException(
          "no "
              + size
              + "-node nemesis cluster: closed, or its "
              + "replacement after a failed run did not start (that run's failure says why)");
    }
  }

  /** How many times the cluster was replaced since {@link #start}. */
  int replaced() {
    return replaced;
  }

  /**
   * Stops every container of the current cluster (their logs and data go with them: save them
   * first) and starts a fresh one of the same size, formed and with a leader.
   */
  void replace() throws Exception {
    close();
    replaced++;
    startFresh();
  }

  @Override
  public void close() {
    if (client != null) {
      client.close();
      client = null;
    }
    if (cluster != null) {
      cluster.close();
      cluster = null;
    }
  }
}
