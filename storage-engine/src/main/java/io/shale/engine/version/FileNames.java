package io.shale.engine.version;

import java.nio.file.Path;

/** The names of the files in an engine directory. */
public final class FileNames {
  public static final String CURRENT = "CURRENT";
  public static final String LOCK = "LOCK";
  private static final String TABLE_SUFFIX = ".sst";
  private static final String BLOB_SUFFIX = ".blob";
  private static final String MANIFEST_PREFIX = "MANIFEST-";

  private FileNames() {}

  public static Path table(Path dir, long number) {
    return dir.resolve(tableName(number));
  }

  public static String tableName(long number) {
    return String.format("%06d%s", number, TABLE_SUFFIX);
  }

  public static String manifestName(long number) {
    return String.format("%s%06d", MANIFEST_PREFIX, number);
  }

  /** The table number a file name denotes, or -1 if it is not a table name. */
  public static long parseTable(String name) {
    if (!name.endsWith(TABLE_SUFFIX)) {
      return -1;
    }
    return parseNumber(name.substring(0, name.length() - TABLE_SUFFIX.length()));
  }

  public static Path blob(Path dir, long number) {
    return dir.resolve(blobName(number));
  }

  public static String blobName(long number) {
    return String.format("%06d%s", number, BLOB_SUFFIX);
  }

  /** The blob file number a file name denotes, or -1. */
  public static long parseBlob(String name) {
    if (!name.endsWith(BLOB_SUFFIX)) {
      return -1;
    }
    return parseNumber(name.substring(0, name.length() - BLOB_SUFFIX.length()));
  }

  /** The manifest number a file name denotes, or -1. */
  public static long parseManifest(String name) {
    if (!name.startsWith(MANIFEST_PREFIX)) {
      return -1;
    }
    return parseNumber(name.substring(MANIFEST_PREFIX.length()));
  }

  private static long parseNumber(String s) {
    if (s.isEmpty() || s.length() > 18) {
      return -1;
    }
    for (int i = 0; i < s.length(); i++) {
      if (s.charAt(i) < '0' || s.charAt(i) > '9') {
        return -1;
      }
    }
    return Long.parseLong(s);
  }
}
