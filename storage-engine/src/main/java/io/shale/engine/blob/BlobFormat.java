package io.shale.engine.blob;

/** Constants of the blob file format (see the package documentation). */
final class BlobFormat {
  static final long MAGIC = 0x5348414c45424c42L; // "SHALEBLB"
  static final int VERSION = 1;
  static final int HEADER_SIZE = 16;
  static final int FOOTER_SIZE = 28;

  private BlobFormat() {}
}
