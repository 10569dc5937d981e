package io.shale.engine.sstable;

/**
 * How tables are laid out.
 *
 * @param blockSize target bytes of a data block before compression (4 KiB: one page read per point
 *     lookup on a cache miss)
 * @param restartInterval entries between full keys in a block (16: seek cost versus prefix
 *     compression)
 */
public record TableWriteOptions(int blockSize, int restartInterval, Compression compression) {
  public TableWriteOptions {
    if (blockSize < 256 || blockSize > (64 << 20)) {
      throw new IllegalArgumentException(
          "lsm.block_size must be in [256B, 64MiB], got " + blockSize);
    }
    if (restartInterval < 1 || restartInterval > 1024) {
      throw new IllegalArgumentException(
          "lsm.block_restart_interval must be in [1, 1024], got " + restartInterval);
    }
  }
}
