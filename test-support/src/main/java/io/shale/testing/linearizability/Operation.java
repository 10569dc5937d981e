package io.shale.testing.linearizability;

import java.util.Objects;

/**
 * One operation of a client on one key's register, as a history records it: who called it, when it
 * was called and when it returned (nanoTime), what it asked and what it got.
 *
 * <ul>
 *   <li>{@link Kind#READ}: {@code output} is the value read (null: absent).
 *   <li>{@link Kind#WRITE}: sets {@code input} (null: delete).
 *   <li>{@link Kind#CAS}: sets {@code input} if the value is {@code expected} (null: absent);
 *       {@code applied} says whether it did.
 * </ul>
 *
 * <p>An operation whose outcome is unknown (a timeout, an indeterminate error) has {@code returned
 * == Long.MAX_VALUE}: it may have taken effect at any point after its call, or never. Values are
 * strings: histories use unique values per write, so a read names its write.
 */
public record Operation(
    int id,
    int process,
    Kind kind,
    String key,
    String input,
    String expected,
    String output,
    boolean applied,
    long called,
    long returned) {
  public enum Kind {
    READ,
    WRITE,
    CAS
  }

  public Operation {
    Objects.requireNonNull(kind);
    Objects.requireNonNull(key);
    if (returned < called) {
      throw new IllegalArgumentException("operation " + id + " returned before it was called");
    }
  }

  /** True when the outcome is unknown (no return recorded). */
  public boolean indeterminate() {
    return returned == Long.MAX_VALUE;
  }

  public static Operation read(
      int id, int process, String key, String output, long called, long returned) {
    return new Operation(id, process, Kind.READ, key, null, null, output, true, called, returned);
  }

  public static Operation write(
      int id, int process, String key, String value, long called, long returned) {
    return new Operation(id, process, Kind.WRITE, key, value, null, null, true, called, returned);
  }

  public static Operation cas(
      int id,
      int process,
      String key,
      String expected,
      String value,
      boolean applied,
      long called,
      long returned) {
    return new Operation(
        id, process, Kind.CAS, key, value, expected, null, applied, called, returned);
  }

  /** A readable line: "p2 cas x 1->2 applied [40, 50]". */
  public String describe() {
    String what =
        switch (kind) {
          case READ -> "read " + key + " -> " + show(output);
          case WRITE -> "write " + key + " = " + show(input);
          case CAS ->
              "cas "
                  + key
                  + " "
                  + show(expected)
                  + "->"
                  + show(input)
                  + (indeterminate()
                      ? " (outcome unknown)"
                      : applied ? " applied" : " not applied");
        };
    return "#"
        + id
        + " p"
        + process
        + " "
        + what
        + " ["
        + called
        + ", "
        + (indeterminate() ? "never returned" : Long.toString(returned))
        + "]";
  }

  private static String show(String v) {
    return v == null ? "absent" : v.length() > 24 ? v.substring(0, 21) + "..." : v;
  }
}
