package io.shale.engine.key;

/** Renders keys for error messages and logs: printable ASCII as is, other bytes as \xNN. */
public final class KeyFormat {
  private KeyFormat() {}

  public static String printable(byte[] key) {
    if (key == null) {
      return "<unbounded>";
    }
    StringBuilder sb = new StringBuilder(Math.min(key.length, 64) + 8);
    int n = Math.min(key.length, 64);
    for (int i = 0; i < n; i++) {
      int b = key[i] & 0xff;
      if (b >= 0x20 && b < 0x7f && b != '\\') {
        sb.append((char) b);
      } else {
        sb.append(String.format("\\x%02x", b));
      }
    }
    if (key.length > n) {
      sb.append("...(").append(key.length).append(" bytes)");
    }
    return sb.toString();
  }
}
